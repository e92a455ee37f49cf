#!/bin/sh
# Issue 11's figures in one command: builds the release bench, then prints the tables of
# BENCHMARKS.md, each row with a baseline measured in the same run and the ratio.
#
#   scripts/bench.sh          small sizes (100k-row table, 100 MB staged): a few minutes
#   scripts/bench.sh --full   the issue's sizes (1M- and 10M-row tables, 1 GB staged),
#                             then the detailed `sandbox` and `session` benches
#   scripts/bench.sh --tiny   proves the bench runs (the test suite does the same)
#   scripts/bench.sh --isolation [--tiny]
#                             issue 38's table alone: sandbox ready, the first pandas
#                             cell, a shell call and the reference case under runc and
#                             under gVisor (runsc), cold and warm, beside a plain
#                             `docker run --runtime=...` of the image (about 3 minutes
#                             a round; SANDALYST_BENCH_N rounds, 3 by default)
#   scripts/bench.sh --cli-reference
#                             issue 38's scripted reference case alone, as one
#                             command-line process under runc and gVisor taking
#                             turns: wall time and when the first model request came
#
# Needs Docker and the sandbox image (scripts/setup.sh); SANDALYST_IMAGE picks another
# image, SANDALYST_BENCH_NO_DOCKER=1 measures only what needs no engine,
# SANDALYST_BENCH_ONLY=tables|loop|reference|staging|isolation|cli one table alone,
# SANDALYST_BENCH_N=7 more repetitions than the size's own.
set -eu
cd "$(dirname "$0")/.."
SIZE=""
for arg in "$@"; do
    case "$arg" in
    --full | --tiny) SIZE="$arg" ;;
    --small) ;;
    --isolation)
        SANDALYST_BENCH_ONLY=isolation
        export SANDALYST_BENCH_ONLY
        ;;
    --cli-reference)
        SANDALYST_BENCH_ONLY=cli
        export SANDALYST_BENCH_ONLY
        ;;
    *)
        echo "usage: scripts/bench.sh [--tiny | --small | --full] [--isolation | --cli-reference]" >&2
        exit 2
        ;;
    esac
done
[ -d "$HOME/.cargo/bin" ] && PATH="$HOME/.cargo/bin:$PATH"
echo "# $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $(docker version --format 'Docker {{.Server.Version}}' 2>/dev/null || echo 'no Docker')" >&2
# `cargo bench` builds the release profile (and the `sandalyst` binary the cold runs use).
cargo bench -q -p sandalyst --bench suite -- $SIZE
if [ "$SIZE" = "--full" ] && [ "${SANDALYST_BENCH_ONLY:-}" != isolation ]; then
    echo
    echo "### Sandbox detail (cargo bench --bench sandbox)"
    cargo bench -q -p sandalyst --bench sandbox
    echo
    echo "### Session detail (cargo bench --bench session)"
    cargo bench -q -p sandalyst --bench session
fi
