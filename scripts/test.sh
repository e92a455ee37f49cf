#!/bin/sh
# The whole test suite. Set-up first, idempotently: system packages, a Docker engine,
# the sandbox image (scripts/setup.sh), WebKitGTK, Xvfb, WebKitWebDriver, Node and
# tauri-driver for the desktop (scripts/setup-desktop.sh), Podman (scripts/setup-podman.sh).
# Then every test of the
# workspace: the core against the real Docker daemon, the desktop app's commands and
# its WebDriver suite under Xvfb (it starts its own display), and the page's
# JavaScript modules under Node's test runner.
#
# `scripts/test.sh --real-model` runs only the real-model tier instead (tests/real_model.rs;
# slow, not part of the default run): a llama.cpp server of a small open model on
# 127.0.0.1 (scripts/real-model.sh), then the tier's ignored tests one at a time.
set -eu
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--real-model" ]; then
    shift
    scripts/setup.sh
    URL=$(scripts/real-model.sh | tail -n 1)
    export SANDALYST_REAL_MODEL_URL="$URL"
    export SANDALYST_REQUIRE_ENGINE=1
    [ -d "$HOME/.cargo/bin" ] && PATH="$HOME/.cargo/bin:$PATH"
    exec cargo test --workspace --test real_model "$@" -- --ignored --test-threads=1
fi
# gVisor where the system packages it (Debian: runsc); there its test must run.
GVISOR=""
if apt-cache show runsc >/dev/null 2>&1; then GVISOR="--gvisor"; fi
scripts/setup.sh --tests $GVISOR
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
export SANDALYST_REQUIRE_ENGINE=1
[ -z "$GVISOR" ] || export SANDALYST_REQUIRE_GVISOR=1
# `auto` is gVisor where runsc is registered; the whole tier under it takes 2.4 times
# as long (BENCHMARKS.md), so here auto means runc, and gVisor gets its own passes:
# the reference case under the app's own choice (cli::reference_case_under_gvisor),
# the hostile suite and staging below.
export SANDALYST_ISOLATION=runc
if [ $# -eq 0 ]; then
    # Tests that assert what their own start swept from the engine run alone, after
    # the rest: any other test's sandbox start sweeps the same engine (tests/cli.rs,
    # `engine_alone`).
    cargo test --workspace -- --skip engine_alone::
    cargo test --workspace --test docker -- engine_alone::
else
    cargo test --workspace "$@"
fi
# The hostile suite and staging again, each sandbox under gVisor (where the system
# packages it).
if [ -n "$GVISOR" ] && [ $# -eq 0 ]; then
    # --workspace --test docker: the same features as the engine_alone pass above, so
    # nothing is built again (the whole workspace's pass unifies other features).
    SANDALYST_TEST_ISOLATION=gvisor cargo test --workspace --test docker -- hostile:: staging::
fi
