#!/usr/bin/env bash
# Assembles the container image's root file system in a folder, from a built `actionlinks`: the
# binary stripped, the shared libraries it loads as ldd resolves them here (each with its chain of
# symlinks, and the dynamic loader), CA certificates, the user it runs as, the pages and the shipped
# configuration. Both ways of building the image run it: the Containerfile's build stage, and
# scripts/image.sh on the host, whose folder then stands in for that stage. The Containerfile's
# final stage sets every owner, so this needs no root.
#
#   bash scripts/image-rootfs.sh <built actionlinks> <new or empty folder>
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$#" -ne 2 ]; then
    echo "usage: bash scripts/image-rootfs.sh <built actionlinks> <new or empty folder>" >&2
    exit 64
fi
binary=$1
root=$2
if [ ! -x "$binary" ]; then
    echo "error: $binary is not an executable: build it first (swift build -c release --product actionlinks --static-swift-stdlib)" >&2
    exit 1
fi
mkdir -p "$root"
if [ -n "$(ls -A "$root")" ]; then
    echo "error: $root is not empty" >&2
    exit 1
fi
root=$(realpath "$root")

# Copies the library at $1 to the same place under the root, following its symlinks: each link is
# copied as a link, then what it points to, so that the names the binary and the loader ask for all
# resolve. Folders are taken by their real path (/lib/x86_64-linux-gnu is /usr/lib/x86_64-linux-gnu
# on a merged /usr), and the root gets the same top-level links below.
copy_library() {
    local path=$1 folder name target
    while true; do
        folder=$(realpath -e "$(dirname "$path")")
        name=$(basename "$path")
        mkdir -p "$root$folder"
        cp -a "$folder/$name" "$root$folder/$name"
        [ -L "$folder/$name" ] || return 0
        target=$(readlink "$folder/$name")
        case $target in
            /*) path=$target ;;
            *) path=$folder/$target ;;
        esac
    done
}

for top in /lib /lib64; do
    if [ -L "$top" ]; then ln -s "$(readlink "$top")" "$root$top"; fi
done

libraries=$(ldd "$binary")
if grep -q 'not found' <<<"$libraries"; then
    echo "error: $binary needs libraries this machine lacks:" >&2
    grep 'not found' <<<"$libraries" >&2
    exit 1
fi
# Every absolute path ldd prints: the libraries after "=>" and the loader on a line of its own
# (linux-vdso.so.1, the kernel's, has none).
for library in $(grep -o '/[^ ]*' <<<"$libraries"); do
    copy_library "$library"
done

install -D -m 0755 "$binary" "$root/usr/local/bin/actionlinks"
strip "$root/usr/local/bin/actionlinks"

# The CA bundle NIOSSL looks for first: outbound HTTPS (identity providers, Google's APIs, mail
# webhooks) verifies against it.
install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"

install -d -m 0755 "$root/etc"
printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' 'actionlinks:x:65532:65532:ActionLinks:/var/lib/actionlinks:/sbin/nologin' \
    >"$root/etc/passwd"
printf '%s\n' 'root:x:0:' 'actionlinks:x:65532:' >"$root/etc/group"
# Without this file glibc asks DNS before /etc/hosts, so `localhost` and the names a runtime writes
# into /etc/hosts (a PostgreSQL service, a mail relay) would go to the resolver first.
printf '%s\n' 'passwd: files' 'group: files' 'hosts: files dns' >"$root/etc/nsswitch.conf"

# A checkout's modes follow its umask: the pages and the configuration are read-only to all but root.
install -d -m 0755 "$root/usr/share/actionlinks" "$root/etc/actionlinks"
cp -R www "$root/usr/share/actionlinks/www"
chmod -R u=rwX,go=rX "$root/usr/share/actionlinks/www"
install -m 0644 config/actionlinks.yaml "$root/etc/actionlinks/actionlinks.yaml"

# The data directory (the Containerfile gives it to the server's user) and a /tmp for everyone.
install -d -m 0700 "$root/var/lib/actionlinks"
install -d -m 1777 "$root/tmp"
