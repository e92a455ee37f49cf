#!/bin/sh
# Idempotent set-up of what the desktop app needs on Debian/Ubuntu, on top of
# scripts/setup.sh: WebKitGTK and GTK headers to build it, Xvfb, WebKitWebDriver and
# Node (module tests) for its tests, ImageMagick for screenshots, and tauri-driver.
# The tests of the desktop's habits (tests/desktop/habits.rs) run a D-Bus session bus
# (dbus-daemon, dbus-send, dbus-monitor) with a notification server (dunst) and a file
# manager (Thunar) on it, and move the focus with xdotool. The window-state tests
# (tests/desktop/window.rs) maximise the window under a window manager (openbox).
# A second run only checks and returns in seconds.
set -eu
cd "$(dirname "$0")/.."

say() { echo "setup-desktop: $*" >&2; }
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

pkgs="libwebkit2gtk-4.1-dev libgtk-3-dev libsoup-3.0-dev libjavascriptcoregtk-4.1-dev librsvg2-dev
      build-essential pkg-config libssl-dev xvfb xauth webkit2gtk-driver dbus-x11 fonts-dejavu-core nodejs imagemagick
      dbus-daemon dbus-bin dunst thunar xdotool openbox"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    say "installing system packages:$missing"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
        -o DPkg::Lock::Timeout=900 $missing >/dev/null
fi

[ -d "$HOME/.cargo/bin" ] && PATH="$HOME/.cargo/bin:$PATH"
if ! command -v tauri-driver >/dev/null 2>&1; then
    say "installing tauri-driver (WebDriver for Tauri apps)"
    cargo install tauri-driver --locked --quiet
fi
