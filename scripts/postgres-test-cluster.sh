#!/usr/bin/env bash
# A throw-away PostgreSQL cluster on loopback, for the tests and benchmarks.
#
#   bash scripts/postgres-test-cluster.sh start DIR PORT   # prints the store URL on stdout
#   bash scripts/postgres-test-cluster.sh stop DIR         # fast shutdown (sessions are ended)
#   bash scripts/postgres-test-cluster.sh discard DIR      # immediate shutdown, for a cluster about to be deleted
#   bash scripts/postgres-test-cluster.sh kill DIR         # SIGKILL the postmaster (a crash)
#
# DIR holds the cluster (data/, socket/, log); it is created if missing and reused if it holds a
# cluster already. With SSL=1 at its creation, the cluster also accepts TLS with a self-signed
# certificate for localhost / 127.0.0.1 (DIR/server.crt, the file to trust). The server listens on 127.0.0.1:PORT only and asks for a password (SCRAM). The
# role and database are both `actionlinks`, the password `actionlinks-test`.
# With SOCKET=<folder>, it listens on no TCP address at all, only on <folder>/.s.PGSQL.PORT (Cloud
# SQL's form on Cloud Run: /cloudsql/PROJECT:REGION:INSTANCE), and prints libpq's socket URL
# (postgres://actionlinks:actionlinks-test@:PORT/actionlinks?host=<folder>).
#
# PostgreSQL refuses to run as root: when this script runs as root it runs the server as the
# `postgres` user that Debian's package creates (or creates an `actionlinks-pg` user if there is
# none). It needs Debian's `postgresql` package (scripts/install-test-dependencies.sh installs it).
set -euo pipefail

command=${1:-}
dir=${2:-}
[ -n "$command" ] && [ -n "$dir" ] || { echo "usage: $0 start DIR PORT | stop DIR | discard DIR | kill DIR" >&2; exit 64; }

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
[ -n "$bindir" ] && [ -x "$bindir/pg_ctl" ] || {
    echo "postgres-test-cluster: PostgreSQL is not installed (apt-get install postgresql, or run scripts/install-test-dependencies.sh)" >&2
    exit 1
}

runner=()
owner=$(id -un)
if [ "$(id -u)" -eq 0 ]; then
    if id postgres >/dev/null 2>&1; then
        owner=postgres
    else
        id actionlinks-pg >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin actionlinks-pg
        owner=actionlinks-pg
    fi
    runner=(runuser -u "$owner" --)
fi
as_owner() { "${runner[@]}" "$@"; }

case "$command" in
start)
    port=${3:?usage: $0 start DIR PORT}
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        mkdir -p "$dir/socket"
        printf 'actionlinks-test\n' >"$dir/pwfile"
        chown -R "$owner" "$dir"
        chmod 700 "$dir"
        as_owner test -w "$dir" || {
            echo "postgres-test-cluster: the $owner user cannot write to $dir (a parent folder is not searchable by others?); use a folder such as /tmp/actionlinks-pg" >&2
            exit 1
        }
        as_owner "$bindir/initdb" -D "$dir/data" -U actionlinks --pwfile="$dir/pwfile" --auth=scram-sha-256 -E UTF8 \
            --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    if [ "${SSL:-0}" = 1 ] && [ ! -f "$dir/server.crt" ]; then
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
            -keyout "$dir/server.key" -out "$dir/server.crt" >/dev/null 2>&1
        chown "$owner" "$dir/server.key" "$dir/server.crt"
        chmod 600 "$dir/server.key"
        chmod 644 "$dir/server.crt"
    fi
    tls=""
    [ -f "$dir/server.crt" ] && tls="-c ssl=on -c ssl_cert_file=$dir/server.crt -c ssl_key_file=$dir/server.key"
    listen=127.0.0.1
    sockets=$dir/socket
    host=127.0.0.1
    if [ -n "${SOCKET:-}" ]; then
        mkdir -p "$SOCKET"
        chown "$owner" "$SOCKET"
        # The whole path must be searchable by the owner; the socket is its only way in.
        listen=""
        sockets=$SOCKET
        host=$SOCKET
    fi
    as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 \
        -o "-c listen_addresses='$listen' -p $port -k '$sockets' -c max_connections=600 -c shared_buffers=128MB $tls" start >&2 ||
        { tail -n 20 "$dir/log" >&2; exit 1; }
    if ! PGPASSWORD=actionlinks-test "$bindir/psql" -h "$host" -p "$port" -U actionlinks -d postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname = 'actionlinks'" | grep -q 1; then
        PGPASSWORD=actionlinks-test "$bindir/psql" -h "$host" -p "$port" -U actionlinks -d postgres -qc "CREATE DATABASE actionlinks" >&2
    fi
    if [ -n "${SOCKET:-}" ]; then
        echo "postgres://actionlinks:actionlinks-test@:$port/actionlinks?host=$SOCKET"
    else
        echo "postgres://actionlinks:actionlinks-test@127.0.0.1:$port/actionlinks"
    fi
    ;;
stop)
    [ -f "$dir/data/postmaster.pid" ] || exit 0
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >&2
    ;;
discard)
    # For a cluster about to be deleted: no shutdown checkpoint (a fast stop took 4-35 s under load).
    [ -f "$dir/data/postmaster.pid" ] || exit 0
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >&2
    ;;
kill)
    [ -f "$dir/data/postmaster.pid" ] || exit 0
    kill -9 "$(head -n 1 "$dir/data/postmaster.pid")"
    ;;
*)
    echo "usage: $0 start DIR PORT | stop DIR | discard DIR | kill DIR" >&2
    exit 64
    ;;
esac
