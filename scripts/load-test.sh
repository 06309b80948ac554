#!/usr/bin/env bash
# Load test: the link domain under wrk, side by side with nginx serving the same AASA bytes.
#
#   bash scripts/load-test.sh
#
# Installs wrk and nginx if missing, builds `actionlinks` in release, starts it on a loopback port
# with a throw-away data directory and SQLite store, starts nginx (its own config, pid and logs in
# the same temporary folder), then measures with wrk:
#   (a) nginx serving the AASA file            GET /.well-known/apple-app-site-association
#   (b) our AASA                               GET /.well-known/apple-app-site-association
#   (c) our landing page for a live code       GET /__/auth/action?mode=resetPassword&oobCode=...
#   (d) issuing links as the admin             POST /v1/accounts:sendOobCode (returnOobLink)
# It samples the server's RSS, prints a table and checks the goals (PASS/MISS). It is a
# measurement, not a test: it exits 0 whether goals pass or not, and non-zero only when it cannot
# measure. Everything it starts is stopped on exit.
#
# Settings (environment): PORT (18080), NGINX_PORT (18081), THREADS (2), CONNECTIONS (64),
# DURATION (10s), WARMUP (3s), AASA_ROUNDS (3: alternating nginx/ours rounds, median reported),
# ISSUE_REQUEST_TYPE (EMAIL_SIGNIN or PASSWORD_RESET),
# ISSUE_ADDRESSES (addresses per wrk thread for EMAIL_SIGNIN, accounts for PASSWORD_RESET; 5000 / 500),
# SKIP_BUILD=1 (use the existing release build), ACTIONLINKS_BIN (measure another binary, e.g. a
# copy of an earlier build, for before/after), KEEP_TMP=1 (keep the temporary folder),
# SERVER_ENV (extra VAR=value words for the server, e.g. to try a setting).
set -euo pipefail
cd "$(dirname "$0")/.."

PORT=${PORT:-18080}
NGINX_PORT=${NGINX_PORT:-18081}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-64}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
AASA_ROUNDS=${AASA_ROUNDS:-3}
ISSUE_REQUEST_TYPE=${ISSUE_REQUEST_TYPE:-EMAIL_SIGNIN}
if [ "$ISSUE_REQUEST_TYPE" = PASSWORD_RESET ]; then ISSUE_ADDRESSES=${ISSUE_ADDRESSES:-500}; else ISSUE_ADDRESSES=${ISSUE_ADDRESSES:-5000}; fi
SKIP_BUILD=${SKIP_BUILD:-0}
KEEP_TMP=${KEEP_TMP:-0}
SERVER_ENV=${SERVER_ENV:-}
PROJECT=demo-actionlinks
ADMIN="Authorization: Bearer owner"

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'load-test: %s\n' "$*" >&2; exit 1; }
# shellcheck source=lib/wrk-bench.sh
source scripts/lib/wrk-bench.sh

# --- 1. tools and build ----------------------------------------------------------------------

ensure_wrk_nginx_curl

if [ "$SKIP_BUILD" != 1 ]; then
    log "building actionlinks (release)"
    swift build -c release --product actionlinks
fi
BIN=${ACTIONLINKS_BIN:-"$(swift build -c release --show-bin-path)/actionlinks"}
CUSTOM_BIN=${ACTIONLINKS_BIN:-}
unset ACTIONLINKS_BIN  # the server refuses ACTIONLINKS_ variables that name no configuration key
[ -x "$BIN" ] || die "no release build at $BIN (run without SKIP_BUILD=1)"

for port in "$PORT" "$NGINX_PORT"; do
    if curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$port/"; then die "port $port is already in use; set PORT / NGINX_PORT"; fi
done

# --- processes and cleanup -------------------------------------------------------------------

