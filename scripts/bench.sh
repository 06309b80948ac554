#!/usr/bin/env bash
# The whole performance table in one run, with nginx and Foundation's URLComponents measured beside
# us, checked against the committed floors in Benchmarks/thresholds.txt.
#
#   bash scripts/bench.sh                      # builds release, installs wrk/nginx/PostgreSQL if missing
#   SKIP_BUILD=1 bash scripts/bench.sh         # measure the existing release build
#
# Rows (each a wrk run of DURATION after a WARMUP, on loopback; wrk, nginx, PostgreSQL and the server
# share the machine's cores, so compare rows of one run with each other):
#   AASA / assetlinks   GET of the association files, ours vs nginx serving the same bytes (AASA_ROUNDS
#                       alternating rounds each, medians compared)
#   action GET          GET /__/auth/action for a live password-reset code (parse, policy, store lookup,
#                       render), against nginx's AASA rate
#   issue (SQLite)      POST /v1/accounts:sendOobCode as the admin with returnOobLink (EMAIL_SIGNIN,
#                       5000 addresses per wrk thread, so most requests also retire the address's last code)
#   signInWithPassword  the API key's sign-in, scrypt with the default cost (SIGNIN_CONNECTIONS connections)
#   token refresh       POST /securetoken.googleapis.com/v1/token (form body, grant_type=refresh_token)
#   issue / confirm (PostgreSQL, one instance)
#                       sendOobCode to a new address each time, then signInWithEmailLink with every code
#                       issued (scripts/load/issue-and-record.lua, confirm.lua), and token refresh
#   link parser         the LinkParsing suite's floors check (Benchmarks/), ours vs URLComponents
#   RSS                 the SQLite server's peak resident set (VmHWM) over its whole run, sign-ins included
#
# It prints the table and the goals of issue 18 (PASS/MISS: a measurement of this machine), then
# checks every floor in Benchmarks/thresholds.txt and exits 1 if any is broken (a regression), 0
# otherwise, and 2 when it cannot measure.
#
# Settings (environment): DURATION (10s), WARMUP (3s), CONNECTIONS (64), THREADS (2), AASA_ROUNDS (3),
# SIGNIN_ACCOUNTS (8), SIGNIN_CONNECTIONS (2: one scrypt runs at a time, and a sign-in that waits past 10 s counts as an error), REFRESH_TOKENS (64), PORT (18380), NGINX_PORT (18381),
# PG_PORT (18390), SKIP_BUILD=1, SKIP_PARSER=1, SKIP_POSTGRES=1, ACTIONLINKS_BIN (another binary,
# for before/after), THRESHOLDS (the floors file), KEEP_TMP=1.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-2}
AASA_ROUNDS=${AASA_ROUNDS:-3}
SIGNIN_ACCOUNTS=${SIGNIN_ACCOUNTS:-8}
SIGNIN_CONNECTIONS=${SIGNIN_CONNECTIONS:-2}
REFRESH_TOKENS=${REFRESH_TOKENS:-64}
PORT=${PORT:-18380}
NGINX_PORT=${NGINX_PORT:-18381}
PG_PORT=${PG_PORT:-18390}
SKIP_BUILD=${SKIP_BUILD:-0}
SKIP_PARSER=${SKIP_PARSER:-0}
SKIP_POSTGRES=${SKIP_POSTGRES:-0}
KEEP_TMP=${KEEP_TMP:-0}
THRESHOLDS=${THRESHOLDS:-Benchmarks/thresholds.txt}
PROJECT=demo-actionlinks
KEY=demo-api-key

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'bench: %s\n' "$*" >&2; exit 2; }
# shellcheck source=lib/wrk-bench.sh
source scripts/lib/wrk-bench.sh

# --- tools and build -------------------------------------------------------------------------

ensure_wrk_nginx_curl
if [ "$SKIP_POSTGRES" != 1 ]; then bash scripts/install-test-dependencies.sh >/dev/null; fi
[ -f "$THRESHOLDS" ] || die "no floors file at $THRESHOLDS"

if [ "$SKIP_BUILD" != 1 ]; then
    log "building actionlinks (release)"
    swift build -c release --product actionlinks >&2
