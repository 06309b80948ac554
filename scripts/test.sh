#!/usr/bin/env bash
# Runs the whole test suite as CI does: installs what the tests need beyond Swift, starts a
# throw-away PostgreSQL cluster on loopback for the PostgreSQL store tests (POSTGRES_TEST_URL),
# runs `swift test` (arguments are passed on, e.g. --filter Stores), and stops the cluster.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-test-dependencies.sh

cluster=$(mktemp -d /tmp/actionlinks-test-pg.XXXXXX)
port=${POSTGRES_TEST_PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
cleanup() { bash scripts/postgres-test-cluster.sh stop "$cluster" || true; rm -rf "$cluster"; }
trap cleanup EXIT
POSTGRES_TEST_URL=$(bash scripts/postgres-test-cluster.sh start "$cluster" "$port")
export POSTGRES_TEST_URL
echo "PostgreSQL for the tests: ${POSTGRES_TEST_URL/:actionlinks-test@/:***@} (cluster in $cluster)"

swift test "$@"
