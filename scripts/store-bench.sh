#!/usr/bin/env bash
# Store benchmark: issuing and confirming links on SQLite (one instance) and on PostgreSQL (one
# instance, then two instances sharing the database), side by side in one run.
#
#   bash scripts/store-bench.sh
#
# For each setup it starts release `actionlinks serve` instance(s) on loopback, then runs wrk:
#   issue    POST /v1/accounts:sendOobCode (admin, returnOobLink, EMAIL_SIGNIN to a new address
#            each time); every acknowledged code is recorded (scripts/load/issue-and-record.lua)
#   confirm  POST /v1/accounts:signInWithEmailLink with those codes, each once (creates the
#            account, signs an ID token; scripts/load/confirm.lua)
# With two instances, two wrk processes run at once, one per instance, each with half the
# connections; their rates are added and the worse p99 is shown. PostgreSQL is a throw-away
# cluster (scripts/postgres-test-cluster.sh) with its default settings (fsync on, synchronous
# commit), and SQLite runs as shipped (WAL, synchronous=FULL). It is a measurement: it exits 0
# whatever the numbers, non-zero only when it cannot measure.
#
# Settings (environment): PORT (19180; instances use PORT and PORT+1), PG_PORT (19190),
# CONNECTIONS (64), DURATION (10s), SKIP_BUILD=1 (use the existing release build), ACTIONLINKS_BIN
# (measure another binary, e.g. a copy of an earlier build, for before/after), KEEP_TMP=1.
set -euo pipefail
cd "$(dirname "$0")/.."

PORT=${PORT:-19180}
PG_PORT=${PG_PORT:-19190}
CONNECTIONS=${CONNECTIONS:-64}
DURATION=${DURATION:-10s}
SKIP_BUILD=${SKIP_BUILD:-0}
KEEP_TMP=${KEEP_TMP:-0}

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'store-bench: %s\n' "$*" >&2; exit 1; }

command -v wrk >/dev/null 2>&1 || { log "installing wrk"; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null || die "cannot install wrk"; }
bash scripts/install-test-dependencies.sh >/dev/null

if [ "$SKIP_BUILD" != 1 ]; then
    log "building actionlinks (release)"
    swift build -c release --product actionlinks >&2
fi
BIN=${ACTIONLINKS_BIN:-$(swift build -c release --show-bin-path)/actionlinks}
unset ACTIONLINKS_BIN  # the server refuses ACTIONLINKS_ variables that name no configuration key
[ -x "$BIN" ] || die "no release build at $BIN"

tmp=$(mktemp -d /tmp/actionlinks-store-bench.XXXXXX)
chmod 755 "$tmp"  # the PostgreSQL cluster inside runs as another user when this runs as root
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    bash scripts/postgres-test-cluster.sh stop "$tmp/pg" >/dev/null 2>&1 || true
    if [ "$KEEP_TMP" = 1 ]; then log "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

