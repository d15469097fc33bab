#!/usr/bin/env bash
# Benchmarks (not timed tests): runs every scenario in configs/scenarios/bench/ and prints, per
# scheme, wall seconds, remote token copies per wall-second and peak memory (from the run's own
# summary); then the reduction unit's benchmark (RTL clock cycles and beats per wall-second
# through the transactor, model beats per second). The figures belong in docs/performance.md
# with the machine they were taken on.
set -euo pipefail
cd "$(dirname "$0")/.."
for scenario in configs/scenarios/bench/*.yaml; do
  name=$(basename "$scenario" .yaml)
  echo "== $name ($(nproc) cores, $(date -u +%Y-%m-%d))"
  build/nvsvp run "$scenario" --out "out/bench/$name"
done
echo "== reduction unit ($(nproc) cores, $(date -u +%Y-%m-%d))"
cmake --build build --target nvsvp_reduction_bench > /dev/null
build/nvsvp_reduction_bench