tmp=$(mktemp -d "${TMPDIR:-/tmp}/actionlinks-load.XXXXXX")
chmod 755 "$tmp" # nginx workers may run as another user (nobody) when started as root
server_pid=""
nginx_pid=""
sampler_pid=""
cleanup() {
    local status=$?
    for pid in "$sampler_pid" "$nginx_pid" "$server_pid"; do
        if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null || true; fi
    done
    for pid in "$sampler_pid" "$nginx_pid" "$server_pid"; do
        [ -n "$pid" ] || continue
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
        wait "$pid" 2>/dev/null || true
    done
    if [ "$KEEP_TMP" = 1 ]; then log "kept $tmp"; else rm -rf "$tmp"; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- 2. the server ---------------------------------------------------------------------------

base="http://127.0.0.1:$PORT"
log "starting actionlinks serve on $base (data in $tmp/data)"
# shellcheck disable=SC2086 # SERVER_ENV is a list of words
env ACTIONLINKS_SERVER_PORT="$PORT" \
    ACTIONLINKS_DATA_DIRECTORY="$tmp/data" \
    ACTIONLINKS_STORE="sqlite:$tmp/data/actionlinks.sqlite" \
    ACTIONLINKS_LINK_DOMAINS="http://localhost:$PORT" \
    ACTIONLINKS_LIMITS_SENDS_PER_ADDRESS_PER_HOUR=1000000 \
    ACTIONLINKS_LIMITS_SENDS_PER_IP_PER_HOUR=100000000 \
    $SERVER_ENV \
    "$BIN" serve --config config/actionlinks.yaml --www www --log-level warning >"$tmp/server.log" 2>&1 &
server_pid=$!
wait_for "$base/healthz" "$server_pid" "actionlinks serve"

kb() { awk -v key="$1:" '$1 == key { print $2 }' "/proc/$server_pid/status"; }
rss_idle=$(kb VmRSS)
# RSS every 0.2 s for the whole run (peak VmRSS seen, besides the kernel's VmHWM at the end).
( while kill -0 "$server_pid" 2>/dev/null; do
      awk '$1 == "VmRSS:" { print $2 }' "/proc/$server_pid/status" 2>/dev/null || true
      sleep 0.2
  done >"$tmp/rss.samples" ) &
sampler_pid=$!

# --- 3. nginx with the same AASA bytes --------------------------------------------------------

mkdir -p "$tmp/nginx/html/.well-known" "$tmp/nginx/temp"
aasa="$tmp/nginx/html/.well-known/apple-app-site-association"
curl -fsS "$base/.well-known/apple-app-site-association" -o "$aasa"
chmod -R a+rX "$tmp/nginx"
cat >"$tmp/nginx/nginx.conf" <<EOF
# Generated by scripts/load-test.sh: a plain static-file nginx, one worker per core.
worker_processes auto;
daemon off;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000; # no reconnects mid-run (the default, 1000, would cost nginx a little)
    client_body_temp_path $tmp/nginx/temp/body;
    proxy_temp_path $tmp/nginx/temp/proxy;
    fastcgi_temp_path $tmp/nginx/temp/fastcgi;
    uwsgi_temp_path $tmp/nginx/temp/uwsgi;
    scgi_temp_path $tmp/nginx/temp/scgi;
    server {
        listen 127.0.0.1:$NGINX_PORT;
        root $tmp/nginx/html;
        location = /.well-known/apple-app-site-association {
            types { }
            default_type application/json;
        }
    }
}
EOF
log "starting nginx on 127.0.0.1:$NGINX_PORT"
"$NGINX" -t -q -p "$tmp/nginx" -e "$tmp/nginx/error.log" -c "$tmp/nginx/nginx.conf"
"$NGINX" -p "$tmp/nginx" -e "$tmp/nginx/error.log" -c "$tmp/nginx/nginx.conf" &
nginx_pid=$!
nginx_url="http://127.0.0.1:$NGINX_PORT/.well-known/apple-app-site-association"
wait_for "$nginx_url" "$nginx_pid" nginx
curl -fsS "$nginx_url" | cmp -s - "$aasa" || die "nginx does not serve the same AASA bytes"
[ "$(curl -fsS -o /dev/null -w '%{content_type}' "$nginx_url")" = application/json ] || die "nginx's AASA is not application/json"

# --- 4. a live code, and the accounts for issuing ---------------------------------------------

post() { # path json
    curl -fsS -X POST -H "$ADMIN" -H 'Content-Type: application/json' --data "$2" "$base$1"
}
post "/v1/projects/$PROJECT/accounts" '{"email":"load-reader@example.com","password":"load-test-password"}' >/dev/null
answer=$(post /v1/accounts:sendOobCode '{"requestType":"PASSWORD_RESET","email":"load-reader@example.com","returnOobLink":true}')
link=$(printf '%s' "$answer" | sed -n 's/.*"oobLink":"\([^"]*\)".*/\1/p')
[ -n "$link" ] || die "sendOobCode returned no oobLink: $answer"
action_path="/${link#*://*/}"
action_url="$base$action_path"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$action_url")" = 200 ] || die "GET $action_path did not answer 200"

