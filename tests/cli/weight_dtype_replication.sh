#!/usr/bin/env bash
# workload.weight_dtype with hot-expert replication (docs/configuration.md#workload): the
# replication fixture on dgx-h100 with 16384 tokens per GPU, so that the shared expert's time
# lets every run place the same replicas (the slots run out first), in fp8, fp4 and bf16 weights.
# Each run passes its checks and names its weight_dtype in report.json's scenario section; one
# expert's weights are 3 x hidden x moe_hidden parameters at 1, 0.5625 and 2 bytes; with the same
# replicas, every GPU's broadcast bytes are 0.5625x (fp4) and 2x (bf16) the fp8 run's; on Hopper
# (fp4_tflops = fp8_tflops, assumed) the shared expert's time is the fp8 run's for fp4 and twice
# it for bf16 (bf16_tflops is half the fp8 peak and the GEMM is compute-bound).
# usage: weight_dtype_replication.sh NVSVP REPLICATION_SCENARIO WORKDIR
nvsvp=$1
scenario=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
for dtype in fp8 fp4 bf16; do
  "$nvsvp" run "$scenario" --set workload.tokens_per_gpu=16384 --set "workload.weight_dtype=$dtype" \
    --out "$work/$dtype" --quiet || { echo "FAIL: the $dtype run exited $?"; exit 1; }
done
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
reports = {d: json.load(open(f"{work}/{d}/report.json")) for d in ("fp8", "fp4", "bf16")}
failures = []
def check(ok, what):
    if not ok:
        failures.append(what)
for dtype, report in reports.items():
    check(report["passed"] is True, f"{dtype}: the run did not pass its checks")
    check(report["scenario"]["weight_dtype"] == dtype, f"{dtype}: scenario.weight_dtype is {report['scenario'].get('weight_dtype')}")
rep = {d: r["results"][0]["replication"] for d, r in reports.items()}
parameters = 3 * 2048 * 512  # model S: hidden 2048, moe_hidden 512
expected_bytes = {"fp8": parameters, "fp4": parameters // 2 + parameters // 16, "bf16": 2 * parameters}
for dtype, bytes_ in expected_bytes.items():
    check(rep[dtype]["expert_weight_bytes"] == bytes_,
          f"{dtype}: expert_weight_bytes {rep[dtype]['expert_weight_bytes']}, expected {bytes_}")
placements = {d: [(p["expert"], p["gpus"]) for p in r["replicas"]] for d, r in rep.items()}
check(placements["fp8"] != [], "fp8: no replica placed, nothing to compare")
for dtype, ratio in (("fp4", 0.5625), ("bf16", 2.0)):
    check(placements[dtype] == placements["fp8"], f"{dtype}: replicas {placements[dtype]} differ from fp8's {placements['fp8']}")
    for gpu, (sent, fp8_sent) in enumerate(zip(rep[dtype]["bytes_sent"], rep["fp8"]["bytes_sent"])):
        check(sent == fp8_sent * ratio, f"{dtype}: GPU {gpu} sent {sent} bytes, expected {ratio} x {fp8_sent}")
    check(rep[dtype]["weight_chunks_landed"] == rep[dtype]["weight_chunks_expected"], f"{dtype}: chunks missing")
shared = {d: r["shared_expert_time_us"] for d, r in rep.items()}
check(abs(shared["fp4"] - shared["fp8"]) <= 1e-6 * shared["fp8"], f"shared expert times fp4 {shared['fp4']} vs fp8 {shared['fp8']}")
check(abs(shared["bf16"] - 2 * shared["fp8"]) <= 0.01 * shared["fp8"], f"shared expert times bf16 {shared['bf16']} vs fp8 {shared['fp8']}")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
PY
