#!/usr/bin/env bash
# A second real OpenID Connect provider for the federated sign-in tests: django-oidc-provider (PyPI)
# in the one-file Django project Tests/DjangoOIDCProvider/provider.py, in a virtual environment of its
# own, on a free loopback port. Its ID tokens carry no profile (served at /userinfo) and its token
# endpoint reads HTTP Basic credentials without form-decoding them.
#
#   bash scripts/django-oidc-provider.sh install      # once: the venv (DJANGO_OIDC_PROVIDER_VENV)
#   url=$(bash scripts/django-oidc-provider.sh start /tmp/dop)   # prints http://127.0.0.1:<port>/openid
#   bash scripts/django-oidc-provider.sh stop /tmp/dop
#
# The URL printed is its issuer. DIRECTORY holds its database; start it on a new directory.
set -euo pipefail
# shellcheck source=lib/test-service.sh
source "$(dirname "$0")/lib/test-service.sh"
cd "$(dirname "$0")/.."

requirements=Tests/DjangoOIDCProvider/requirements.txt
version=$(sha256sum "$requirements" | cut -c1-12)
venv=${DJANGO_OIDC_PROVIDER_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/actionlinks/django-oidc-provider-$version}

case "${1:-}" in
install)
    if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import django, oidc_provider" >/dev/null 2>&1; then
        echo "installing django-oidc-provider (pip, in $venv)"
        mkdir -p "$(dirname "$venv")"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet -r "$requirements"
    fi
    ;;
start)
    directory=${2:?usage: django-oidc-provider.sh start DIRECTORY}
    mkdir -p "$directory"
    # Its own session, output to a file and no terminal: `$(... start ...)` returns at once.
    setsid "$venv/bin/python" Tests/DjangoOIDCProvider/provider.py "$directory" </dev/null >"$directory/log" 2>&1 &
    echo $! >"$directory/pid"
    # Its database is migrated before it prints its URL: allow two minutes on a loaded machine.
    await_url "$directory" '^http://127\.0\.0\.1:[0-9]*/openid$' 120 "django-oidc-provider"
    ;;
stop)
    directory=${2:?usage: django-oidc-provider.sh stop DIRECTORY}
    stop_service "$directory"
    ;;
*)
    echo "usage: django-oidc-provider.sh install | start DIRECTORY | stop DIRECTORY" >&2
    exit 64
    ;;
esac
