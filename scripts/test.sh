#!/bin/sh
# The whole test suite: set-up (packages, Docker engine, sandbox image), then every
# test of the workspace against the real Docker daemon.
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh
[ -d "$HOME/.cargo/bin" ] && PATH="$HOME/.cargo/bin:$PATH"
cargo test --workspace "$@"
