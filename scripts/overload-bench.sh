#!/usr/bin/env bash
# Latency under overload (issue 47, item 4): issuing on SQLite saturated by wrk at 64, 256 and 1,024
# connections (the last at the default `server.maximumConnections`), while one-connection probes
# measure `/healthz` and the apple-app-site-association file beside it, and the server's resident
# memory is sampled. A measurement, not a test: it prints the table and exits 0.
#
#   bash scripts/overload-bench.sh             # builds release, installs wrk/nginx/curl if missing
#   SKIP_BUILD=1 bash scripts/overload-bench.sh
#
# Per load level, for the issuing run and each probe run at the same time: requests/s, p50, p99,
# the slowest request, errors (non-2xx and socket errors: connect, read, write, timeout), and the
# server's peak RSS so far. `server.headerTimeout` is 10 s: wrk's --timeout is set past it, so a
# request that waits for it shows as a slowest request near 10 s rather than as a wrk timeout.
#
# Settings (environment): DURATION (10s), WARMUP (3s), LEVELS ("64 256 1024"), THREADS (2), PORT
# (18480), SKIP_BUILD=1, ACTIONLINKS_BIN, BENCH_CONFIG, BENCH_WWW, KEEP_TMP=1.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
LEVELS=${LEVELS:-"64 256 1024"}
THREADS=${THREADS:-2}
PORT=${PORT:-18480}
BENCH_CONFIG=${BENCH_CONFIG:-config/actionlinks.yaml}
BENCH_WWW=${BENCH_WWW:-www}
KEEP_TMP=${KEEP_TMP:-0}

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'overload-bench: %s\n' "$*" >&2; exit 2; }
# shellcheck source=lib/wrk-bench.sh
source scripts/lib/wrk-bench.sh

ensure_wrk_nginx_curl
release_binary
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/actionlinks-overload.XXXXXX")
pids=()
cleanup() {
    local status=$?
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [ "$KEEP_TMP" = 1 ]; then log "kept $tmp"; else rm -rf "$tmp"; fi
    exit "$status"
}
trap cleanup EXIT

ACTIONLINKS_SERVER_PORT="$PORT" ACTIONLINKS_DATA_DIRECTORY="$tmp/data" ACTIONLINKS_STORE="sqlite:$tmp/data/actionlinks.sqlite" \
    ACTIONLINKS_LINK_DOMAINS="http://localhost:$PORT" \
    ACTIONLINKS_LIMITS_SENDS_PER_ADDRESS_PER_HOUR=1000000 ACTIONLINKS_LIMITS_SENDS_PER_IP_PER_HOUR=100000000 \
    "$BIN" serve --config "$BENCH_CONFIG" --www "$BENCH_WWW" --log-level warning >"$tmp/server.log" 2>&1 &
server_pid=$!
pids+=("$server_pid")
base="http://127.0.0.1:$PORT"
wait_for "$base/healthz" "$server_pid" "actionlinks serve"

# wrk's numbers for one run: requests/s p50 p99 max errors.
numbers() { # file
    local file=$1 non2xx errors
    non2xx=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$file")
    errors=$(awk '/Socket errors:/ { gsub(",", ""); print $4 + $6 + $8 + $10 }' "$file")
    printf '%s %s %s %s %s\n' \
        "$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$file")" \
        "$(to_ms "$(awk '$1 == "50%" { print $2 }' "$file")")" \
        "$(to_ms "$(awk '$1 == "99%" { print $2 }' "$file")")" \
        "$(to_ms "$(awk '$1 == "Latency" { print $4; exit }' "$file")")" \
        "$((${non2xx:-0} + ${errors:-0}))"
}

rows=()
for level in $LEVELS; do
    threads=$THREADS
    [ "$level" -ge "$threads" ] || threads=$level
    log "issuing at $level connections: warm-up $WARMUP, then $DURATION with the probes beside it"
    wrk -t"$threads" -c"$level" -d"$WARMUP" -s scripts/load/send-oob-code.lua "$base/v1/accounts:sendOobCode" -- EMAIL_SIGNIN 5000 "o$level" >/dev/null
    wrk -t"$threads" -c"$level" -d"$DURATION" --timeout 15s --latency -s scripts/load/send-oob-code.lua \
        "$base/v1/accounts:sendOobCode" -- EMAIL_SIGNIN 5000 "o$level" >"$tmp/issue-$level.txt" &
    issuing=$!
    sleep 1
    probe_duration=$(awk -v d="${DURATION%s}" 'BEGIN { printf "%ds", (d > 3 ? d - 2 : 1) }')
    wrk -t1 -c1 -d"$probe_duration" --timeout 15s --latency "$base/healthz" >"$tmp/healthz-$level.txt" &
    healthz=$!
    wrk -t1 -c1 -d"$probe_duration" --timeout 15s --latency "$base/.well-known/apple-app-site-association" >"$tmp/aasa-$level.txt"
    wait "$healthz" "$issuing"
    rss=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$server_pid/status")
    for kind in issue healthz aasa; do
        read -r r p50 p99 max errors <<<"$(numbers "$tmp/$kind-$level.txt")"
        rows+=("$(printf '| %-5s | %-27s | %9s | %8s | %8s | %9s | %6s | %8s |' "$level" "$kind" "$r" "$p50" "$p99" "$max" "$errors" "$(mb "$rss")")")
    done
done

echo
echo "ActionLinks under overload — $(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -m), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "binary: $BIN; SQLite; issuing = sendOobCode + returnOobLink (EMAIL_SIGNIN), probes one connection each"
echo
echo "| conns | run                         | requests/s |  p50 ms |  p99 ms |  max ms | errors | peak RSS MB |"
echo "|-------|-----------------------------|-----------:|--------:|--------:|--------:|-------:|------------:|"
printf '%s\n' "${rows[@]}"