log "starting PostgreSQL on 127.0.0.1:$PG_PORT"
pg_url=$(bash scripts/postgres-test-cluster.sh start "$tmp/pg" "$PG_PORT" 2>"$tmp/pg-start.log") || { cat "$tmp/pg-start.log" >&2; die "cannot start PostgreSQL"; }
pg_base=${pg_url%/*}
psql_run() { PGPASSWORD=actionlinks-test psql -h 127.0.0.1 -p "$PG_PORT" -U actionlinks -d postgres -qc "$1" >/dev/null; }

wait_for() { # url pid
    for _ in $(seq 1 300); do
        curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
        kill -0 "$2" 2>/dev/null || die "an instance exited; see $tmp/*.log"
        sleep 0.1
    done
    die "$1 did not answer within 30 s"
}

start_instance() { # name port store data
    env ACTIONLINKS_SERVER_PORT="$2" ACTIONLINKS_DATA_DIRECTORY="$4" ACTIONLINKS_STORE="$3" \
        ACTIONLINKS_LINK_DOMAINS="http://localhost:$PORT" \
        ACTIONLINKS_LIMITS_SENDS_PER_ADDRESS_PER_HOUR=1000000 ACTIONLINKS_LIMITS_SENDS_PER_IP_PER_HOUR=100000000 \
        "$BIN" serve --config config/actionlinks.yaml --www www --log-level warning >"$tmp/$1.log" 2>&1 &
    pids+=($!)
    wait_for "http://127.0.0.1:$2/healthz" "$!"
}

stop_instances() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    pids=()
}

ms() { # wrk duration -> ms
    awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n += 0; else if (v ~ /s$/) n *= 1000; printf "%.1f", n }'
}

# run_wrk phase setup ports... : one wrk per port at once, CONNECTIONS split between them.
run_wrk() {
    local phase=$1 setup=$2; shift 2
    local ports=("$@") n=${#ports[@]} i=0 wrk_pids=()
    local per=$((CONNECTIONS / n))
    for port in "${ports[@]}"; do
        local out="$tmp/wrk-$setup-$phase-$i.txt"
        if [ "$phase" = issue ]; then
            WRK_THREADS=1 wrk -t1 -c"$per" -d"$DURATION" --latency -s scripts/load/issue-and-record.lua \
                "http://127.0.0.1:$port/v1/accounts:sendOobCode" -- "$tmp/codes" "$setup$i" >"$out" 2>&1 &
        else
            WRK_THREADS=1 wrk -t1 -c"$per" -d"$DURATION" --latency -s scripts/load/confirm.lua \
                "http://127.0.0.1:$port/" -- "$tmp/confirm-$setup-$i.txt" >"$out" 2>&1 &
        fi
        wrk_pids+=($!)
        i=$((i + 1))
    done
    for pid in "${wrk_pids[@]}"; do wait "$pid"; done
    local rate=0 p99=0 errors=0
    for ((i = 0; i < n; i++)); do
        local out="$tmp/wrk-$setup-$phase-$i.txt"
        rate=$(awk -v a="$rate" '/Requests\/sec/ { printf "%.0f", a + $2 }' "$out")
        p99=$(awk -v a="$p99" -v b="$(ms "$(awk '$1 == "99%" { print $2 }' "$out")")" 'BEGIN { print (b > a ? b : a) }')
        errors=$((errors + $(awk '/Non-2xx/ { print $5 }' "$out" | tr -d '\n' || true) + 0))
    done
    printf '%s %s %s\n' "$rate" "$p99" "$errors"
}

# measure setup store ports... : issue, then confirm the recorded codes split between the instances.
results=()
measure() {
    local setup=$1; shift
    local ports=("$@")
    log "$setup: issuing for $DURATION"
    read -r issue_rate issue_p99 issue_errors < <(run_wrk issue "$setup" "${ports[@]}")
    cat "$tmp"/codes-"$setup"*-*.txt | shuf --random-source=<(yes) >"$tmp/all-$setup.txt"
    local total
    total=$(wc -l <"$tmp/all-$setup.txt")
    split -n "l/${#ports[@]}" -d "$tmp/all-$setup.txt" "$tmp/part-$setup-"
    local i=0
    for part in "$tmp"/part-"$setup"-*; do mv "$part" "$tmp/confirm-$setup-$i.txt"; i=$((i + 1)); done
    log "$setup: confirming for $DURATION ($total codes recorded)"
    read -r confirm_rate confirm_p99 confirm_errors < <(run_wrk confirm "$setup" "${ports[@]}")
    results+=("$(printf '| %s | %s | %s | %s | %s | %s | %s |' "$setup" "$issue_rate" "$issue_p99" "$issue_errors" "$confirm_rate" "$confirm_p99" "$confirm_errors")")
}

log "SQLite, one instance"
start_instance sqlite "$PORT" "sqlite:$tmp/sqlite-data/actionlinks.sqlite" "$tmp/sqlite-data"
measure sqlite-1 "$PORT"
stop_instances

log "PostgreSQL, one instance"
psql_run "CREATE DATABASE bench_one"
start_instance pg-one "$PORT" "$pg_base/bench_one" "$tmp/pg-one-data"
measure postgres-1 "$PORT"
stop_instances

log "PostgreSQL, two instances"
psql_run "CREATE DATABASE bench_two"
start_instance pg-two-a "$PORT" "$pg_base/bench_two" "$tmp/pg-two-data"
start_instance pg-two-b "$((PORT + 1))" "$pg_base/bench_two" "$tmp/pg-two-data"
measure postgres-2 "$PORT" "$((PORT + 1))"
stop_instances

echo
echo "wrk -c$CONNECTIONS -d$DURATION --latency (split across instances); $(nproc) cores shared by wrk, the instance(s) and PostgreSQL $(psql --version | awk '{print $3}')"
echo
echo "| setup | issue req/s | issue p99 ms | issue non-2xx | confirm req/s | confirm p99 ms | confirm non-2xx |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${results[@]}"
echo
echo "A confirm non-2xx count above 0 means the recorded codes ran out (or a confirmation failed: see the instance logs with KEEP_TMP=1)."
