#!/usr/bin/env bash
# A real SAML 2.0 identity provider for the SAML sign-in tests: pysaml2's IdP (Tests/SAMLIdP/idp.py,
# PyPI's pysaml2 in a virtual environment of its own, signing with Debian's xmlsec1), on a free
# loopback port.
#
#   bash scripts/saml-idp.sh install                 # once: the venv (SAML_IDP_VENV)
#   url=$(bash scripts/saml-idp.sh start /tmp/idp)   # prints http://127.0.0.1:<port>
#   bash scripts/saml-idp.sh stop /tmp/idp
#
# Its entity ID is <url>/metadata, where its metadata (and signing certificate) is. The service
# providers the tests use are registered at it below, all with the ACS URL
# https://links.test.example/__/auth/handler, each signing as its entity ID says.
set -euo pipefail
# shellcheck source=lib/test-service.sh
source "$(dirname "$0")/lib/test-service.sh"
cd "$(dirname "$0")/.."

requirements=Tests/SAMLIdP/requirements.txt
version=$(sha256sum "$requirements" | cut -c1-12)
venv=${SAML_IDP_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/actionlinks/saml-idp-$version}

case "${1:-}" in
install)
    if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import saml2" >/dev/null 2>&1; then
        echo "installing pysaml2 (pip, in $venv)"
        mkdir -p "$(dirname "$venv")"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet -r "$requirements"
    fi
    ;;
start)
    directory=${2:?usage: saml-idp.sh start DIRECTORY}
    mkdir -p "$directory"
    acs=https://links.test.example/__/auth/handler
    # Its own session, output to a file and no terminal: `$(... start ...)` returns at once.
    # PYTHONWARNINGS: pysaml2 imports a cipher mode that cryptography has deprecated.
    PYTHONWARNINGS=ignore setsid "$venv/bin/python" Tests/SAMLIdP/idp.py --directory "$directory" \
        --sp https://links.test.example "$acs" \
        --sp https://links.test.example/saml/response "$acs" sign=response \
        --sp https://links.test.example/saml/both "$acs" sign=both \
        --sp https://links.test.example/saml/unsigned "$acs" sign=none \
        --sp https://links.test.example/saml/sha1 "$acs" alg=sha1 \
        --sp https://other-sp.test.example "$acs" \
        </dev/null >"$directory/log" 2>&1 &
    echo $! >"$directory/pid"
    await_url "$directory" 'http://127\.0\.0\.1:[0-9]*' 120 "the SAML IdP"
    ;;
stop)
    directory=${2:?usage: saml-idp.sh stop DIRECTORY}
    stop_service "$directory"
    ;;
*)
    echo "usage: saml-idp.sh install | start DIRECTORY | stop DIRECTORY" >&2
    exit 64
    ;;
esac
