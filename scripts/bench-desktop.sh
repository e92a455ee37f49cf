#!/bin/sh
# The desktop's responsiveness benchmark (BENCHMARKS.md, "The desktop app"): the
# release app under Xvfb, driven by WebDriver; prints the table. BENCH_PRINT_MB sets
# how much the cell prints (default 10).
set -eu
cd "$(dirname "$0")/.."
scripts/setup-desktop.sh
[ -d "$HOME/.cargo/bin" ] && PATH="$HOME/.cargo/bin:$PATH"
export NO_AT_BRIDGE=1
cargo test --release -p sandalyst-desktop --test webdriver -- --ignored --exact responsiveness_while_a_cell_prints --nocapture "$@"
