#!/bin/sh
# The desktop app's tests: JavaScript modules (node --test, no npm), the shell's
# command and path tests (Tauri's mock runtime), and the end-to-end WebDriver suite
# under Xvfb against the real Docker engine. scripts/test.sh calls this after setup.
set -eu
cd "$(dirname "$0")/.."
scripts/setup-desktop.sh
[ -d "$HOME/.cargo/bin" ] && PATH="$HOME/.cargo/bin:$PATH"
export NO_AT_BRIDGE=1
if command -v node >/dev/null 2>&1; then
    node --test ui/tests/
else
    echo "test-desktop: node is not installed: the JavaScript module tests did not run" >&2
    exit 1
fi
cargo test -p sandalyst-desktop "$@"
