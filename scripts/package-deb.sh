#!/bin/sh
# Build the desktop app's .deb with the Tauri bundler, install it, and check that the
# installed app starts and draws its first content under Xvfb (and prints the launch
# time and the memory of all its processes after 20 s idle, for BENCHMARKS.md).
#
#   scripts/package-deb.sh            build, install, start
#   scripts/package-deb.sh --no-install   build only
#
# Needs the desktop's build packages (scripts/setup-desktop.sh) and, once, tauri-cli
# from crates.io (installed here if missing; a few minutes).
set -eu
cd "$(dirname "$0")/.."
say() { echo "package-deb: $*" >&2; }
die() { echo "package-deb: error: $*" >&2; exit 1; }
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
scripts/setup-desktop.sh
[ -d "$HOME/.cargo/bin" ] && PATH="$HOME/.cargo/bin:$PATH"
if ! cargo tauri --version >/dev/null 2>&1; then
    say "installing tauri-cli (once)"
    cargo install tauri-cli --version "^2" --locked
fi
say "building the .deb ($(cargo tauri --version))"
(cd src-tauri && cargo tauri build --bundles deb)
TARGET=${CARGO_TARGET_DIR:-target}
DEB=$(ls -t "$TARGET"/release/bundle/deb/*.deb 2>/dev/null | head -1)
[ -n "$DEB" ] || die "no .deb under $TARGET/release/bundle/deb/"
say "built $DEB ($(du -h "$DEB" | cut -f1))"
dpkg-deb --info "$DEB" | sed -n 's/^ *\(Package\|Version\|Depends\|Installed-Size\):/  \1:/p' >&2
[ "${1:-}" = "--no-install" ] && exit 0

DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$(realpath "$DEB")" >/dev/null
PKG=$(dpkg-deb --field "$DEB" Package)
BIN=$(dpkg -L "$PKG" | grep '/bin/sandalyst-desktop$') || die "the package $PKG has no bin/sandalyst-desktop"
say "installed $BIN"

# Start it on a display of its own with a fresh data folder.
DATA=$(mktemp -d)
LOG=$(mktemp)
DISP=:$((90 + $$ % 9))
Xvfb "$DISP" -screen 0 1280x800x24 >/dev/null 2>&1 &
XVFB=$!
trap 'kill $APP $XVFB 2>/dev/null || true; rm -rf "$DATA" "$LOG"' EXIT
sleep 1
DISPLAY=$DISP NO_AT_BRIDGE=1 SANDALYST_TIMING=1 SANDALYST_DATA_DIR=$DATA "$BIN" >"$LOG" 2>&1 &
APP=$!
i=0
until grep -q "first content after" "$LOG"; do
    i=$((i + 1))
    kill -0 $APP 2>/dev/null || { cat "$LOG" >&2; die "the installed app exited"; }
    [ $i -le 100 ] || { cat "$LOG" >&2; die "the installed app drew nothing in 20 s"; }
    sleep 0.2
done
say "$(grep -o 'first content after [0-9]* ms' "$LOG")"
sleep 20
total=0
for p in $APP $(pgrep -P $APP) $(for c in $(pgrep -P $APP); do pgrep -P "$c"; done); do
    kb=$(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null) || continue
    [ -n "$kb" ] || continue
    say "  $(cat "/proc/$p/comm"): $((kb / 1024)) MB PSS"
    total=$((total + kb))
done
say "idle memory, empty window, all processes: $((total / 1024)) MB PSS"
