#!/bin/sh
# Screenshots of the desktop app's main states under Xvfb, into docs/screenshots/.
# Needs what scripts/setup-desktop.sh installs, and a Docker engine (the offline
# analyst runs the reference case in the real sandbox).
set -eu
cd "$(dirname "$0")/.."
[ -d "$HOME/.cargo/bin" ] && PATH="$HOME/.cargo/bin:$PATH"
export NO_AT_BRIDGE=1
cargo test -p sandalyst-desktop --test webdriver -- --ignored --exact screenshots --nocapture "$@"
ls -l "${SCREENSHOTS_DIR:-docs/screenshots}"
