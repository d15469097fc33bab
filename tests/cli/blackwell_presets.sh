#!/usr/bin/env bash
# The Blackwell presets (docs/background/nvlink_nvswitch.md#blackwell-generation): every scheme
# runs on gb200-nvl72 (72 GPUs, 18 chips of 72 ports) and on hgx-b200 (8 GPUs, 2 chips of 72
# ports) and passes its checks, with a layer of model S's shape widened to 144 experts (2 per GPU
# on 72 GPUs, which 64 would not divide) and 32 tokens per GPU. On gb200-nvl72 hot-expert
# replication by switch multicast to groups of all 72 GPUs runs too (every member bit past 64).
# usage: blackwell_presets.sh NVSVP SCENARIO WORKDIR
nvsvp=$1
scenario=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
schemes=$("$nvsvp" presets | awk '$1 == "scheme" {printf "%s%s", sep, $2; sep = ","}')
for preset in gb200-nvl72 hgx-b200; do
  "$nvsvp" run "$scenario" --out "$work/$preset" --quiet --no-timelines --set "platform=$preset" \
    --set "workload.model={preset: S, experts: 144}" --set "schemes=[$schemes]" \
    --set simulation.max_time_us=100000 || { echo "FAIL: $preset exited $?"; exit 1; }
done
"$nvsvp" run "$scenario" --out "$work/replication" --quiet --no-timelines --set platform=gb200-nvl72 \
  --set "workload.model={preset: S, experts: 144}" --set workload.shared_experts=1 \
  --set workload.tokens_per_gpu=16384 --set "workload.routing={kind: zipf, exponent: 1.0, seed: 5}" \
  --set "replication={policy: iser, broadcast: multicast, groups: [72], slots_per_gpu: 2, chunk_bytes: 65536}" \
  --set simulation.max_time_us=100000 || { echo "FAIL: replication on gb200-nvl72 exited $?"; exit 1; }
python3 - "$work" "$schemes" <<'PY'
import json, sys
work, schemes = sys.argv[1], sys.argv[2].split(",")
failures = []
for preset, gpus in (("gb200-nvl72", 72), ("hgx-b200", 8)):
    report = json.load(open(f"{work}/{preset}/report.json"))
    ran = [r["scheme"] for r in report["results"]]
    if ran != schemes:
        failures.append(f"{preset}: ran {ran}, expected {schemes}")
    for r in report["results"]:
        if r.get("error") or not r["checks"]["passed"]:
            failures.append(f"{preset}: {r['scheme']} failed: {r.get('error') or r['checks'].get('violations')}")
        elif len(r["gpus"]) != gpus:
            failures.append(f"{preset}: {r['scheme']} reports {len(r['gpus'])} GPUs")
rep = json.load(open(f"{work}/replication/report.json"))["results"][0]
replication = rep["replication"]
if not rep["checks"]["passed"]:
    failures.append("replication: checks failed")
if not replication["replicas"] or replication["replicas"][0]["group_size"] != 72:
    failures.append(f"replication: no replica on the 72-GPU group ({replication['replicas'][:1]})")
if replication["weight_chunks_landed"] != replication["weight_chunks_expected"] or replication["weight_chunks_expected"] == 0:
    failures.append(f"replication: {replication['weight_chunks_landed']} of {replication['weight_chunks_expected']} chunks landed")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
PY
