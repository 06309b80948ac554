# Shared by scripts/bench.sh, scripts/load-test.sh and scripts/accounts-bench.sh (sourced, not run): the tools they need,
# the release build, waiting for a server, and wrk's numbers. The sourcing script defines `log`
# and `die` (their prefixes and exit codes differ) and sets `tmp` before calling wait_for.

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
nginx_binary() { command -v nginx 2>/dev/null || { [ -x /usr/sbin/nginx ] && echo /usr/sbin/nginx; } || true; }

# Installs wrk, nginx and curl when missing (Debian packages) and sets NGINX to nginx's binary.
ensure_wrk_nginx_curl() {
    local missing=()
    command -v wrk >/dev/null 2>&1 || missing+=(wrk)
    [ -n "$(nginx_binary)" ] || missing+=(nginx)
    command -v curl >/dev/null 2>&1 || missing+=(curl)
    if [ ${#missing[@]} -gt 0 ]; then
        log "installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        as_root apt-get install -y "${missing[@]}" >/dev/null || { as_root apt-get update >/dev/null && as_root apt-get install -y "${missing[@]}" >/dev/null; }
    fi
    NGINX=$(nginx_binary)
    [ -n "$NGINX" ] || die "nginx is not installed"
}

# Sets BIN to the binary to measure: ACTIONLINKS_BIN, else this tree's release build (built first
# unless SKIP_BUILD=1), and unsets ACTIONLINKS_BIN (the server refuses ACTIONLINKS_ variables that
# name no configuration key).
release_binary() {
    if [ "${SKIP_BUILD:-0}" != 1 ]; then
        log "building actionlinks (release)"
        swift build -c release --product actionlinks >&2
    fi
    BIN=${ACTIONLINKS_BIN:-"$(swift build -c release --show-bin-path)/actionlinks"}
    unset ACTIONLINKS_BIN
    [ -x "$BIN" ] || die "no release build at $BIN (run without SKIP_BUILD=1)"
}

wait_for() { # url pid name
    for _ in $(seq 300); do
        if curl -fs -o /dev/null --max-time 1 "$1"; then return 0; fi
        kill -0 "$2" 2>/dev/null || { cat "$tmp"/*.log >&2 2>/dev/null || true; die "$3 exited at start"; }
        sleep 0.1
    done
    die "$3 did not answer $1 within 30 s"
}

# wrk's latency ("812.00us", "1.20ms", "2.01s") in milliseconds.
to_ms() { awk -v v="$1" 'BEGIN {
    n = v + 0; u = v; sub(/^[0-9.]+/, "", u)
    if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000
    printf "%.2f", n }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
