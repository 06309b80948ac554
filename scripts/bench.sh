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
#   link parser         the LinkParsing suite's alternated passes (Benchmarks/), ours vs URLComponents
#   RSS                 the SQLite server's peak resident set (VmHWM) over its whole run, sign-ins included,
#                       with its anonymous and file-backed parts at the peak (sampled every 0.2 s), and the
#                       same split idle, before the first run
#   RSS, hashes at max  (HASH_MAX=1) a server with users.passwordHashConcurrency 64 under 64 sign-ins at once
#
# Every row is also stated as a ratio to something measured in the same run, so that it holds on a
# slower or busier machine: the static files and issuing against nginx's AASA, a refresh's and a
# sign-in's CPU time against one RSA-2048 signature's and one scrypt hash's (`openssl speed rsa2048`
# and `openssl kdf SCRYPT` at the server's cost, both on CPU time), confirming against issuing, the
# parser against URLComponents. The floors in Benchmarks/thresholds.txt are those ratios (absolute
# only for p99 and RSS, which have nothing to be compared with).
#
# It prints the table and the goals of issue 26 (PASS/MISS), then checks every floor in
# Benchmarks/thresholds.txt and exits 1 if any is broken (a regression), 0 otherwise, and 2 when it
# cannot measure.
#
# Settings (environment): DURATION (10s), WARMUP (3s), CONNECTIONS (64), THREADS (2), AASA_ROUNDS (3),
# SIGNIN_ACCOUNTS (8), SIGNIN_CONNECTIONS (2: one scrypt runs at a time, and a sign-in that waits past 10 s counts as an error), REFRESH_TOKENS (64), PORT (18380), NGINX_PORT (18381),
# PG_PORT (18390), SKIP_BUILD=1, SKIP_PARSER=1, SKIP_POSTGRES=1, HASH_MAX=1, ACTIONLINKS_BIN (another
# binary, for before/after), BENCH_CONFIG and BENCH_WWW (the configuration file and page folder it
# serves, config/actionlinks.yaml and www: an older binary takes its own commit's, which
# `git archive <commit> config www` gives), THRESHOLDS (the floors file), KEEP_TMP=1, TABLE (also
# write the table and goals to this file).
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
HASH_MAX=${HASH_MAX:-0}
TABLE=${TABLE:-}
BENCH_CONFIG=${BENCH_CONFIG:-config/actionlinks.yaml}
BENCH_WWW=${BENCH_WWW:-www}
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

# --- references: one RSA-2048 signature and one scrypt hash, on CPU time -------------------------

# The server's own signer (`actionlinks keys speed`: OpenSSL's libcrypto since issue 26, swift-crypto's
# BoringSSL before; as ID tokens are signed), from the binary measured or else this tree's release
# build; `openssl speed` is shown beside it. Both divide by CPU time.
signer_line=""
for candidate in "$BIN" "$(swift build -c release --show-bin-path 2>/dev/null)/actionlinks"; do
    if [ -x "$candidate" ] && signer_line=$("$candidate" keys speed --seconds 3 2>/dev/null); then break; fi
    signer_line=""
done
openssl_signs=$(openssl speed -seconds 3 -mr rsa2048 2>/dev/null | awk -F: '/^\+F2:/ { printf "%.0f", $4; exit }')
openssl_us=$(awk -v r="${openssl_signs:-0}" 'BEGIN { if (r > 0) printf "%.0f", 1e6 / r; else print "n/a" }')
if [ -n "$signer_line" ]; then
    rsa_us=$(sed -n 's/.*, \([0-9]*\) us each.*/\1/p' <<<"$signer_line")
    rsa_source="the server's signer (actionlinks keys speed)"
else
    rsa_us=$openssl_us
    rsa_source="openssl speed rsa2048 (no actionlinks keys speed in this binary)"
fi
[ -n "$rsa_us" ] && [ "$rsa_us" != n/a ] || die "could not measure an RSA-2048 signature"
# scrypt at the server's default cost (N=2^14, r=8, p=5: ActionLinksDomain/Security/PasswordHasher.swift), five runs.
scrypt_us=$( (TIMEFORMAT='%U %S'; time (for _ in 1 2 3 4 5; do
    openssl kdf -keylen 64 -kdfopt pass:bench-password-1 -kdfopt salt:0123456789abcdef -kdfopt n:16384 -kdfopt r:8 -kdfopt p:5 SCRYPT >/dev/null
done)) 2>&1 | awk 'END { printf "%.0f", ($1 + $2) * 1e6 / 5 }')
log "references: RSA-2048 signature ${rsa_us} us CPU ($rsa_source; openssl ${openssl_us} us), scrypt (ln=14, r=8, p=5) ${scrypt_us} us CPU"

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

