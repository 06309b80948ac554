# Shared by the scripts that start a test service (oidc-provider-mock.sh, django-oidc-provider.sh,
# saml-idp.sh; sourced, not run): the service runs in its own session with its output in
# DIRECTORY/log and its process ID in DIRECTORY/pid.

# Waits for the service started with process ID in DIRECTORY/pid to print a line matching PATTERN
# (grep -o) to DIRECTORY/log, at most SECONDS, then prints the match. On its exit or the timeout, the
# log is shown and the script fails with "NAME did not start".
#   await_url DIRECTORY PATTERN SECONDS NAME
await_url() {
    local directory=$1 pattern=$2 seconds=$3 name=$4 url
    for _ in $(seq 1 $((seconds * 10))); do
        url=$(grep -o "$pattern" "$directory/log" | head -n 1 || true)
        if [ -n "$url" ]; then
            echo "$url"
            return 0
        fi
        if ! kill -0 "$(cat "$directory/pid")" 2>/dev/null; then break; fi
        sleep 0.1
    done
    echo "$name did not start:" >&2
    cat "$directory/log" >&2
    exit 1
}

# Stops the service whose process ID is in DIRECTORY/pid, if it runs.
#   stop_service DIRECTORY
stop_service() {
    local directory=$1
    if [ -f "$directory/pid" ]; then
        kill "$(cat "$directory/pid")" 2>/dev/null || true
        rm -f "$directory/pid"
    fi
}