if [ "$ISSUE_REQUEST_TYPE" = PASSWORD_RESET ]; then
    log "creating $ISSUE_ADDRESSES accounts for PASSWORD_RESET"
    for i in $(seq 0 $((ISSUE_ADDRESSES - 1))); do
        post "/v1/projects/$PROJECT/accounts" "{\"email\":\"load-$i@example.com\"}" >/dev/null
    done
fi

# --- 5. runs ---------------------------------------------------------------------------------

# ms value of a wrk duration ("612.00us", "1.23ms", "2.01s").

# CPU time (clock ticks, user + system) of the processes given, and of nginx's workers.
cpu_ticks() { awk '{ sum += $14 + $15 } END { print sum + 0 }' "${@/#//proc/}" 2>/dev/null; }
nginx_workers() { awk -v parent="$nginx_pid" '$4 == parent { printf "%s/stat ", $1 }' /proc/[0-9]*/stat 2>/dev/null; }
tick=$(getconf CLK_TCK)

declare -A rps p50 p99 bad rss_after cpu_us
run() { # name url [wrk script args...]
    local name=$1 url=$2
    shift 2
    local script=()
    if [ $# -gt 0 ]; then script=(-s "$1"); shift; fi
    local extra=()
    if [ $# -gt 0 ]; then extra=(-- "$@"); fi
    log "$name: warm-up $WARMUP"
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" "${script[@]}" "$url" "${extra[@]}" >/dev/null
    log "$name: measuring $DURATION"
    local measured=("$server_pid/stat")
    [ "${name%%#*}" != nginx-aasa ] || read -r -a measured <<<"$(nginx_workers)"
    local before after
    before=$(cpu_ticks "${measured[@]}")
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency "${script[@]}" "$url" "${extra[@]}" >"$tmp/wrk-$name.txt"
    after=$(cpu_ticks "${measured[@]}")
    local requests
    requests=$(awk '/requests in/ { print $1 }' "$tmp/wrk-$name.txt")
    cpu_us[$name]=$(awk -v t=$((after - before)) -v hz="$tick" -v n="$requests" 'BEGIN { if (n > 0) printf "%.0f", t * 1e6 / hz / n; else print "n/a" }')
    rps[$name]=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$tmp/wrk-$name.txt")
    p50[$name]=$(to_ms "$(awk '$1 == "50%" { print $2 }' "$tmp/wrk-$name.txt")")
    p99[$name]=$(to_ms "$(awk '$1 == "99%" { print $2 }' "$tmp/wrk-$name.txt")")
    local non2xx errors
    non2xx=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$tmp/wrk-$name.txt")
    errors=$(awk '/Socket errors:/ { gsub(",", ""); print $4 + $6 + $8 + $10 }' "$tmp/wrk-$name.txt")
    bad[$name]=$(( ${non2xx:-0} + ${errors:-0} ))
    rss_after[$name]=$(kb VmRSS)
}

# The AASA pair alternates (nginx, ours, nginx, ours, ...) and each side reports its median round:
# their ratio is near 1 and single runs on shared cores vary by about 10 %.
for round in $(seq "$AASA_ROUNDS"); do
    run "nginx-aasa#$round" "$nginx_url"
    run "aasa#$round" "$base/.well-known/apple-app-site-association"
done
declare -A rounds
for name in nginx-aasa aasa; do
    median=$(for round in $(seq "$AASA_ROUNDS"); do echo "${rps[$name#$round]} $round"; done | sort -n | awk '{ r[NR] = $2 } END { print r[int((NR + 1) / 2)] }')
    rounds[$name]=$(for round in $(seq "$AASA_ROUNDS"); do printf '%s ' "${rps[$name#$round]}"; done)
    rps[$name]=${rps[$name#$median]}
    p50[$name]=${p50[$name#$median]}
    p99[$name]=${p99[$name#$median]}
    cpu_us[$name]=${cpu_us[$name#$median]}
    rss_after[$name]=${rss_after[$name#$median]}
    bad[$name]=$(for round in $(seq "$AASA_ROUNDS"); do echo "${bad[$name#$round]}"; done | awk '{ s += $1 } END { print s + 0 }')
done
run action-get "$action_url"
run issue "$base/v1/accounts:sendOobCode" scripts/load/send-oob-code.lua "$ISSUE_REQUEST_TYPE" "$ISSUE_ADDRESSES" load

# The GET never consumes: the code must still be live after the runs.
[ "$(curl -s -o /dev/null -w '%{http_code}' "$action_url")" = 200 ] || log "warning: the live code stopped answering 200 after the runs"

kill "$sampler_pid" 2>/dev/null || true
wait "$sampler_pid" 2>/dev/null || true
sampler_pid=""
rss_peak=$(sort -n "$tmp/rss.samples" | tail -1)
rss_hwm=$(kb VmHWM)
rss_anon=$(kb RssAnon)
rss_file=$(kb RssFile)

# --- 6. report -------------------------------------------------------------------------------

verdict() { if awk "BEGIN { exit !($1) }" </dev/null; then echo PASS; else echo MISS; fi; } # $1: an awk condition on numbers

cores=$(nproc)
echo
echo "ActionLinks load test — $(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -m), $cores cores, commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
[ -z "$CUSTOM_BIN" ] || echo "binary: $BIN (not necessarily built from that commit)"
echo "wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency (after a $WARMUP warm-up); $(wrk -v 2>&1 | head -1 | awk '{print $1, $2}'); $("$NGINX" -v 2>&1 | sed 's/.*: //')"
echo "NOTE: wrk, nginx and the server all share these $cores cores: absolute numbers are lower than on"
echo "      a dedicated server and wrk's own CPU use is included; compare the rows with each other."
echo "SQLite store in $tmp (synchronous=FULL, WAL); issuing: $ISSUE_REQUEST_TYPE over $ISSUE_ADDRESSES addresses$([ "$ISSUE_REQUEST_TYPE" = EMAIL_SIGNIN ] && echo " per wrk thread") with returnOobLink."
echo
printf '%-34s %11s %8s %8s %7s %12s %7s\n' "run" "requests/s" "p50 ms" "p99 ms" "errors" "CPU us/req" "RSS MB"
printf '%-34s %11s %8s %8s %7s %12s %7s\n' "----------------------------------" "-----------" "--------" "--------" "-------" "------------" "-------"
declare -A labels=([nginx-aasa]="(a) nginx AASA" [aasa]="(b) actionlinks AASA" [action-get]="(c) actionlinks GET /__/auth/action" [issue]="(d) actionlinks sendOobCode")
for name in nginx-aasa aasa action-get issue; do
    rss="-"; [ "$name" = nginx-aasa ] || rss=$(mb "${rss_after[$name]}")
    printf '%-34s %11s %8s %8s %7s %12s %7s\n' "${labels[$name]}" "${rps[$name]}" "${p50[$name]}" "${p99[$name]}" "${bad[$name]}" "${cpu_us[$name]}" "$rss"
done
echo
aasa_ratio=$(ratio "${rps[aasa]}" "${rps[nginx-aasa]}")
action_ratio=$(ratio "${rps[action-get]}" "${rps[nginx-aasa]}")
echo "CPU us/req: user + system CPU time of the server (of nginx's workers for (a)) per request, wrk excluded."
echo "AASA rows: median of $AASA_ROUNDS alternating rounds (requests/s of each round: nginx ${rounds[nginx-aasa]}; ours ${rounds[aasa]})."
echo "ratios: AASA ours/nginx = ${aasa_ratio}x; action GET ours/nginx AASA = ${action_ratio}x"
echo "RSS: idle $(mb "$rss_idle") MB; peak sampled VmRSS $(mb "$rss_peak") MB; VmHWM $(mb "$rss_hwm") MB (includes one scrypt"
echo "     password hash at setup, 16 MiB while it runs); at the end $(mb "$rss_anon") MB anonymous + $(mb "$rss_file") MB file-backed"
echo
echo "goals:"
printf '  %-4s AASA >= 1.0x nginx                     (%sx)\n' "$(verdict "$aasa_ratio >= 1.0")" "$aasa_ratio"
printf '  %-4s action GET >= 0.6x nginx               (%sx)\n' "$(verdict "$action_ratio >= 0.6")" "$action_ratio"
printf '  %-4s >= 10000 links issued/s on SQLite     (%s/s)\n' "$(verdict "${rps[issue]} >= 10000")" "${rps[issue]}"
printf '  %-4s issuing p99 < 10 ms                   (%s ms)\n' "$(verdict "${p99[issue]} < 10")" "${p99[issue]}"
printf '  %-4s RSS < 64 MB (VmHWM)                    (%s MB)\n' "$(verdict "$rss_hwm < 65536")" "$(mb "$rss_hwm")"
for name in nginx-aasa aasa action-get issue; do
    if [ "${bad[$name]}" != 0 ]; then echo "  WARNING: ${labels[$name]} had ${bad[$name]} errors or non-2xx answers; its numbers are not valid"; fi
done
exit 0
