#!/bin/sh
# The whole test suite. Set-up first, idempotently: system packages, a Docker engine,
# the sandbox image (scripts/setup.sh), WebKitGTK, Xvfb, WebKitWebDriver, Node and
# tauri-driver for the desktop (scripts/setup-desktop.sh). Then every test of the
# workspace: the core against the real Docker daemon, the desktop app's commands and
# its WebDriver suite under Xvfb (it starts its own display), and the page's
# JavaScript modules under Node's test runner.
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/setup-desktop.sh
[ -d "$HOME/.cargo/bin" ] && PATH="$HOME/.cargo/bin:$PATH"
export NO_AT_BRIDGE=1
node --test ui/tests/
cargo test --workspace "$@"
