#!/bin/sh
# The desktop's benchmark (BENCHMARKS.md, "The desktop app"): memory with the reference
# session open, and how fast the window answers while a cell prints 10 MB, under Xvfb,
# driven by WebDriver; prints the figures. It drives the app installed from the .deb
# (scripts/package.sh) when there is one, else this checkout's debug build.
# BENCH_PRINT_MB sets how much the cell prints (default 10).
set -eu
cd "$(dirname "$0")/.."
scripts/setup-desktop.sh
[ -d "$HOME/.cargo/bin" ] && PATH="$HOME/.cargo/bin:$PATH"
export NO_AT_BRIDGE=1
if [ -z "${SANDALYST_DESKTOP_APP:-}" ] && [ -x /usr/bin/sandalyst-desktop ]; then
    export SANDALYST_DESKTOP_APP=/usr/bin/sandalyst-desktop
fi
echo "bench-desktop: the app: ${SANDALYST_DESKTOP_APP:-this checkout's debug build}" >&2
cargo test -p sandalyst-desktop --test webdriver -- --ignored --exact responsiveness_while_a_cell_prints --nocapture "$@"
