#!/usr/bin/env bash
# Proof that a speed change changed nothing else: runs a fixed set of small scenarios (every
# scheme, both reduction backends, multi-chip routing, hot-expert replication, link faults and
# outages, partitions, a training step, an inference request) and the effective configuration of
# every shipped scenario (validate --dump), and writes each
# report.json with the host-dependent figures (wall times, memory, copies per wall-second) and the
# nvsvp section (version, commit, command line) removed, plus every timeline file (utilization
# CSV, trace JSON, link CSV) and the effective scenario.yaml, into DIR.
#
#   scripts/same_results.sh DIR [NVSVP]     # NVSVP: the binary to run (default build/nvsvp)
#   diff -r before/ after/                   # empty when the change kept every result
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: scripts/same_results.sh DIR [NVSVP]}
nvsvp=${2:-build/nvsvp}
# Every scheme the binary knows, so that a new scheme is covered without editing this script.
all="schemes=[$("$nvsvp" presets | awk '$1 == "scheme" {printf "%s%s", sep, $2; sep = ", "}')]"
mkdir -p "$dir"

run() {  # name, scenario, --set arguments...
  local name=$1 scenario=$2
  shift 2
  local out="$dir/$name"
  rm -rf "$out"
  local code=0
  "$nvsvp" run "$scenario" --quiet --out "$out" "$@" || code=$?
  echo "exit $code" > "$out/exit_code"
  python3 - "$out/report.json" <<'EOF'
import json, sys
path = sys.argv[1]
report = json.load(open(path))
# Host measurements, and the nvsvp section (version, commit and command line differ between builds).
host = {"wall_seconds", "plan_seconds", "simulate_seconds", "verify_seconds", "peak_rss_mb",
        "remote_token_copies_per_wall_second", "nvsvp"}
def strip(node):
    if isinstance(node, dict):
        return {k: strip(v) for k, v in node.items() if k not in host}
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node
json.dump(strip(report), open(path, "w"), indent=1, sort_keys=True)
EOF
  echo "$name: exit $code"
}

run default configs/scenarios/default.yaml --set "$all"
run small_rtl tests/data/small_uniform.yaml --set "$all" --set platform.switch.reduction_backend=rtl \
  --set workload.tokens_per_gpu=64
run nvl32 configs/scenarios/bench/deepep_L8_nvl32.yaml --set "$all" --set workload.model=S \
  --set workload.tokens_per_gpu=256 --set workload.routing.kind=zipf --set workload.routing.exponent=1.0
run replication tests/data/small_replication.yaml --set 'schemes=[deepep, dysharp]'
run faults tests/data/small_uniform.yaml --set "$all" --set software.tutel_degree=2 \
  --set "faults=[{kind: bit_errors, rate_per_flit: 2.0e-4, seed: 3}, {kind: credit_loss, gpu: 2, link: 5, at_us: 0, credits: 250}, {kind: link_down, gpu: 5, link: 0, at_us: 2, up_at_us: 6, direction: from_switch}, {kind: chip_down, chip: 1, at_us: 3}]"
run partitions tests/data/small_uniform.yaml --set software.tutel_degree=2 \
  --set "schemes=[deepep, nvls, tutel, fastermoe, ccfuser, comet, fusion-only]" \
  --set "partitions=[[6, 1], [0, 2, 3, 4]]" --set "faults=[{kind: link_down, gpu: 0, link: 2, at_us: 2}]"
run training_step configs/scenarios/training_step_l8_pipeline.yaml --set workload.tokens_per_gpu=256 \
  --set step.sample_layers=2
run inference configs/scenarios/inference_l8.yaml --set workload.tokens_per_gpu=256 --set step.sample_layers=2 \
  --set step.decode_steps=16 --set step.prompt_tokens=256
# The effective configuration of every shipped scenario.
mkdir -p "$dir/dumps"
for scenario in configs/scenarios/*.yaml configs/scenarios/*/*.yaml; do
  name=$(echo "${scenario#configs/scenarios/}" | tr / _)
  "$nvsvp" validate "$scenario" --dump > "$dir/dumps/$name" 2>&1 || echo "exit $?" >> "$dir/dumps/$name"
done
echo "dumps: $(ls "$dir/dumps" | wc -l) scenarios"
