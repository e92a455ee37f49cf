#!/bin/sh
# The reference case end to end: examples/building_energy.csv in, three artifacts out
# (anomalies.csv, energy_anomalies.png, anomaly_report.md), on the built-in offline
# analyst unless --model says otherwise. Extra arguments go to `sandalyst run`.
set -eu
cd "$(dirname "$0")/.."
scripts/setup.sh
OUT=${OUT:-demo-output}
"${CARGO_TARGET_DIR:-target}/debug/sandalyst" run \
    --input examples/building_energy.csv \
    --prompt-file examples/anomaly_task.md \
    --out "$OUT" "$@"
echo "outputs:" >&2
ls -l "$OUT" >&2
