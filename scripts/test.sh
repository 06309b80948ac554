#!/usr/bin/env bash
# Runs the whole test suite as CI does: installs what the tests need beyond Swift, starts a
# throw-away PostgreSQL cluster on loopback for the PostgreSQL store tests (POSTGRES_TEST_URL), two
# OpenID Connect providers for the federated sign-in tests (OIDC_PROVIDER_MOCK_URL and
# DJANGO_OIDC_PROVIDER_URL) and a SAML identity provider for the SAML ones (SAML_IDP_URL), runs
# `swift test` (arguments are passed on, e.g. --filter Stores), and stops them.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-test-dependencies.sh
# The tests run `/usr/bin/env python3`: the one with the tests' Python packages comes first.
PATH="$(bash scripts/test-python.sh bin):$PATH"
export PATH

cluster=$(mktemp -d /tmp/actionlinks-test-pg.XXXXXX)
# A free port below the kernel's ephemeral range, which outgoing connections never take (as
# LoopbackPort.free() chooses its ports).
port=${POSTGRES_TEST_PORT:-$(python3 -c '
import random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
while True:
    port = random.randrange(20000, max(21000, low))
    try:
        socket.socket().bind(("127.0.0.1", port))
        print(port)
        break
    except OSError:
        pass
')}
provider=$(mktemp -d /tmp/actionlinks-test-oidc.XXXXXX)
idp=$(mktemp -d /tmp/actionlinks-test-saml.XXXXXX)
django=$(mktemp -d /tmp/actionlinks-test-django-oidc.XXXXXX)
cleanup() {
    bash scripts/postgres-test-cluster.sh discard "$cluster" || true
    rm -rf "$cluster"
    bash scripts/oidc-provider-mock.sh stop "$provider" || true
    rm -rf "$provider"
    bash scripts/saml-idp.sh stop "$idp" || true
    rm -rf "$idp"
    bash scripts/django-oidc-provider.sh stop "$django" || true
    rm -rf "$django"
}
trap cleanup EXIT
POSTGRES_TEST_URL=$(bash scripts/postgres-test-cluster.sh start "$cluster" "$port")
export POSTGRES_TEST_URL
echo "PostgreSQL for the tests: ${POSTGRES_TEST_URL/:actionlinks-test@/:***@} (cluster in $cluster)"
# The OpenID Connect provider the federated sign-in tests sign in with (oidc-provider-mock).
OIDC_PROVIDER_MOCK_URL=$(bash scripts/oidc-provider-mock.sh start "$provider")
export OIDC_PROVIDER_MOCK_URL
echo "OpenID provider for the tests: $OIDC_PROVIDER_MOCK_URL"
# The SAML identity provider the SAML sign-in tests sign in with (pysaml2).
SAML_IDP_URL=$(bash scripts/saml-idp.sh start "$idp")
export SAML_IDP_URL
echo "SAML identity provider for the tests: $SAML_IDP_URL"
# A second one, whose ID tokens carry no profile (django-oidc-provider).
DJANGO_OIDC_PROVIDER_URL=$(bash scripts/django-oidc-provider.sh start "$django")
export DJANGO_OIDC_PROVIDER_URL
echo "Second OpenID provider for the tests: $DJANGO_OIDC_PROVIDER_URL"

# A crash's report names the crashed thread only, symbolicated fast: the whole process's took 152 s
# for the test binary's hundred threads, time a run near its limit does not have.
export SWIFT_BACKTRACE=${SWIFT_BACKTRACE:-enable=yes,interactive=no,threads=crashed,registers=none,images=none,symbolicate=fast}

# Every suite has a per-test time limit; this is the whole run's, well inside CI's 90 minutes (the
# build included), so that a hang that ignores cancellation still ends with a message.
limit=${ACTIONLINKS_TEST_TIMEOUT:-70m}
status=0
timeout --kill-after=60s "$limit" swift test "$@" || status=$?
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "error: swift test did not finish within $limit (ACTIONLINKS_TEST_TIMEOUT)" >&2
fi
exit "$status"
