#!/bin/sh
# Set up (packages, Docker engine, sandbox image, WebKitGTK) and open the desktop app.
# With no model configured it answers with the built-in offline analyst.
# SANDALYST_DATA_DIR picks another data folder (default: ~/.local/share/sandalyst).
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/setup-desktop.sh
[ -d "$HOME/.cargo/bin" ] && PATH="$HOME/.cargo/bin:$PATH"
cargo build --quiet -p sandalyst-desktop
BIN="${CARGO_TARGET_DIR:-target}/debug/sandalyst-desktop"
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
    echo "app: no display (DISPLAY is unset); run it under xvfb-run -a to try it headless" >&2
    exit 1
fi
exec "$BIN" "$@"
