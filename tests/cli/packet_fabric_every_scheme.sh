#!/usr/bin/env bash
# Every scheme on the packet fabric (simulation.fabric: packet, docs/models/packet_fabric.md), on
# dgx-h100 and on 16 GPUs of gh200-nvl32 and of gb200-nvl72: fault-free, a link down for good, a chip down, bit errors and lost credits, the
# in-switch schemes with reduction-buffer evictions, and the schemes that run within partitions on
# two partitions; the matching allocators (iSLIP, wavefront). Each run exits 0 and every scheme passes
# every check (every token delivered and verified, every message's packets gathered, link
# arrivals as the plan implies, faults accounted).
# usage: packet_fabric_every_scheme.sh NVSVP SCENARIO WORKDIR
nvsvp=$1
scenario=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
schemes=$(bash "$(dirname "$0")/every_scheme.sh" "$nvsvp")
run() {  # name, then --set options
  local name=$1
  shift
  "$nvsvp" run "$scenario" --set simulation.fabric=packet --set software.tutel_degree=2 \
    --set platform.switch.register_access_ns=1000 "$@" --out "$work/$name" --quiet ||
    { echo "FAIL: $name exited $?"; exit 1; }
  python3 - "$work/$name/report.json" "$name" <<'PY' || exit 1
import json, sys
report = json.load(open(sys.argv[1]))
failed = [r["scheme"] for r in report["results"] if not r["checks"]["passed"]]
if failed or not report["passed"]:
    print(f"FAIL: {sys.argv[2]}: checks failed for {failed}")
    sys.exit(1)
print(f"{sys.argv[2]}: {len(report['results'])} schemes passed")
PY
}
run fault_free --set "$schemes"
run link_down --set "$schemes" --set "faults=[{kind: link_down, gpu: 2, link: 5, at_us: 3}]"
run chip_down --set "$schemes" --set "faults=[{kind: chip_down, chip: 1, at_us: 3}]"
run bit_errors --set "$schemes" --set "faults=[{kind: bit_errors, rate_per_flit: 0.001}]"
run credit_loss --set "$schemes" --set "faults=[{kind: credit_loss, gpu: 1, link: 2, at_us: 1, credits: 64}]"
# A reduction buffer too small for one packet's reduction: partial sums passed on per packet.
run evictions --set "schemes=[nvls,dysharp-basic,explicit-addressing-basic,dysharp]" \
  --set platform.switch.reduction_buffer_bytes=256 --set platform.gpu.load_bytes_in_flight_per_link=1000000
# Reduced rack-scale presets: 16 GPUs of gh200-nvl32 and of gb200-nvl72 (one link per chip).
run gh200_nvl32 --set "$schemes" --set "platform={preset: gh200-nvl32, gpus: 16}" --set workload.tokens_per_gpu=8 --no-timelines
run gb200_nvl72 --set "$schemes" --set "platform={preset: gb200-nvl72, gpus: 16}" --set workload.tokens_per_gpu=8 --no-timelines
# The matching allocators (docs/models/switch_chip.md#switch-allocation).
run islip --set "$schemes" --set platform.switch.arbiter=islip --set platform.switch.allocator_iterations=2
run wavefront_chip_down --set "$schemes" --set platform.switch.arbiter=wavefront --set "faults=[{kind: chip_down, chip: 1, at_us: 3}]"
run partitions --set "schemes=[deepep,deepep-ll,nvls,tutel,fastermoe,ccfuser,comet,fusion-only]" \
  --set "partitions=[[0, 1, 2, 3], [4, 5, 6, 7]]"
echo "every scheme passed on the packet fabric"
