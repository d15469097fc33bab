#!/usr/bin/env bash
# The fast fabric against the packet fabric on cases larger than the test's
# (tests/cli/fast_fabric_agrees.sh): each case runs on both engines and a table per case and scheme
# gives fast over packet for the layer time, the largest per-GPU finish difference, whether every
# link's bytes are equal, both engines' checks and wall times. The figures go to
# docs/models/fabric_engine.md. Takes about half an hour on two cores (the packet engine's runs).
#
#   scripts/fabric_agreement.sh DIR [NVSVP]      # NVSVP: the binary (default build/nvsvp)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: scripts/fabric_agreement.sh DIR [NVSVP]}
nvsvp=${2:-build/nvsvp}
mkdir -p "$dir"
schemes="schemes=[deepep,deepep-ll,tutel,fastermoe,ccfuser,comet,fusion-only]"
case_() {  # name, scenario, --set options for both engines
  local name=$1 scenario=$2
  shift 2
  for engine in packet fast; do
    "$nvsvp" run "$scenario" --set simulation.fabric=$engine "$@" --out "$dir/$name/$engine" --quiet --no-timelines \
      > "$dir/$name/$engine.log" 2>&1 || echo "$name on $engine exited $?" >> "$dir/$name/$engine.log"
  done
}
mkdir -p "$dir"/{default_512,nvl32_128,nvl72_64,small_buffers_256,bit_errors_512,replication_p2p_256,replication_multicast_256}
case_ default_512 configs/scenarios/default.yaml --set "$schemes" --set workload.tokens_per_gpu=512
case_ nvl32_128 configs/scenarios/default.yaml --set "$schemes" --set platform=gh200-nvl32 --set workload.tokens_per_gpu=128
case_ nvl72_64 configs/scenarios/default.yaml --set "$schemes" --set "platform={preset: gb200-nvl72, gpus: 64}" --set workload.tokens_per_gpu=64
case_ small_buffers_256 configs/scenarios/default.yaml --set "$schemes" --set workload.tokens_per_gpu=256 \
  --set platform.switch.vcs_per_class=2 --set platform.switch.vc_depth_flits=64
case_ bit_errors_512 configs/scenarios/default.yaml --set "$schemes" --set workload.tokens_per_gpu=512 \
  --set "faults=[{kind: bit_errors, rate_per_flit: 1e-5}]"
# Hot-expert replication (eight shared experts and fp4 weights give iser a window: two replicas),
# broadcast by p2p writes and by the switch's multicast.
for broadcast in p2p multicast; do
  case_ replication_${broadcast}_256 configs/scenarios/default.yaml --set "schemes=[deepep,fusion-only]" \
    --set workload.tokens_per_gpu=256 --set workload.shared_experts=8 --set workload.weight_dtype=fp4 \
    --set "workload.routing={kind: zipf, exponent: 1.0, seed: 5}" \
    --set "replication={policy: iser, broadcast: $broadcast, slots_per_gpu: 2, chunk_bytes: 4096}"
done
python3 - "$dir" <<'PY'
import json, os, sys
root = sys.argv[1]
print("| case | scheme | layer time, packet (µs) | fast / packet | largest GPU-finish difference | links | checks | wall time, packet → fast (s) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for case in sorted(os.listdir(root)):
    try:
        reports = {e: json.load(open(f"{root}/{case}/{e}/report.json")) for e in ("packet", "fast")}
    except (OSError, ValueError) as error:
        print(f"| {case} | (no report: {error}) | | | | | | |")
        continue
    fast = {r["scheme"]: r for r in reports["fast"]["results"]}
    def links(engine, scheme):  # per link and direction: packets and wire bytes
        import csv
        with open(f"{root}/{case}/{engine}/links_{scheme}.csv") as f:
            return {(r["direction"], r["gpu"], r["link"]): (r["packets"], r["wire_bytes"]) for r in csv.DictReader(f)}
    for p in reports["packet"]["results"]:
        f = fast.get(p["scheme"])
        if f is None:
            continue
        finish = max(abs(gf["finish_us"] / gp["finish_us"] - 1) for gp, gf in zip(p["gpus"], f["gpus"]))
        same_links = links("packet", p["scheme"]) == links("fast", p["scheme"])
        checks = f"{'pass' if p['checks']['passed'] else 'FAIL'}/{'pass' if f['checks']['passed'] else 'FAIL'}"
        print(f"| {case} | {p['scheme']} | {p['layer_time_us']:.2f} | {f['layer_time_us'] / p['layer_time_us']:.4f} | "
              f"{100 * finish:.2f} % | {'equal' if same_links else 'DIFFER'} | {checks} | "
              f"{p['sim']['wall_seconds']:.2f} → {f['sim']['wall_seconds']:.2f} |")
PY
