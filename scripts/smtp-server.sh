#!/usr/bin/env bash
# A real SMTP server for the ActionLinksSMTP tests: aiosmtpd (PyPI, pinned in
# Tests/SMTPServer/requirements.txt) in a virtual environment of its own, running
# Tests/SMTPServer/smtp_server.py on a free loopback port.
#
#   bash scripts/smtp-server.sh install                    # once: the venv (SMTP_SERVER_VENV)
#   url=$(bash scripts/smtp-server.sh start /tmp/smtp [--cert C --key K --auth-required ...])
#                                                          # prints smtp://127.0.0.1:<port>
#   bash scripts/smtp-server.sh stop /tmp/smtp
#   bash scripts/smtp-server.sh python                     # prints the venv's python (for the tests)
#
# The options after the directory are smtp_server.py's (its docstring lists them); what the server
# receives is written to the directory (events.jsonl, messages.jsonl, one .eml file per message).
set -euo pipefail
# shellcheck source=lib/test-service.sh
source "$(dirname "$0")/lib/test-service.sh"
cd "$(dirname "$0")/.."

requirements=Tests/SMTPServer/requirements.txt
version=$(sha256sum "$requirements" | cut -c1-12)
venv=${SMTP_SERVER_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/actionlinks/aiosmtpd-$version}

case "${1:-}" in
install)
    if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import aiosmtpd" >/dev/null 2>&1; then
        echo "installing aiosmtpd (pip, in $venv)"
        mkdir -p "$(dirname "$venv")"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet -r "$requirements"
    fi
    ;;
python)
    if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import aiosmtpd" >/dev/null 2>&1; then
        echo "aiosmtpd is not installed in $venv: run \`bash scripts/smtp-server.sh install\`" >&2
        exit 1
    fi
    echo "$venv/bin/python"
    ;;
start)
    directory=${2:?usage: smtp-server.sh start DIRECTORY [OPTIONS]}
    shift 2
    mkdir -p "$directory"
    # Its own session, output to a file and no terminal: `$(... start ...)` returns at once.
    setsid "$venv/bin/python" Tests/SMTPServer/smtp_server.py --directory "$directory" "$@" \
        </dev/null >"$directory/log" 2>&1 &
    echo $! >"$directory/pid"
    await_url "$directory" 'smtps\?://127\.0\.0\.1:[0-9]*' 120 "the SMTP server"
    ;;
stop)
    directory=${2:?usage: smtp-server.sh stop DIRECTORY}
    stop_service "$directory"
    ;;
*)
    echo "usage: smtp-server.sh install | python | start DIRECTORY [OPTIONS] | stop DIRECTORY" >&2
    exit 64
    ;;
esac