fi
BIN=${ACTIONLINKS_BIN:-"$(swift build -c release --show-bin-path)/actionlinks"}
CUSTOM_BIN=${ACTIONLINKS_BIN:-}
unset ACTIONLINKS_BIN # the server refuses ACTIONLINKS_ variables that name no configuration key
[ -x "$BIN" ] || die "no release build at $BIN (run without SKIP_BUILD=1)"
for port in "$PORT" "$NGINX_PORT"; do
    if curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$port/"; then die "port $port is already in use; set PORT / NGINX_PORT"; fi
done

# --- processes and cleanup -------------------------------------------------------------------

tmp=$(mktemp -d "${TMPDIR:-/tmp}/actionlinks-bench.XXXXXX")
chmod 755 "$tmp" # nginx workers and PostgreSQL may run as another user when this runs as root
pids=()
cleanup() {
    local status=$?
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    [ "$SKIP_POSTGRES" = 1 ] || bash scripts/postgres-test-cluster.sh stop "$tmp/pg" >/dev/null 2>&1 || true
    if [ "$KEEP_TMP" = 1 ]; then log "kept $tmp"; else rm -rf "$tmp"; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

server_pid=""
start_server() { # name store data
    env ACTIONLINKS_SERVER_PORT="$PORT" ACTIONLINKS_DATA_DIRECTORY="$3" ACTIONLINKS_STORE="$2" \
        ACTIONLINKS_LINK_DOMAINS="http://localhost:$PORT" \
        ACTIONLINKS_LIMITS_SENDS_PER_ADDRESS_PER_HOUR=1000000 ACTIONLINKS_LIMITS_SENDS_PER_IP_PER_HOUR=100000000 \
        "$BIN" serve --config config/actionlinks.yaml --www www --log-level warning >"$tmp/$1.log" 2>&1 &
    server_pid=$!
    pids+=("$server_pid")
    wait_for "http://127.0.0.1:$PORT/healthz" "$server_pid" "actionlinks serve ($1)"
}
stop_server() {
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
}

base="http://127.0.0.1:$PORT"
post() { # path json [header]
    curl -fsS -X POST -H 'Content-Type: application/json' ${3:+-H "$3"} --data "$2" "$base$1"
}
admin() { post "$1" "$2" "Authorization: Bearer owner"; }
json_field() { grep -o "\"$1\":\"[^\"]*\"" | head -1 | cut -d'"' -f4; } # one line, even for a body without a newline

# --- measuring -------------------------------------------------------------------------------

cpu_ticks() { awk '{ sum += $14 + $15 } END { print sum + 0 }' "$@" 2>/dev/null; }
tick=$(getconf CLK_TCK)
nginx_pid=""
nginx_workers() { awk -v parent="$nginx_pid" '$4 == parent { printf "/proc/%s/stat ", $1 }' /proc/[0-9]*/stat 2>/dev/null; }

declare -A rps p50 p99 bad cpu_us
run() { # name connections url [wrk script args...]
    local name=$1 connections=$2 url=$3
    shift 3
    local script=() extra=()
    if [ $# -gt 0 ]; then script=(-s "$1"); shift; fi
    if [ $# -gt 0 ]; then extra=(-- "$@"); fi
    local threads=$THREADS
    [ "$connections" -ge "$threads" ] || threads=$connections
    log "$name: warm-up $WARMUP, then $DURATION"
    [ "$WARMUP" = 0s ] || wrk -t"$threads" -c"$connections" -d"$WARMUP" "${script[@]}" "$url" "${extra[@]}" >/dev/null
    local measured=("/proc/$server_pid/stat")
    [ "${name#nginx}" = "$name" ] || read -r -a measured <<<"$(nginx_workers)"
    local before after requests
    before=$(cpu_ticks "${measured[@]}")
    wrk -t"$threads" -c"$connections" -d"$DURATION" --timeout 10s --latency "${script[@]}" "$url" "${extra[@]}" >"$tmp/wrk-$name.txt"
    after=$(cpu_ticks "${measured[@]}")
    requests=$(awk '/requests in/ { print $1 }' "$tmp/wrk-$name.txt")
    cpu_us[$name]=$(awk -v t=$((after - before)) -v hz="$tick" -v n="$requests" 'BEGIN { if (n > 0) printf "%.0f", t * 1e6 / hz / n; else print "n/a" }')
    rps[$name]=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$tmp/wrk-$name.txt")
    p50[$name]=$(to_ms "$(awk '$1 == "50%" { print $2 }' "$tmp/wrk-$name.txt")")
    p99[$name]=$(to_ms "$(awk '$1 == "99%" { print $2 }' "$tmp/wrk-$name.txt")")
    local non2xx errors
    non2xx=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$tmp/wrk-$name.txt")
    errors=$(awk '/Socket errors:/ { gsub(",", ""); print $4 + $6 + $8 + $10 }' "$tmp/wrk-$name.txt")
    bad[$name]=$((${non2xx:-0} + ${errors:-0}))
}

# Alternating rounds of a pair (nginx, ours); each side's median round stands for it.
declare -A rounds
median_of() { # name
    local name=$1 best
    best=$(for round in $(seq "$AASA_ROUNDS"); do echo "${rps[$name#$round]} $round"; done | sort -n | awk '{ r[NR] = $2 } END { print r[int((NR + 1) / 2)] }')
    rounds[$name]=$(for round in $(seq "$AASA_ROUNDS"); do printf '%s ' "${rps[$name#$round]}"; done)
    for field in rps p50 p99 cpu_us; do
        declare -n table=$field
        table[$name]=${table[$name#$best]}
    done
    bad[$name]=$(for round in $(seq "$AASA_ROUNDS"); do echo "${bad[$name#$round]}"; done | awk '{ s += $1 } END { print s + 0 }')
}

# --- 1. SQLite: association files, the action page, issuing, sign-in, refresh -----------------

log "SQLite: starting actionlinks serve on $base"
start_server sqlite "sqlite:$tmp/sqlite/actionlinks.sqlite" "$tmp/sqlite"
sqlite_pid=$server_pid
( while kill -0 "$sqlite_pid" 2>/dev/null; do
    awk '$1 == "VmRSS:" { print $2 }' "/proc/$sqlite_pid/status" 2>/dev/null || true
    sleep 0.2
done ) >"$tmp/rss.samples" &
pids+=($!)

mkdir -p "$tmp/nginx/html/.well-known" "$tmp/nginx/temp"
curl -fsS "$base/.well-known/apple-app-site-association" -o "$tmp/nginx/html/.well-known/apple-app-site-association"
curl -fsS "$base/.well-known/assetlinks.json" -o "$tmp/nginx/html/.well-known/assetlinks.json"
chmod -R a+rX "$tmp/nginx"
cat >"$tmp/nginx/nginx.conf" <<EOF
# Generated by scripts/bench.sh: a plain static-file nginx, one worker per core.
worker_processes auto;
daemon off;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    client_body_temp_path $tmp/nginx/temp/body;
    proxy_temp_path $tmp/nginx/temp/proxy;
    fastcgi_temp_path $tmp/nginx/temp/fastcgi;
    uwsgi_temp_path $tmp/nginx/temp/uwsgi;
    scgi_temp_path $tmp/nginx/temp/scgi;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        root $tmp/nginx/html;
        location /.well-known/ { types { } default_type application/json; }
    }
}
EOF
"$NGINX" -t -q -p "$tmp/nginx" -e "$tmp/nginx/error.log" -c "$tmp/nginx/nginx.conf"
"$NGINX" -p "$tmp/nginx" -e "$tmp/nginx/error.log" -c "$tmp/nginx/nginx.conf" &
nginx_pid=$!
pids+=("$nginx_pid")
nginx_base="http://127.0.0.1:$NGINX_PORT"
wait_for "$nginx_base/.well-known/assetlinks.json" "$nginx_pid" nginx
for file in apple-app-site-association assetlinks.json; do
    curl -fsS "$nginx_base/.well-known/$file" | cmp -s - "$tmp/nginx/html/.well-known/$file" || die "nginx does not serve the same $file"
done

log "SQLite: a live code, $SIGNIN_ACCOUNTS password accounts, $REFRESH_TOKENS sessions"
admin "/v1/projects/$PROJECT/accounts" '{"email":"bench-reader@example.com","password":"bench-password-1"}' >/dev/null
link=$(admin /v1/accounts:sendOobCode '{"requestType":"PASSWORD_RESET","email":"bench-reader@example.com","returnOobLink":true}' | json_field oobLink)
[ -n "$link" ] || die "sendOobCode returned no oobLink"
action_url="$base/${link#*://*/}"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$action_url")" = 200 ] || die "the action page did not answer 200"
for i in $(seq 0 $((SIGNIN_ACCOUNTS - 1))); do
    admin "/v1/projects/$PROJECT/accounts" "{\"email\":\"bench-signin-$i@example.com\",\"password\":\"bench-password-1\"}" >/dev/null
done
make_sessions() { # file: anonymous sign-ups, no scrypt
    for _ in $(seq "$REFRESH_TOKENS"); do post "/v1/accounts:signUp?key=$KEY" '{"returnSecureToken":true}' | json_field refreshToken; done >"$1"
    [ "$(grep -c . "$1")" = "$REFRESH_TOKENS" ] || die "signUp did not return $REFRESH_TOKENS refresh tokens"
}
make_sessions "$tmp/refresh-sqlite.txt"

for round in $(seq "$AASA_ROUNDS"); do
    run "nginx-aasa#$round" "$CONNECTIONS" "$nginx_base/.well-known/apple-app-site-association"
    run "aasa#$round" "$CONNECTIONS" "$base/.well-known/apple-app-site-association"
    run "nginx-assetlinks#$round" "$CONNECTIONS" "$nginx_base/.well-known/assetlinks.json"
    run "assetlinks#$round" "$CONNECTIONS" "$base/.well-known/assetlinks.json"
done
for name in nginx-aasa aasa nginx-assetlinks assetlinks; do median_of "$name"; done
run action-get "$CONNECTIONS" "$action_url"
run issue-sqlite "$CONNECTIONS" "$base/v1/accounts:sendOobCode" scripts/load/send-oob-code.lua EMAIL_SIGNIN 5000 bench
run refresh-sqlite "$CONNECTIONS" "$base/" scripts/load/refresh.lua "$tmp/refresh-sqlite.txt" "$KEY"
run signin-sqlite "$SIGNIN_CONNECTIONS" "$base/" scripts/load/sign-in.lua "$SIGNIN_ACCOUNTS" bench-signin bench-password-1 "$KEY"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$action_url")" = 200 ] || log "warning: the live code stopped answering 200 after the runs"
rss_hwm=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$sqlite_pid/status")
rss_peak=$(sort -n "$tmp/rss.samples" | tail -1)
stop_server

# --- 2. PostgreSQL, one instance: issuing, confirming, refresh ----------------------------------

if [ "$SKIP_POSTGRES" != 1 ]; then
    log "PostgreSQL: starting a cluster on 127.0.0.1:$PG_PORT"
    pg_url=$(bash scripts/postgres-test-cluster.sh start "$tmp/pg" "$PG_PORT" 2>"$tmp/pg-start.log") || { cat "$tmp/pg-start.log" >&2; die "cannot start PostgreSQL"; }
    PGPASSWORD=actionlinks-test psql -h 127.0.0.1 -p "$PG_PORT" -U actionlinks -d postgres -qc "CREATE DATABASE bench" >/dev/null
    start_server postgres "${pg_url%/*}/bench" "$tmp/pg-data"
    make_sessions "$tmp/refresh-pg.txt"
    run issue-pg "$CONNECTIONS" "$base/v1/accounts:sendOobCode" scripts/load/issue-and-record.lua "$tmp/codes" pg
    cat "$tmp"/codes-pg-*.txt | shuf --random-source=<(yes) >"$tmp/confirm-pg.txt"
    # The warm-up takes codes too: confirming runs for the measured part only.
    WARMUP_SAVED=$WARMUP
    WARMUP=0s
    WRK_THREADS=$THREADS run confirm-pg "$CONNECTIONS" "$base/" scripts/load/confirm.lua "$tmp/confirm-pg.txt" "$KEY"
    WARMUP=$WARMUP_SAVED
    run refresh-pg "$CONNECTIONS" "$base/" scripts/load/refresh.lua "$tmp/refresh-pg.txt" "$KEY"
    stop_server
fi

# --- 3. the link parser ------------------------------------------------------------------------

parser_rate="n/a"
parser_ratio="n/a"
if [ "$SKIP_PARSER" != 1 ]; then
    log "link parser: the LinkParsing floors (Benchmarks/, builds package-benchmark the first time)"
    (cd Benchmarks && swift package --disable-sandbox benchmark --target LinkParsing --filter 'Floors.*' --no-progress) >"$tmp/parser.txt" 2>&1 || true
    # The floors benchmark reports two custom metrics (columns: metric, p0, p25, p50, ...); p50 is
    # the median of its rounds, each itself the median of 31 alternated passes.
    parser_rate=$(awk -F'│' '/│ links per CPU second/ { gsub(/ /, "", $5); print $5 * 1000; exit }' "$tmp/parser.txt")
    parser_ratio=$(awk -F'│' '/│ speed-up over URLComponents/ { gsub(/ /, "", $5); printf "%.1f", $5 / 100; exit }' "$tmp/parser.txt")
    [ -n "$parser_rate" ] && [ -n "$parser_ratio" ] || { tail -30 "$tmp/parser.txt" >&2; log "warning: could not read the parser's floors"; parser_rate="n/a"; parser_ratio="n/a"; }
fi

# --- 4. the table ------------------------------------------------------------------------------

aasa_ratio=$(ratio "${rps[aasa]}" "${rps[nginx-aasa]}")
assetlinks_ratio=$(ratio "${rps[assetlinks]}" "${rps[nginx-assetlinks]}")
action_ratio=$(ratio "${rps[action-get]}" "${rps[nginx-aasa]}")
rss_mb=$(mb "$rss_hwm")

echo
echo "ActionLinks bench — $(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -m), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
[ -z "$CUSTOM_BIN" ] || echo "binary: $BIN (not necessarily built from that commit)"
echo "wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency after a $WARMUP warm-up (sign-in: -c$SIGNIN_CONNECTIONS); $("$NGINX" -v 2>&1 | sed 's/.*: //'); SQLite synchronous=FULL, WAL"
echo
printf '| %-44s | %11s | %8s | %8s | %6s | %10s | %-26s |\n' "path" "requests/s" "p50 ms" "p99 ms" "errors" "CPU us/req" "vs"
printf '|%s|%s:|%s:|%s:|%s:|%s:|%s|\n' "$(printf -- '-%.0s' {1..46})" "$(printf -- '-%.0s' {1..12})" "$(printf -- '-%.0s' {1..9})" "$(printf -- '-%.0s' {1..9})" "$(printf -- '-%.0s' {1..7})" "$(printf -- '-%.0s' {1..11})" "$(printf -- '-%.0s' {1..28})"
row() { # name label vs
    printf '| %-44s | %11s | %8s | %8s | %6s | %10s | %-26s |\n' "$2" "${rps[$1]:-n/a}" "${p50[$1]:-n/a}" "${p99[$1]:-n/a}" "${bad[$1]:-n/a}" "${cpu_us[$1]:-n/a}" "$3"
}
row nginx-aasa "nginx: AASA (static file)" "rounds: ${rounds[nginx-aasa]}"
row aasa "AASA" "${aasa_ratio}x nginx (rounds: ${rounds[aasa]})"
row nginx-assetlinks "nginx: assetlinks.json (static file)" "rounds: ${rounds[nginx-assetlinks]}"
row assetlinks "assetlinks.json" "${assetlinks_ratio}x nginx"
row action-get "GET /__/auth/action (SQLite)" "${action_ratio}x nginx AASA"
row issue-sqlite "sendOobCode + returnOobLink, SQLite" "links/s"
row signin-sqlite "signInWithPassword, SQLite (default scrypt)" "sign-ins/s"
row refresh-sqlite "token refresh, SQLite" "refreshes/s"
if [ "$SKIP_POSTGRES" != 1 ]; then
    row issue-pg "sendOobCode + returnOobLink, PostgreSQL" "links/s, one instance"
    row confirm-pg "signInWithEmailLink (confirm), PostgreSQL" "codes/s, one instance"
    row refresh-pg "token refresh, PostgreSQL" "refreshes/s"
fi
printf '| %-44s | %11s | %8s | %8s | %6s | %10s | %-26s |\n' "link parser (ActionCodeLink.parse, per core)" "$parser_rate" "" "" "" "" "${parser_ratio}x URLComponents"
printf '| %-44s | %11s | %8s | %8s | %6s | %10s | %-26s |\n' "server RSS, peak over the SQLite runs (VmHWM)" "${rss_mb} MB" "" "" "" "" "sampled peak $(mb "${rss_peak:-0}") MB"
echo
echo "CPU us/req: the server's user + system CPU time (nginx's workers' for nginx) per request; wrk excluded."
echo "A confirm error count above 0 means the recorded codes ran out before the run ended."

pass() { if awk "BEGIN { exit !($1) }" </dev/null; then echo PASS; else echo MISS; fi; }
num() { [[ "$1" =~ ^[0-9.]+$ ]] && echo "$1" || echo 0; }
echo
echo "goals (issue 18):"
printf '  %-4s AASA and assetlinks >= 1.0x nginx        (%sx, %sx)\n' "$(pass "$(num "$aasa_ratio") >= 1.0 && $(num "$assetlinks_ratio") >= 1.0")" "$aasa_ratio" "$assetlinks_ratio"
printf '  %-4s action GET >= 0.6x nginx                 (%sx)\n' "$(pass "$(num "$action_ratio") >= 0.6")" "$action_ratio"
printf '  %-4s SQLite issuing >= 10000/s, p99 < 10 ms   (%s/s, %s ms)\n' "$(pass "$(num "${rps[issue-sqlite]}") >= 10000 && $(num "${p99[issue-sqlite]}") < 10")" "${rps[issue-sqlite]}" "${p99[issue-sqlite]}"
if [ "$SKIP_POSTGRES" != 1 ]; then
    printf '  %-4s PostgreSQL issuing >= 8000/s            (%s/s)\n' "$(pass "$(num "${rps[issue-pg]}") >= 8000")" "${rps[issue-pg]}"
    printf '  %-4s PostgreSQL confirming >= 4000/s         (%s/s)\n' "$(pass "$(num "${rps[confirm-pg]}") >= 4000")" "${rps[confirm-pg]}"
fi
printf '  %-4s parser >= 2M links/s/core, >= 20x        (%s/s, %sx)\n' "$(pass "$(num "$parser_rate") >= 2000000 && $(num "$parser_ratio") >= 20")" "$parser_rate" "$parser_ratio"
printf '  %-4s RSS < 64 MB                              (%s MB)\n' "$(pass "$(num "$rss_mb") < 64")" "$rss_mb"

# --- 5. the floors -----------------------------------------------------------------------------

declare -A measured=(
    [aasa_ratio]=$aasa_ratio [assetlinks_ratio]=$assetlinks_ratio [action_ratio]=$action_ratio
    [issue_sqlite_per_second]=${rps[issue-sqlite]} [issue_sqlite_p99_ms]=${p99[issue-sqlite]}
    [signin_sqlite_per_second]=${rps[signin-sqlite]} [refresh_sqlite_per_second]=${rps[refresh-sqlite]}
    [issue_postgres_per_second]=${rps[issue-pg]:-n/a} [confirm_postgres_per_second]=${rps[confirm-pg]:-n/a}
    [refresh_postgres_per_second]=${rps[refresh-pg]:-n/a}
    [parser_links_per_second]=$parser_rate [parser_ratio]=$parser_ratio [rss_mb]=$rss_mb
)
echo
echo "floors ($THRESHOLDS):"
broken=0
while read -r name kind limit; do
    [ -n "$name" ] && [ "${name:0:1}" != "#" ] || continue
    value=${measured[$name]:-n/a}
    if [ "$value" = n/a ]; then printf '  skip %-30s (not measured)\n' "$name"; continue; fi
    if [ "$kind" = min ]; then ok=$(pass "$value >= $limit"); else ok=$(pass "$value <= $limit"); fi
    [ "$ok" = PASS ] && verdict=ok || { verdict=BROKEN; broken=$((broken + 1)); }
    printf '  %-6s %-30s %s %s %s\n' "$verdict" "$name" "$value" "$([ "$kind" = min ] && echo '>=' || echo '<=')" "$limit"
done <"$THRESHOLDS"
for name in "${!bad[@]}"; do
    [[ "$name" == *"#"* ]] && continue
    if [ "${bad[$name]}" != 0 ] && [ "$name" != confirm-pg ]; then echo "  WARNING: $name had ${bad[$name]} errors or non-2xx answers"; fi
done
if [ "$broken" -gt 0 ]; then
    echo "bench: $broken floor(s) broken: a regression (or a much busier machine; run again to tell)" >&2
    exit 1
fi
exit 0
