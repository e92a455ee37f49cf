#!/bin/sh
# Build the Sandalyst sandbox root filesystem from Debian bookworm packages, with no
# container registry: the offline equivalent of docker/Dockerfile.
#
#   docker/offline/build-rootfs.sh OUT.tar      (or OUT.tar.gz)
#
# Needs root (or working user namespaces) and mmdebstrap. Uses the host's apt sources
# (/etc/apt/sources.list.d/debian.sources, else /etc/apt/sources.list) as the mirror,
# or SANDALYST_MIRROR if set (any mmdebstrap mirror argument). The tar is written
# atomically: OUT appears only when the build and its self-check passed. Import with
#   docker import --change 'USER 1000:1000' ... OUT.tar TAG
# (sandalyst does that itself: `sandalyst image build`).
set -eu

die() { echo "build-rootfs: error: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: $0 OUT.tar (or OUT.tar.gz)"
OUT=$1
case $OUT in
    *.tar | *.tar.gz) ;;
    *) die "the output must end in .tar or .tar.gz (Docker 20.10 cannot import zstd), got '$OUT'" ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
[ -f "$HERE/customize-rootfs.sh" ] || die "customize-rootfs.sh is missing next to $0"
command -v mmdebstrap >/dev/null 2>&1 \
    || die "mmdebstrap is not installed; install it with 'apt-get install mmdebstrap' and retry"

if [ -n "${SANDALYST_MIRROR:-}" ]; then
    MIRROR=$SANDALYST_MIRROR
elif [ -f /etc/apt/sources.list.d/debian.sources ]; then
    MIRROR=/etc/apt/sources.list.d/debian.sources
elif [ -s /etc/apt/sources.list ]; then
    MIRROR=/etc/apt/sources.list
else
    die "no apt sources found (/etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list); set SANDALYST_MIRROR to a Debian mirror"
fi

OUT_DIR=$(cd "$(dirname "$OUT")" 2>/dev/null && pwd) || die "the output folder $(dirname "$OUT") does not exist"
OUT_NAME=$(basename "$OUT")
# mmdebstrap unpacks the whole tree (about 1.3 GB before trimming) into TMPDIR: use a
# folder of our own next to the output, removed on exit whatever happens.
WORK=$(mktemp -d "$OUT_DIR/.build-rootfs.XXXXXX") || die "cannot create a work folder in $OUT_DIR"
chmod 0755 "$WORK"
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM HUP
export TMPDIR="$WORK"
case $OUT_NAME in *.tar.gz) PARTIAL="$WORK/rootfs.tar.gz" ;; *) PARTIAL="$WORK/rootfs.tar" ;; esac

echo "build-rootfs: building $OUT from Debian bookworm (mirror: $MIRROR)"
start=$(date +%s)
mmdebstrap \
    --variant=minbase \
    --mode=unshare \
    --format=tar \
    --aptopt='Acquire::Languages "none"' \
    --aptopt='APT::Install-Recommends "false"' \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/lintian/*' \
    --dpkgopt='path-exclude=/usr/share/linda/*' \
    --include=python3,python-is-python3,python3-numpy,python3-pandas,python3-scipy,python3-matplotlib,python3-ipython,fonts-dejavu-core,tini,ca-certificates,usr-is-merged \
    --customize-hook="sh '$HERE/customize-rootfs.sh' \"\$1\"" \
    bookworm "$PARTIAL" "$MIRROR" \
    || die "mmdebstrap failed (see the messages above)"

mv -f "$PARTIAL" "$OUT"
echo "build-rootfs: wrote $OUT ($(du -m "$OUT" | cut -f1) MB) in $(( $(date +%s) - start )) s"
