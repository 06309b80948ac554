#!/usr/bin/env bash
# Accounts benchmark: how the admin's reads of accounts cost as the project grows (issue 35 item 8).
#
#   bash scripts/accounts-bench.sh
#   SKIP_BUILD=1 ACTIONLINKS_BIN=/tmp/actionlinks-before bash scripts/accounts-bench.sh   # another binary
#
# For each size in SIZES it starts a release `actionlinks serve` on SQLite on loopback with a fresh
# data directory, imports that many accounts (POST accounts:batchCreate as the admin, 1000 a call,
# in bodies of about 90 KB, so server.maximumBodyBytes is 1 MiB here;
# localIds user-0000000…, each with an address), then times each of these CALLS times, one at a
# time on one connection, and prints the median in ms:
#   query          accounts:query {limit: 10} (the first ten by localId)
#   query DESC     accounts:query {limit: 10, order: DESC} (the last ten)
#   query mid      accounts:query {limit: 10, offset: N/2}
#   count          accounts:query {returnUserInfo: false} (recordsCount only)
#   batchGet       GET accounts:batchGet?maxResults=20 (the first page)
#   batchGet mid   the same with nextPageToken = the middle account's localId
#   lookup id      accounts:lookup {localId: [the middle account]}
#   lookup email   accounts:lookup {email: [the middle account's address]}
# and the server's resident set: VmRSS once the import is done, and its peak (VmHWM, reset after the
# import through /proc/<pid>/clear_refs) over the reads. Every answer is checked (the right accounts,
# recordsCount = N). It is a measurement: it exits 0 whatever the numbers, non-zero only when it
# cannot measure (no build, a server that does not start, a wrong answer).
#
# Settings (environment): SIZES ("1000 200000"), CALLS (20), PORT (19280), SKIP_BUILD=1 (use the
# existing release build), ACTIONLINKS_BIN (measure another binary, e.g. a copy of an earlier build,
# for before/after), KEEP_TMP=1.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZES=${SIZES:-"1000 200000"}
CALLS=${CALLS:-20}
PORT=${PORT:-19280}
SKIP_BUILD=${SKIP_BUILD:-0}
KEEP_TMP=${KEEP_TMP:-0}

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'accounts-bench: %s\n' "$*" >&2; exit 1; }

# shellcheck source=lib/wrk-bench.sh
source scripts/lib/wrk-bench.sh

command -v python3 >/dev/null 2>&1 || die "python3 is needed"
release_binary

