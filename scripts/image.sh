#!/usr/bin/env bash
# Builds the container image (see docs/IMAGE.md) with podman, or docker where podman is missing: a
# release build of `actionlinks` made here, the root file system scripts/image-rootfs.sh assembles
# from it, and the Containerfile's final stage over that folder. The folder stands in for the
# Containerfile's build stage (which compiles inside swift:6.3.1-bookworm), so nothing is pulled
# from a registry. Everything but the image's name goes to standard error; the name is the last line.
#
#   SKIP_BUILD=1  use the release build that is already there
#   IMAGE=name    the image's name (default localhost/actionlinks:<version>-<short commit>)
set -euo pipefail
cd "$(dirname "$0")/.."

if command -v podman >/dev/null 2>&1; then
    # vfs needs no kernel overlay support (it works in a container, as CI runs), and it is the store
    # ImageTests mounts the image from: podman refuses a store opened with another driver.
    # --layers=false: podman 4.3's layer cache kept the labels of an earlier build whose build
    # arguments differed (a stale revision), and with vfs each cached layer is a full copy.
    builder=(podman --storage-driver vfs build --layers=false)
elif command -v docker >/dev/null 2>&1; then
    builder=(docker build)
else
    echo "error: neither podman nor docker is installed (Debian: apt-get install podman)" >&2
    exit 1
fi

if [ "${SKIP_BUILD:-}" != 1 ]; then
    swift build -c release --product actionlinks --static-swift-stdlib >&2
fi
binary="$(swift build -c release --static-swift-stdlib --show-bin-path)/actionlinks"
if [ ! -x "$binary" ]; then
    echo "error: no release build at $binary: run without SKIP_BUILD=1" >&2
    exit 1
fi

revision=$(git rev-parse HEAD)
short=$(git rev-parse --short HEAD)
# A tree that differs from its commit says so in the name: the revision label is only that commit.
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then short+=-dirty; fi
version=$(git describe --tags --abbrev=0 2>/dev/null || echo unreleased)
version=${version#v}
# The first remote's URL as a browser opens it (no credentials, no .git); a repository without a
# remote gets the project's own.
source=https://github.com/actionlinks/actionlinks
remote=$(git remote | head -n 1)
if [ -n "$remote" ]; then
    url=$(git remote get-url "$remote" | sed -E 's#^[a-z+]+://([^/@]*@)?#https://#; s#^[^/@:]+@([^:]+):#https://\1/#; s#\.git$##')
    case $url in https://*) source=$url ;; esac
fi
name=${IMAGE:-localhost/actionlinks:$version-$short}

rootfs=$(mktemp -d /tmp/actionlinks-rootfs.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT
bash scripts/image-rootfs.sh "$binary" "$rootfs" >&2
echo "root file system: $(du -sh "$rootfs" | cut -f1) unpacked" >&2

"${builder[@]}" --file Containerfile --target image --build-context rootfs="$rootfs" \
    --build-arg VERSION="$version" --build-arg REVISION="$revision" --build-arg SOURCE="$source" \
    --build-arg CREATED="$(date -u +%Y-%m-%dT%H:%M:%SZ)" --tag "$name" . >&2
echo "$name"
