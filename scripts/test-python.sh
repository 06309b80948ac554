#!/usr/bin/env bash
# The tests' own Python packages in one virtual environment: firebase-admin and google-auth
# (Tests/FirebaseAdmin/requirements.txt), Tink (Tests/Tink/requirements.txt), Selenium and axe-core
# (Tests/Browser/requirements.txt). Debian 12's python3 refuses a system-wide pip install (PEP 668).
# The environment is named by a hash of the three files, so a changed pin gets a new one.
# scripts/test.sh puts its bin/ first on PATH, where the tests' `/usr/bin/env python3` finds it.
#
#   bash scripts/test-python.sh install                    # once (install-test-dependencies.sh runs it)
#   export PATH="$(bash scripts/test-python.sh bin):$PATH"  # before a `swift test` of your own
set -euo pipefail
cd "$(dirname "$0")/.."

requirements=(Tests/FirebaseAdmin/requirements.txt Tests/Tink/requirements.txt Tests/Browser/requirements.txt)
version=$(cat "${requirements[@]}" | sha256sum | cut -c1-12)
venv=${XDG_CACHE_HOME:-$HOME/.cache}/actionlinks/test-python-$version

case "${1:-}" in
install)
    if ! "$venv/bin/python3" -c "import firebase_admin, google.auth, tink, selenium, axe_selenium_python, axe_core_python" >/dev/null 2>&1; then
        echo "installing the tests' Python packages (pip, in $venv)"
        mkdir -p "$(dirname "$venv")"
        python3 -m venv "$venv"
        arguments=()
        for file in "${requirements[@]}"; do arguments+=(-r "$file"); done
        "$venv/bin/pip" install --quiet "${arguments[@]}"
    fi
    ;;
bin)
    echo "$venv/bin"
    ;;
*)
    echo "usage: test-python.sh install | bin" >&2
    exit 64
    ;;
esac