tmp=$(mktemp -d /tmp/actionlinks-accounts-bench.XXXXXX)
server_pid=""
cleanup() {
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    if [ "$KEEP_TMP" = 1 ]; then log "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

# The client: imports, times and checks, on one keep-alive connection. Prints "name median_ms" lines.
cat >"$tmp/client.py" <<'PYTHON'
import http.client, json, statistics, sys, time

port, action, count, calls = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
headers = {"Content-Type": "application/json", "Authorization": "Bearer owner"}

def call(method, path, body=None):
    connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
    reply = connection.getresponse()
    data = reply.read()
    if reply.status != 200:
        sys.exit(f"{method} {path}: HTTP {reply.status}: {data[:300]!r}")
    return json.loads(data)

def local_id(index): return f"user-{index:07d}"

if action == "import":
    for start in range(0, count, 1000):
        users = [{"localId": local_id(i), "email": f"{local_id(i)}@example.com", "displayName": f"User {i}"}
                 for i in range(start, min(start + 1000, count))]
        answer = call("POST", "/v1/projects/demo-actionlinks/accounts:batchCreate", {"users": users})
        if answer.get("error"):
            sys.exit(f"batchCreate refused {len(answer['error'])} users: {answer['error'][:3]}")
    sys.exit(0)

middle = count // 2
def ids(answer, key): return [user["localId"] for user in answer.get(key, [])]
query = "/v1/projects/demo-actionlinks/accounts:query"
cases = [
    ("query", "POST", query, {"limit": 10},
     lambda a: ids(a, "userInfo") == [local_id(i) for i in range(min(10, count))] and a["recordsCount"] == str(count)),
    ("query DESC", "POST", query, {"limit": 10, "order": "DESC"},
     lambda a: ids(a, "userInfo") == [local_id(i) for i in range(count - 1, max(count - 11, -1), -1)]),
    ("query mid", "POST", query, {"limit": 10, "offset": str(middle)},
     lambda a: ids(a, "userInfo") == [local_id(i) for i in range(middle, min(middle + 10, count))]),
    ("count", "POST", query, {"returnUserInfo": False},
     lambda a: a == {"recordsCount": str(count)}),
    ("batchGet", "GET", "/v1/projects/demo-actionlinks/accounts:batchGet?maxResults=20", None,
     lambda a: ids(a, "users") == [local_id(i) for i in range(min(20, count))]),
    ("batchGet mid", "GET", f"/v1/projects/demo-actionlinks/accounts:batchGet?maxResults=20&nextPageToken={local_id(middle)}", None,
     lambda a: ids(a, "users") == [local_id(i) for i in range(middle + 1, min(middle + 21, count))]),
    ("lookup id", "POST", "/v1/projects/demo-actionlinks/accounts:lookup", {"localId": [local_id(middle)]},
     lambda a: ids(a, "users") == [local_id(middle)]),
    ("lookup email", "POST", "/v1/projects/demo-actionlinks/accounts:lookup", {"email": [f"{local_id(middle)}@example.com"]},
     lambda a: ids(a, "users") == [local_id(middle)]),
]
for name, method, path, body, check in cases:
    answer = call(method, path, body)  # warm-up, and the check
    if not check(answer):
        sys.exit(f"{name}: unexpected answer {json.dumps(answer)[:400]}")
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        call(method, path, body)
        times.append((time.perf_counter() - start) * 1000)
    print(f"{name}\t{statistics.median(times):.2f}")
PYTHON

status_kb() { awk -v key="$1:" '$1 == key { print $2 }' "/proc/$server_pid/status"; }

declare -A median rss_after_import rss_peak_reads import_s
names=()
for size in $SIZES; do
    log "$size accounts: starting the server"
    data="$tmp/data-$size"
    env ACTIONLINKS_SERVER_PORT="$PORT" ACTIONLINKS_DATA_DIRECTORY="$data" ACTIONLINKS_STORE="sqlite:$data/actionlinks.sqlite" \
        ACTIONLINKS_LINK_DOMAINS="http://localhost:$PORT" ACTIONLINKS_SERVER_MAXIMUM_BODY_BYTES=1048576 \
        "$BIN" serve --config config/actionlinks.yaml --www www --log-level warning >"$tmp/server-$size.log" 2>&1 &
    server_pid=$!
    wait_for "http://127.0.0.1:$PORT/healthz" "$server_pid" "actionlinks serve"
    log "$size accounts: importing"
    start=$(date +%s.%N)
    python3 "$tmp/client.py" "$PORT" import "$size" 0 || die "the import failed"
    import_s[$size]=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    rss_after_import[$size]=$(status_kb VmRSS)
    echo 5 >"/proc/$server_pid/clear_refs" 2>/dev/null || log "cannot reset VmHWM: the peak includes the import"
    log "$size accounts: timing $CALLS calls of each read"
    python3 "$tmp/client.py" "$PORT" measure "$size" "$CALLS" >"$tmp/times-$size.txt" || die "a read failed"
    rss_peak_reads[$size]=$(status_kb VmHWM)
    while IFS=$'\t' read -r name ms; do
        median["$name/$size"]=$ms
        [ "$size" = "${SIZES%% *}" ] && names+=("$name")
    done <"$tmp/times-$size.txt"
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
done

echo
echo "$BIN; median of $CALLS calls, one at a time on one connection, SQLite; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
echo
header="| read (ms) |"
rule="|---|"
for size in $SIZES; do header+=" $size |"; rule+="---|"; done
echo "$header"
echo "$rule"
for name in "${names[@]}"; do
    row="| $name |"
    for size in $SIZES; do row+=" ${median["$name/$size"]} |"; done
    echo "$row"
done
row="| import (s) |"
for size in $SIZES; do row+=" ${import_s[$size]} |"; done
echo "$row"
row="| RSS after import (MB) |"
for size in $SIZES; do row+=" $(mb "${rss_after_import[$size]}") |"; done
echo "$row"
row="| peak RSS over the reads (MB) |"
for size in $SIZES; do row+=" $(mb "${rss_peak_reads[$size]}") |"; done
echo "$row"
