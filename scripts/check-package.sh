#!/bin/sh
# Check built Linux packages of the desktop app without installing them on the machine.
#
#   scripts/check-package.sh [--shots DIR] FILE...
#
# FILE is a .deb or an AppImage (scripts/package.sh builds both and calls this; with no
# FILE, the newest of each under ${CARGO_TARGET_DIR:-target}/{release,debug}/bundle/).
#
# A .deb: its fields and size; its desktop entry validated (desktop-file-validate),
# `Exec=... %F` (files from the file manager), `MimeType=` listing CSV, TSV, xlsx, xls,
# ODS, Parquet and JSON (and every type of the bundle's file associations); the Parquet
# MIME definition installed and accepted by update-mime-database (a *.parquet glob in
# the database it builds, in a temporary folder). Then its files are unpacked
# (dpkg-deb -x) into a temporary folder and the packaged binary is started there.
# An AppImage is started with --appimage-extract-and-run (no FUSE needed).
#
# Each is started under an Xvfb of its own with a fresh data folder, until it says it
# drew its first content (SANDALYST_TIMING=1); 3 s later the screen is captured
# (`import -window root`) and must show a window: many colours, the app's window
# mapped (xwininfo). The screenshots stay in DIR (default: a folder printed at the end).
set -eu
cd "$(dirname "$0")/.."
say() { echo "check-package: $*" >&2; }
die() { echo "check-package: error: $*" >&2; exit 1; }

SHOTS=""
FILES=""
while [ $# -gt 0 ]; do
    case "$1" in
        --shots) SHOTS=$2; shift 2 ;;
        -*) die "unknown option $1 (--shots DIR)" ;;
        *) FILES="$FILES $(realpath "$1")"; shift ;;
    esac
done
if [ -z "$FILES" ]; then
    TARGET=${CARGO_TARGET_DIR:-target}
    for pattern in "deb/*.deb" "appimage/*.AppImage"; do
        # shellcheck disable=SC2086
        f=$(ls -t "$TARGET"/release/bundle/$pattern "$TARGET"/debug/bundle/$pattern 2>/dev/null | head -1) || true
        [ -n "$f" ] && FILES="$FILES $(realpath "$f")"
    done
    [ -n "$FILES" ] || die "no package under $TARGET/{release,debug}/bundle/: run scripts/package.sh first"
fi

for tool in desktop-file-validate:desktop-file-utils update-mime-database:shared-mime-info \
    Xvfb:xvfb import:imagemagick xwininfo:x11-utils dpkg-deb:dpkg; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || die "${tool%%:*} is missing (apt-get install ${tool#*:})"
done

