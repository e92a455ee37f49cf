#!/bin/sh
# Issue 21's data explorer beside DuckDB and pandas (BENCHMARKS.md, "Issue 21: data
# explorer"): builds the release bench, makes a Python venv with duckdb, pandas and
# pyarrow for the baselines (once, in $SANDALYST_BENCH_VENV or /tmp/bench-venv), and
# prints the tables.
#
#   scripts/bench-explore.sh            10,000,000 rows (a 650 MB CSV, generated once)
#   scripts/bench-explore.sh --small    1,000,000 rows
#
# SANDALYST_BENCH_DIR keeps the generated files (default: the temp folder),
# SANDALYST_BENCH_N the runs per figure (default 5).
set -eu
cd "$(dirname "$0")/.."
case "${1:-}" in
--small) export SANDALYST_BENCH_ROWS="${SANDALYST_BENCH_ROWS:-1000000}" ;;
"") ;;
*)
    echo "usage: scripts/bench-explore.sh [--small]" >&2
    exit 2
    ;;
esac
VENV="${SANDALYST_BENCH_VENV:-/tmp/bench-venv}"
if ! "$VENV/bin/python" -c 'import duckdb, pandas, pyarrow' 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q duckdb pandas pyarrow
fi
export SANDALYST_BENCH_PYTHON="$VENV/bin/python"
echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores" >&2
cargo bench -q -p sandalyst --bench explore