# One flush to disk where the SQLite server keeps its database (the bench's temporary folder): a
# SQLite commit (synchronous=FULL, WAL) waits for one, so issuing's latency cannot go below it. The
# median, mean and p99 of 100 fdatasync calls after a 4 KiB write each.
read -r fsync_ms fsync_mean_ms fsync_p99_ms < <(python3 - "$tmp" <<'PYTHON' || echo "n/a n/a n/a"
import os, sys, time
path = os.path.join(sys.argv[1], "fsync-probe")
fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
times = []
for i in range(100):
    os.pwrite(fd, b"x" * 4096, (i % 16) * 4096)
    start = time.perf_counter()
    os.fdatasync(fd)
    times.append(time.perf_counter() - start)
os.close(fd)
os.unlink(path)
times.sort()
print(f"{times[49] * 1000:.2f} {sum(times) * 10:.2f} {times[98] * 1000:.2f}")
PYTHON
)
log "reference: one fdatasync in $tmp: median ${fsync_ms} ms, mean ${fsync_mean_ms} ms, p99 ${fsync_p99_ms} ms"
trap 'exit 130' INT TERM

server_pid=""
start_server() { # name store data [VAR=value...]
    env "${@:4}" ACTIONLINKS_SERVER_PORT="$PORT" ACTIONLINKS_DATA_DIRECTORY="$3" ACTIONLINKS_STORE="$2" \
        ACTIONLINKS_LINK_DOMAINS="http://localhost:$PORT" \
        ACTIONLINKS_LIMITS_SENDS_PER_ADDRESS_PER_HOUR=1000000 ACTIONLINKS_LIMITS_SENDS_PER_IP_PER_HOUR=100000000 \
        "$BIN" serve --config "$BENCH_CONFIG" --www "$BENCH_WWW" --log-level warning >"$tmp/$1.log" 2>&1 &
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

# PostgreSQL's processes (the postmaster and its children), when a cluster runs.
pg_stats() {
    local postmaster
    postmaster=$(head -1 "$tmp/pg/data/postmaster.pid" 2>/dev/null) || return 0
    awk -v parent="$postmaster" '$4 == parent { printf "/proc/%s/stat ", $1 }' /proc/[0-9]*/stat 2>/dev/null
    printf '/proc/%s/stat' "$postmaster"
}

declare -A rps p50 p99 bad cpu_us pg_us
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
    local postgres=()
    [ "${name%-pg}" = "$name" ] || read -r -a postgres <<<"$(pg_stats)"
    local before after requests pg_before=0 pg_after=0
    before=$(cpu_ticks "${measured[@]}")
    [ ${#postgres[@]} = 0 ] || pg_before=$(cpu_ticks "${postgres[@]}")
    wrk -t"$threads" -c"$connections" -d"$DURATION" --timeout 10s --latency "${script[@]}" "$url" "${extra[@]}" >"$tmp/wrk-$name.txt"
    after=$(cpu_ticks "${measured[@]}")
    [ ${#postgres[@]} = 0 ] || pg_after=$(cpu_ticks "${postgres[@]}")
    requests=$(awk '/requests in/ { print $1 }' "$tmp/wrk-$name.txt")
    cpu_us[$name]=$(awk -v t=$((after - before)) -v hz="$tick" -v n="$requests" 'BEGIN { if (n > 0) printf "%.0f", t * 1e6 / hz / n; else print "n/a" }')
    [ ${#postgres[@]} = 0 ] || pg_us[$name]=$(awk -v t=$((pg_after - pg_before)) -v hz="$tick" -v n="$requests" 'BEGIN { if (n > 0) printf "%.0f", t * 1e6 / hz / n; else print "n/a" }')
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
    awk '$1 == "VmRSS:" { rss = $2 } $1 == "RssAnon:" { anon = $2 } $1 == "RssFile:" { file = $2 } END { if (rss) print rss, anon, file }' "/proc/$sqlite_pid/status" 2>/dev/null || true
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
# The anonymous (heap, stacks, the libraries' relocated data) and file-backed (the binary's and
# libraries' pages, as the kernel maps them) parts: in the sample of the highest VmRSS (the two parts
# of the peak itself), each at its own sampled peak (they need not coincide), and in the first sample,
# taken as soon as the server answered, before any load.
read -r rss_peak_anon rss_peak_file < <(awk '$1 > m { m = $1; a = $2; f = $3 } END { print a + 0, f + 0 }' "$tmp/rss.samples")
read -r rss_idle rss_idle_anon rss_idle_file < <(head -1 "$tmp/rss.samples")
rss_anon=$(awk '$2 > m { m = $2 } END { print m + 0 }' "$tmp/rss.samples")
rss_file=$(awk '$3 > m { m = $3 } END { print m + 0 }' "$tmp/rss.samples")
stop_server

# --- 1b. RSS with users.passwordHashConcurrency at its maximum (64), 64 sign-ins at once ----------

rss_hash_max="n/a"
if [ "$HASH_MAX" = 1 ]; then
    log "SQLite: passwordHashConcurrency 64, 64 connections signing in"
    start_server hash-max "sqlite:$tmp/hash-max/actionlinks.sqlite" "$tmp/hash-max" \
        ACTIONLINKS_USERS_PASSWORD_HASH_CONCURRENCY=64 ACTIONLINKS_USERS_PASSWORD_HASH_QUEUE=64
    for i in $(seq 0 $((SIGNIN_ACCOUNTS - 1))); do
        admin "/v1/projects/$PROJECT/accounts" "{\"email\":\"bench-signin-$i@example.com\",\"password\":\"bench-password-1\"}" >/dev/null
    done
    run signin-hash-max 64 "$base/" scripts/load/sign-in.lua "$SIGNIN_ACCOUNTS" bench-signin bench-password-1 "$KEY"
    rss_hash_max=$(mb "$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$server_pid/status")")
    stop_server
fi

# --- 2. PostgreSQL, one instance: issuing, confirming, refresh ----------------------------------

if [ "$SKIP_POSTGRES" != 1 ]; then
    log "PostgreSQL: starting a cluster on 127.0.0.1:$PG_PORT"
    pg_url=$(bash scripts/postgres-test-cluster.sh start "$tmp/pg" "$PG_PORT" 2>"$tmp/pg-start.log") || { cat "$tmp/pg-start.log" >&2; die "cannot start PostgreSQL"; }
    PGPASSWORD=actionlinks-test psql -h 127.0.0.1 -p "$PG_PORT" -U actionlinks -d postgres -qc "CREATE DATABASE bench" >/dev/null
    # Instances on one PostgreSQL share their keys, and a server never makes them on a shared store.
    "$BIN" keys init --output "$tmp/keys.json" >/dev/null
    start_server postgres "${pg_url%/*}/bench" "$tmp/pg-data" ACTIONLINKS_KEYS_FILE="$tmp/keys.json"
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
    log "link parser: LinkParsing's alternated passes (Benchmarks/, builds package-benchmark the first time)"
    # The suite writes one line with the medians of its alternated passes, whatever they are, to the
    # file ACTIONLINKS_PARSER_MEDIANS names (package-benchmark keeps a suite's own output to itself);
    # its own ratio floor may make it exit non-zero, which the floors below report as broken, not as
    # unmeasured. Without the line, the p50 column of the suite's table is read.
    rm -f "$tmp/parser-medians.txt"
    (cd Benchmarks && ACTIONLINKS_PARSER_MEDIANS="$tmp/parser-medians.txt" swift package --disable-sandbox benchmark --target LinkParsing --filter 'Floors.*' --no-progress) >"$tmp/parser.txt" 2>&1 || true
    parser_line=$(cat "$tmp/parser-medians.txt" 2>/dev/null || true)
    parser_rate=$(sed -n 's/.*links_per_cpu_second=\([0-9]*\).*/\1/p' <<<"${parser_line%% view_*}")
    parser_ratio=$(sed -n 's/.* speed_up=\([0-9.]*\).*/\1/p' <<<"${parser_line%% view_*}")
    parser_view_rate=$(sed -n 's/.* view_links_per_cpu_second=\([0-9]*\).*/\1/p' <<<"$parser_line")
    parser_view_ratio=$(sed -n 's/.* view_speed_up=\([0-9.]*\).*/\1/p' <<<"$parser_line")
    if [ -z "$parser_rate" ]; then
        parser_rate=$(awk -F'│' '/│ links per CPU second/ { gsub(/ /, "", $5); print $5 * 1000; exit }' "$tmp/parser.txt")
        parser_ratio=$(awk -F'│' '/│ speed-up over URLComponents/ { gsub(/ /, "", $5); printf "%.1f", $5 / 100; exit }' "$tmp/parser.txt")
    fi
    if [ -z "$parser_rate" ] || [ -z "$parser_ratio" ]; then
        tail -30 "$tmp/parser.txt" >&2
        log "warning: the LinkParsing suite gave no medians (see above); the parser row is not measured"
        parser_rate="n/a"; parser_ratio="n/a"
    fi
fi

# --- 4. the table ------------------------------------------------------------------------------

# Ratios: throughput against a rate of this run, or CPU time against a reference's CPU time.
aasa_ratio=$(ratio "${rps[aasa]}" "${rps[nginx-aasa]}")
assetlinks_ratio=$(ratio "${rps[assetlinks]}" "${rps[nginx-assetlinks]}")
action_ratio=$(ratio "${rps[action-get]}" "${rps[nginx-aasa]}")
issue_sqlite_ratio=$(ratio "${rps[issue-sqlite]}" "${rps[nginx-aasa]}")
signin_cpu_ratio=$(ratio "${cpu_us[signin-sqlite]}" "$scrypt_us")
refresh_sqlite_cpu_ratio=$(ratio "${cpu_us[refresh-sqlite]}" "$rsa_us")
issue_pg_ratio=$(ratio "${rps[issue-pg]:-0}" "${rps[nginx-aasa]}")
confirm_ratio=$(ratio "${rps[confirm-pg]:-0}" "${rps[issue-pg]:-0}")
refresh_pg_cpu_ratio=$(ratio "${cpu_us[refresh-pg]:-0}" "$rsa_us")
rss_mb=$(mb "$rss_hwm")
[ "$SKIP_POSTGRES" != 1 ] || { issue_pg_ratio=n/a; confirm_ratio=n/a; refresh_pg_cpu_ratio=n/a; }
[ "$SKIP_PARSER" != 1 ] || { parser_ratio=n/a; parser_view_ratio=n/a; }

x() { if [ -z "$1" ] || [ "$1" = n/a ]; then echo n/a; else echo "$1x"; fi; }
report() {
echo
echo "ActionLinks bench — $(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -m), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
[ -z "$CUSTOM_BIN" ] || echo "binary: $BIN (not necessarily built from that commit)"
echo "wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency after a $WARMUP warm-up (sign-in: -c$SIGNIN_CONNECTIONS); $("$NGINX" -v 2>&1 | sed 's/.*: //'); SQLite synchronous=FULL, WAL"
echo "references (CPU time): one RSA-2048 signature ${rsa_us} us ($rsa_source; openssl speed rsa2048: ${openssl_us} us), one scrypt hash ln=14 r=8 p=5 ${scrypt_us} us (openssl kdf)"
echo "reference (wall time): one fdatasync of the data directory's disk: median ${fsync_ms} ms, mean ${fsync_mean_ms} ms, p99 ${fsync_p99_ms} ms (100 calls)"
echo
printf '| %-44s | %11s | %8s | %8s | %6s | %10s | %7s | %-34s |\n' "path" "requests/s" "p50 ms" "p99 ms" "errors" "CPU us/req" "ratio" "ratio of"
printf '|%s|%s:|%s:|%s:|%s:|%s:|%s:|%s|\n' "$(printf -- '-%.0s' {1..46})" "$(printf -- '-%.0s' {1..12})" "$(printf -- '-%.0s' {1..9})" "$(printf -- '-%.0s' {1..9})" "$(printf -- '-%.0s' {1..7})" "$(printf -- '-%.0s' {1..11})" "$(printf -- '-%.0s' {1..8})" "$(printf -- '-%.0s' {1..36})"
row() { # name label ratio what
    printf '| %-44s | %11s | %8s | %8s | %6s | %10s | %7s | %-34s |\n' "$2" "${rps[$1]:-n/a}" "${p50[$1]:-n/a}" "${p99[$1]:-n/a}" "${bad[$1]:-n/a}" "${cpu_us[$1]:-n/a}" "$3" "$4"
}
row nginx-aasa "nginx: AASA (static file)" "1.00" "rounds: ${rounds[nginx-aasa]}"
row aasa "AASA" "${aasa_ratio}x" "nginx AASA/s (rounds: ${rounds[aasa]})"
row nginx-assetlinks "nginx: assetlinks.json (static file)" "1.00" "rounds: ${rounds[nginx-assetlinks]}"
row assetlinks "assetlinks.json" "${assetlinks_ratio}x" "nginx assetlinks/s"
row action-get "GET /__/auth/action (SQLite)" "${action_ratio}x" "nginx AASA/s"
row issue-sqlite "sendOobCode + returnOobLink, SQLite" "${issue_sqlite_ratio}x" "nginx AASA/s"
row signin-sqlite "signInWithPassword, SQLite (default scrypt)" "${signin_cpu_ratio}x" "CPU of one scrypt hash"
row refresh-sqlite "token refresh, SQLite" "${refresh_sqlite_cpu_ratio}x" "CPU of one RSA-2048 signature"
if [ "$SKIP_POSTGRES" != 1 ]; then
    row issue-pg "sendOobCode + returnOobLink, PostgreSQL" "${issue_pg_ratio}x" "nginx AASA/s (PostgreSQL ${pg_us[issue-pg]} us)"
    row confirm-pg "signInWithEmailLink (confirm), PostgreSQL" "${confirm_ratio}x" "PostgreSQL issuing/s (PG ${pg_us[confirm-pg]} us)"
    row refresh-pg "token refresh, PostgreSQL" "${refresh_pg_cpu_ratio}x" "CPU of one RSA-2048 sig. (PG ${pg_us[refresh-pg]} us)"
fi
if [ "$HASH_MAX" = 1 ]; then row signin-hash-max "signInWithPassword, 64 hashes at once" "" "peak RSS ${rss_hash_max} MB"; fi
printf '| %-44s | %11s | %8s | %8s | %6s | %10s | %7s | %-34s |\n' "link parser (ActionCodeLink.parse, per core)" "${parser_rate:-n/a}" "" "" "" "" "$(x "$parser_ratio")" "URLComponents (links/CPU s)"
if [ -n "${parser_view_ratio:-}" ] && [ "$parser_view_ratio" != n/a ]; then
    printf '| %-44s | %11s | %8s | %8s | %6s | %10s | %7s | %-34s |\n' "link parser, zero-copy (ActionCodeLinkView)" "${parser_view_rate:-n/a}" "" "" "" "" "${parser_view_ratio}x" "URLComponents (links/CPU s)"
fi
printf '| %-44s | %11s | %8s | %8s | %6s | %10s | %7s | %-34s |\n' "server RSS, peak over the SQLite runs (VmHWM)" "${rss_mb} MB" "" "" "" "" "" "anon $(mb "$rss_peak_anon") + file $(mb "$rss_peak_file") MB at the peak"
printf '| %-44s | %11s | %8s | %8s | %6s | %10s | %7s | %-34s |\n' "server RSS, idle (before the runs)" "$(mb "${rss_idle:-0}") MB" "" "" "" "" "" "anon $(mb "${rss_idle_anon:-0}") + file $(mb "${rss_idle_file:-0}") MB"
echo
echo "CPU us/req: the server's user + system CPU time (nginx's workers' for nginx) per request; wrk excluded."
echo "PG: the PostgreSQL cluster's own CPU time per request. A confirm error count above 0 means the recorded codes ran out."
}

pass() { if awk "BEGIN { exit !($1) }" </dev/null; then echo PASS; else echo MISS; fi; }
num() { [[ "$1" =~ ^[0-9.]+$ ]] && echo "$1" || echo 0; }
goals() {
echo
echo "goals (issue 26):"
printf '  %-4s 1. token refresh <= 1.5x one RSA-2048 signature (CPU)  (SQLite %sx, PostgreSQL %sx; SQLite %sx openssl'"'"'s)\n' "$(pass "$(num "$refresh_sqlite_cpu_ratio") > 0 && $(num "$refresh_sqlite_cpu_ratio") <= 1.5")" "$refresh_sqlite_cpu_ratio" "$refresh_pg_cpu_ratio" "$(ratio "${cpu_us[refresh-sqlite]}" "$openssl_us")"
beyond() { awk -v a="$(num "$1")" -v b="$rsa_us" 'BEGIN { if (a > 0) printf "%.0f", a - b; else print "n/a" }'; }
printf '          beyond the signature: SQLite %s us, PostgreSQL %s us of CPU per refresh\n' "$(beyond "${cpu_us[refresh-sqlite]}")" "$(beyond "${cpu_us[refresh-pg]:-}")"
[ "$SKIP_POSTGRES" = 1 ] || printf '  %-4s 2. PostgreSQL confirm >= 0.5x PostgreSQL issuing      (%sx)\n' "$(pass "$(num "$confirm_ratio") >= 0.5")" "$confirm_ratio"
printf '  %-4s 3. landing page >= 0.5x nginx, p99 < 10 ms          (%sx, %s ms)\n' "$(pass "$(num "$action_ratio") >= 0.5 && $(num "${p99[action-get]}") < 10")" "$action_ratio" "${p99[action-get]}"
printf '  %-4s 4. peak RSS < 64 MB                                 (%s MB)\n' "$(pass "$(num "$rss_mb") > 0 && $(num "$rss_mb") < 64")" "$rss_mb"
best_parser=$(awk -v a="$(num "$parser_ratio")" -v b="$(num "${parser_view_ratio:-0}")" 'BEGIN { print (a > b ? a : b) }')
printf '  %-4s 5. parser >= 20x URLComponents per core             (%s, zero-copy %s)\n' "$(pass "$best_parser >= 20")" "$(x "$parser_ratio")" "$(x "${parser_view_ratio:-n/a}")"
printf '  %-4s 6. SQLite issuing p99 < 10 ms                       (%s ms at %s/s; the disk'"'"'s fdatasync p99 %s ms)\n' "$(pass "$(num "${p99[issue-sqlite]}") > 0 && $(num "${p99[issue-sqlite]}") < 10")" "${p99[issue-sqlite]}" "${rps[issue-sqlite]}" "$fsync_p99_ms"
[ "$HASH_MAX" != 1 ] || printf '       7. RSS with 64 password hashes at once: %s MB\n' "$rss_hash_max"
}
report
goals
if [ -n "$TABLE" ]; then { report; goals; } >"$TABLE"; fi

# --- 5. the floors -----------------------------------------------------------------------------

declare -A measured=(
    [aasa_ratio]=$aasa_ratio [assetlinks_ratio]=$assetlinks_ratio [action_ratio]=$action_ratio
    [issue_sqlite_ratio]=$issue_sqlite_ratio [issue_sqlite_p99_ms]=${p99[issue-sqlite]}
    [signin_cpu_ratio]=$signin_cpu_ratio [refresh_sqlite_cpu_ratio]=$refresh_sqlite_cpu_ratio
    [issue_postgres_ratio]=$issue_pg_ratio [confirm_ratio]=$confirm_ratio [refresh_postgres_cpu_ratio]=$refresh_pg_cpu_ratio
    [parser_ratio]=$parser_ratio [parser_view_ratio]=${parser_view_ratio:-n/a} [rss_mb]=$rss_mb
)
echo
echo "floors ($THRESHOLDS):"
broken=0
while read -r name kind limit; do
    [ -n "$name" ] && [ "${name:0:1}" != "#" ] || continue
    [ -n "${measured[$name]+set}" ] || die "$THRESHOLDS names $name, which this bench does not measure"
    value=${measured[$name]}
    if [ "$value" = n/a ]; then printf '  skip   %-30s (SKIP_ set)\n' "$name"; continue; fi
    if [ "$kind" = min ]; then ok=$(pass "$value >= $limit"); else ok=$(pass "$value <= $limit"); fi
    [ "$ok" = PASS ] && verdict=ok || { verdict=BROKEN; broken=$((broken + 1)); }
    printf '  %-6s %-30s %s %s %s\n' "$verdict" "$name" "$value" "$([ "$kind" = min ] && echo '>=' || echo '<=')" "$limit"
done <"$THRESHOLDS"
for name in "${!bad[@]}"; do
    [[ "$name" == *"#"* ]] && continue
    if [ "${bad[$name]}" != 0 ] && [ "$name" != confirm-pg ] && [ "$name" != signin-hash-max ]; then echo "  WARNING: $name had ${bad[$name]} errors or non-2xx answers"; fi
done
if [ "$broken" -gt 0 ]; then
    echo "bench: $broken floor(s) broken: a regression (or a much busier machine; run again to tell)" >&2
    exit 1
fi
exit 0
