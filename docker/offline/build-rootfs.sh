#!/bin/sh
# Build the Sandalyst sandbox root filesystem from Debian 13 (trixie) packages, with no
# container registry: the offline equivalent of docker/Dockerfile. The one library
# Debian does not package, pyarrow, comes from its wheel on the Python package index,
# pinned by version and sha256 below.
#
#   docker/offline/build-rootfs.sh OUT.tar      (or OUT.tar.gz)
#
# Needs root (or working user namespaces), mmdebstrap and curl. Uses the mirror of the
# host's apt sources (/etc/apt/sources.list.d/debian.sources, else
# /etc/apt/sources.list) with the trixie suites, whatever release the host runs, or
# SANDALYST_MIRROR if set (one mmdebstrap mirror argument, e.g. a sources file that
# names trixie). SANDALYST_PYARROW_WHEEL may name a local copy of the wheel (it is
# still checked against the pinned sha256). The tar is written
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

SUITE=trixie
# The upstream versions of Debian 13's packages (and of the pyarrow wheel). The
# self-check fails the build if what was installed differs, and docker/Dockerfile pins
# exactly these (a unit test compares the two): both ways build the same libraries.
PINS="numpy==2.2.4 scipy==1.15.3 pandas==2.2.3 matplotlib==3.10.1 seaborn==0.13.2
statsmodels==0.14.4 scikit-learn==1.4.2 pyarrow==19.0.1 openpyxl==3.1.5 xlrd==2.0.1
odfpy==1.4.2 tabulate==0.9.0 ipython==8.35.0 requests==2.32.3 plotly==5.20.0"
# pyarrow (Parquet, Feather): Debian has no package. A cp313 manylinux wheel, as
# contemporary with Debian 13's pandas 2.2 as possible; the hash pins the exact file.
PYARROW_VERSION=$(echo $PINS | tr ' ' '\n' | sed -n 's/^pyarrow==//p')
PYARROW_WHEEL=pyarrow-$PYARROW_VERSION-cp313-cp313-manylinux_2_28_x86_64.whl
PYARROW_SHA256=1b93ef2c93e77c442c979b0d596af45e4665d8b96da598db145b0fec014b9136
PYARROW_URL=https://files.pythonhosted.org/packages/e6/90/83698fcecf939a611c8d9a78e38e7fed7792dcc4317e29e72cf8135526fb/$PYARROW_WHEEL
[ "$(uname -m)" = x86_64 ] || die "the pinned pyarrow wheel is for x86_64, this machine is $(uname -m)"

# The host's own sources name its release (bookworm on these machines): keep its mirror
# URIs and ask for trixie, trixie-updates and trixie-security instead.
uris() {  # the URIs of a deb822 sources file or of a one-line-style sources.list
    case $1 in
        *.sources) sed -n 's/^URIs:[[:space:]]*//p' "$1" | tr ' ' '\n' ;;
        *) awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/) { print $i; break } }' "$1" ;;
    esac | sed '/^$/d'
}
if [ -n "${SANDALYST_MIRROR:-}" ]; then
    set -- "$SANDALYST_MIRROR"
else
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        SOURCES=/etc/apt/sources.list.d/debian.sources
    elif [ -s /etc/apt/sources.list ]; then
        SOURCES=/etc/apt/sources.list
    else
        die "no apt sources found (/etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list); set SANDALYST_MIRROR to a Debian mirror"
    fi
    MAIN=$(uris "$SOURCES" | grep -v -- '-security' | head -n 1)
    SECURITY=$(uris "$SOURCES" | grep -- '-security' | head -n 1)
    [ -n "$MAIN" ] || die "no Debian mirror URI in $SOURCES; set SANDALYST_MIRROR to a Debian mirror"
    set -- "deb $MAIN $SUITE main" "deb $MAIN $SUITE-updates main"
    [ -z "$SECURITY" ] || set -- "$@" "deb $SECURITY $SUITE-security main"
fi
MIRROR_NOTE=$*

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

echo "build-rootfs: building $OUT from Debian $SUITE (mirror: $MIRROR_NOTE)"
start=$(date +%s)
if [ -n "${SANDALYST_PYARROW_WHEEL:-}" ]; then
    cp "$SANDALYST_PYARROW_WHEEL" "$WORK/$PYARROW_WHEEL" || die "cannot read $SANDALYST_PYARROW_WHEEL"
else
    echo "build-rootfs: fetching $PYARROW_WHEEL from the Python package index"
    curl -fsSL --retry 3 -o "$WORK/$PYARROW_WHEEL" "$PYARROW_URL" \
        || die "cannot download $PYARROW_URL (set SANDALYST_PYARROW_WHEEL to a local copy)"
fi
echo "$PYARROW_SHA256  $WORK/$PYARROW_WHEEL" | sha256sum -c --quiet - \
    || die "$PYARROW_WHEEL does not match the pinned sha256 $PYARROW_SHA256"
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
    --include=python3,python-is-python3,python3-numpy,python3-pandas,python3-scipy,python3-matplotlib,python3-seaborn,python3-statsmodels,python3-sklearn,python3-openpyxl,python3-xlrd,python3-odf,python3-tabulate,python3-plotly,python3-ipython,python3-requests,python3-pip,fonts-dejavu-core,fonts-wqy-microhei,tini,ca-certificates \
    --customize-hook="sh '$HERE/customize-rootfs.sh' \"\$1\" '$WORK/$PYARROW_WHEEL' '$(echo $PINS)'" \
    "$SUITE" "$PARTIAL" "$@" \
    || die "mmdebstrap failed (see the messages above)"

mv -f "$PARTIAL" "$OUT"
echo "build-rootfs: wrote $OUT ($(du -m "$OUT" | cut -f1) MB) in $(( $(date +%s) - start )) s"
