#!/bin/sh
# The whole test suite. Set-up first, idempotently: system packages, a Docker engine,
# the sandbox image (scripts/setup.sh), WebKitGTK, Xvfb, WebKitWebDriver, Node and
# tauri-driver for the desktop (scripts/setup-desktop.sh), Podman (scripts/setup-podman.sh).
# Then every test of the
# workspace: the core against the real Docker daemon, the desktop app's commands and
# its WebDriver suite under Xvfb (it starts its own display), and the page's
# JavaScript modules under Node's test runner.
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh --gvisor
scripts/setup-desktop.sh
# Podman (rootful and rootless) for the engine tests: packages, the sandbox image
# copied from Docker (cached by tag), the unprivileged test user.
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
TAG=$("${CARGO_TARGET_DIR:-target}/debug/sandalyst" image status | sed -n 's/^image: *//p')
$SUDO scripts/setup-podman.sh --rootless sandalyst-rootless "$TAG"
[ -d "$HOME/.cargo/bin" ] && PATH="$HOME/.cargo/bin:$PATH"
export NO_AT_BRIDGE=1
node --test ui/tests/
# Here an engine test that finds no engine fails instead of skipping (README, Testing).
export SANDALYST_REQUIRE_ENGINE=1 SANDALYST_REQUIRE_GVISOR=1
cargo test --workspace "$@"