WORK=$(mktemp -d)
[ -n "$SHOTS" ] || SHOTS=$(mktemp -d /tmp/sandalyst-package-shots.XXXXXX)
mkdir -p "$SHOTS"
XVFB=""
APP=""
cleanup() {
    if [ -n "$APP" ]; then
        pkill -TERM -P "$APP" 2>/dev/null || true
        kill "$APP" 2>/dev/null || true
    fi
    [ -n "$XVFB" ] && kill "$XVFB" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

# The types the desktop entry must list: the issue's seven, and whatever else the
# bundle's file associations name.
REQUIRED="text/csv text/tab-separated-values application/vnd.openxmlformats-officedocument.spreadsheetml.sheet application/vnd.ms-excel application/vnd.oasis.opendocument.spreadsheet application/vnd.apache.parquet application/json"
ASSOCIATED=$(python3 -c 'import json,sys; print(" ".join(a["mimeType"] for a in json.load(open(sys.argv[1]))["bundle"]["fileAssociations"]))' src-tauri/tauri.conf.json)

check_deb() {
    deb=$1
    root="$WORK/deb"
    rm -rf "$root"
    say "$(basename "$deb"): $(du -h "$deb" | cut -f1) ($(stat -c %s "$deb") bytes)"
    dpkg-deb --info "$deb" | sed -n 's/^ *\(Package\|Version\|Architecture\|Depends\|Installed-Size\):/  \1:/p' >&2
    dpkg-deb -x "$deb" "$root"
    say "  files: $(dpkg-deb -c "$deb" | grep -c '^-')"
    dpkg-deb -c "$deb" | awk '$1 ~ /^-/ {print "    " $3 "  " $NF}' >&2

    entry=$(ls "$root"/usr/share/applications/*.desktop 2>/dev/null | head -1)
    [ -n "$entry" ] || die "the .deb has no desktop entry"
    desktop-file-validate "$entry" || die "$(basename "$entry") is not a valid desktop entry"
    exec_line=$(grep '^Exec=' "$entry")
    echo "$exec_line" | grep -Eq '^Exec=[^ ]+ %F$' || die "Exec= of $(basename "$entry") does not take files (%F): $exec_line"
    bin=$(echo "$exec_line" | sed 's/^Exec=\([^ ]*\) .*/\1/')
    for m in $REQUIRED $ASSOCIATED; do
        grep -Eq "^MimeType=(.*;)?$m;" "$entry" || die "MimeType= of $(basename "$entry") lacks $m"
    done
    say "  desktop entry valid: $exec_line; MimeType= lists all $(echo "$REQUIRED $ASSOCIATED" | tr ' ' '\n' | sort -u | wc -l) types"

    # The Parquet type: shipped, and read by shared-mime-info's own tool.
    xml=$(grep -l 'type="application/vnd.apache.parquet"' "$root"/usr/share/mime/packages/*.xml 2>/dev/null | head -1)
    [ -n "$xml" ] || die "the .deb does not define the Parquet MIME type under /usr/share/mime/packages/"
    mkdir -p "$WORK/mime/packages"
    cp "$xml" "$WORK/mime/packages/"
    XDG_DATA_HOME="$WORK" update-mime-database "$WORK/mime" 2>&1 | sed 's/^/    /' >&2
    grep -q '^50:application/vnd.apache.parquet:\*\.parquet$' "$WORK/mime/globs2" \
        || die "update-mime-database made no *.parquet glob from $(basename "$xml"): $(cat "$WORK/mime/globs2")"
    grep -q 'PAR1' "$WORK/mime/magic" || die "the Parquet type has no PAR1 magic in the built database"
    say "  Parquet MIME definition: /usr/share/mime/packages/$(basename "$xml") (*.parquet, PAR1 magic)"

    # The packaged binary, started from the unpacked files.
    [ -x "$root/usr/bin/$bin" ] || die "the .deb has no executable usr/bin/$bin"
    say "  usr/bin/$bin: $(du -h "$root/usr/bin/$bin" | cut -f1)"
    start deb "$root/usr/bin/$bin"
}

check_appimage() {
    img=$1
    say "$(basename "$img"): $(du -h "$img" | cut -f1) ($(stat -c %s "$img") bytes)"
    # Extracted into the current folder: run from the work folder, not the checkout.
    start appimage "$img" --appimage-extract-and-run
}

# start NAME PROGRAM [ARGS]: on an Xvfb of its own, with a fresh data folder, until it
# draws its first content; then a screenshot that must show its window.
start() {
    name=$1
    shift
    out="$WORK/$name.display"
    rm -f "$out"
    Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$out" >/dev/null 2>&1 &
    XVFB=$!
    i=0
    until [ -s "$out" ]; do
        i=$((i + 1)); [ $i -le 100 ] || die "Xvfb did not start"; sleep 0.1
    done
    disp=":$(cat "$out")"
    data=$(mktemp -d -p "$WORK")
    log="$WORK/$name.log"
    t0=$(date +%s%N)
    (cd "$WORK" && DISPLAY=$disp NO_AT_BRIDGE=1 WEBKIT_DISABLE_COMPOSITING_MODE=1 \
        SANDALYST_TIMING=1 SANDALYST_DATA_DIR=$data HOME="$data" exec "$@" >"$log" 2>&1) &
    APP=$!
    i=0
    until grep -qs "first content after" "$log"; do
        i=$((i + 1))
        kill -0 $APP 2>/dev/null || { cat "$log" >&2; die "the $name's app exited"; }
        [ $i -le 300 ] || { cat "$log" >&2; die "the $name's app drew nothing in 60 s"; }
        sleep 0.2
    done
    t1=$(date +%s%N)
    say "  $name: $(grep -o 'first content after [0-9]* ms' "$log") (the app's own measure); $(( (t1 - t0) / 1000000 )) ms from the start to that line"
    sleep 3
    shot="$SHOTS/$name.png"
    DISPLAY=$disp import -window root "$shot"
    colours=$(convert "$shot" -format %k info:)
    windows=$(DISPLAY=$disp xwininfo -root -tree | grep -c '"Sandalyst"' || true)
    [ "$windows" -ge 1 ] || die "the $name's app shows no window named Sandalyst"
    [ "$colours" -ge 64 ] || die "the $name's screenshot $shot has $colours colours: nothing drawn"
    say "  $name: window mapped, screenshot $shot ($colours colours)"
    pkill -TERM -P "$APP" 2>/dev/null || true
    kill "$APP" 2>/dev/null || true
    wait "$APP" 2>/dev/null || true
    APP=""
    kill "$XVFB" 2>/dev/null || true
    wait "$XVFB" 2>/dev/null || true
    XVFB=""
}

for f in $FILES; do
    case "$f" in
        *.deb) check_deb "$f" ;;
        *.AppImage) check_appimage "$f" ;;
        *) die "$f is neither a .deb nor an AppImage" ;;
    esac
done
say "all checks passed; screenshots in $SHOTS"
