#!/usr/bin/env bash
# A real OpenID Connect provider for the federated sign-in tests: oidc-provider-mock (PyPI), in a
# virtual environment of its own, on a free loopback port.
#
#   bash scripts/oidc-provider-mock.sh install      # once: the venv (OIDC_PROVIDER_MOCK_VENV)
#   url=$(bash scripts/oidc-provider-mock.sh start /tmp/opm)   # prints http://127.0.0.1:<port>
#   bash scripts/oidc-provider-mock.sh stop /tmp/opm
#
# It requires a nonce in every authorization request, as the server always sends one; its issuer is
# the URL printed (it follows the Host header, so always use that exact host and port).
set -euo pipefail
# shellcheck source=lib/test-service.sh
source "$(dirname "$0")/lib/test-service.sh"

version=0.3.4
venv=${OIDC_PROVIDER_MOCK_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/actionlinks/oidc-provider-mock-$version}

case "${1:-}" in
install)
    if [ ! -x "$venv/bin/oidc-provider-mock" ]; then
        echo "installing oidc-provider-mock $version (pip, in $venv)"
        mkdir -p "$(dirname "$venv")"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet "oidc-provider-mock==$version"
    fi
    ;;
start)
    directory=${2:?usage: oidc-provider-mock.sh start DIRECTORY}
    mkdir -p "$directory"
    # Its own session, output to a file and no terminal: `$(... start ...)` returns at once.
    setsid "$venv/bin/oidc-provider-mock" --host 127.0.0.1 --port 0 --require-nonce true \
        </dev/null >"$directory/log" 2>&1 &
    echo $! >"$directory/pid"
    await_url "$directory" 'http://127\.0\.0\.1:[0-9]*' 120 "oidc-provider-mock"
    ;;
stop)
    directory=${2:?usage: oidc-provider-mock.sh stop DIRECTORY}
    stop_service "$directory"
    ;;
*)
    echo "usage: oidc-provider-mock.sh install | start DIRECTORY | stop DIRECTORY" >&2
    exit 64
    ;;
esac
