#!/usr/bin/env bash
# The stream over routing traces (docs/configuration.md#stream): one trace file per layer and
# iteration, named by {layer} and {iteration}. The traces are written here (deepseek-v4-pro-like
# on dgx-h100, 2048 tokens per GPU, 2 layers x 6 iterations: zipf 0.6 over a per-layer ranking
# of the experts whose hot ranks change as the iterations go). Checked from stream.csv, recomputed
# here from the files themselves: every (layer, iteration) row's excess before balancing is what
# its file's decisions put on the GPUs; iser keeps only last iteration's replicas; the static
# balancer at iteration 0 is placed from that iteration's own loads. The same run twice gives the
# same stream.
# usage: replication_stream_traces.sh NVSVP WORKDIR
nvsvp=$1
work=$2
rm -rf "$work"
mkdir -p "$work/traces"
python3 - "$work/traces" <<'PY' || exit 1
import random, sys
out = sys.argv[1]
gpus, tokens_per_gpu, experts, top_k = 8, 2048, 384, 6
for layer in range(2):
    rng = random.Random(7 + layer)
    ranks = list(range(experts))
    rng.shuffle(ranks)
    for iteration in range(6):
        if iteration:
            for _ in range(3):  # three of the hot ranks trade places with colder ones
                a, b = rng.randrange(16), rng.randrange(16, experts)
                ranks[a], ranks[b] = ranks[b], ranks[a]
        weights = [0.0] * experts
        for rank, expert in enumerate(ranks):
            weights[expert] = (rank + 1) ** -0.6
        with open(f"{out}/l{layer}_i{iteration}.csv", "w") as f:
            for _ in range(gpus * tokens_per_gpu):
                chosen = set()
                while len(chosen) < top_k:
                    chosen.add(rng.choices(range(experts), weights)[0])
                f.write(",".join(map(str, sorted(chosen))) + "\n")
PY
cat > "$work/stream.yaml" <<'YAML'
name: trace_stream
platform: dgx-h100
workload:
  model: deepseek-v4-pro-like
  weight_dtype: fp4
  tokens_per_gpu: 2048
  routing: {kind: trace, file: "traces/l{layer}_i{iteration}.csv"}   # quoted: braces in a flow mapping
schemes: [deepep]
replication: {broadcast: multiport, slots_per_gpu: 4}
stream: {iterations: 6, layers: 2, static_refresh: 3}
YAML
for name in a b; do
  "$nvsvp" run "$work/stream.yaml" --out "$work/$name" --quiet || { echo "FAIL: run $name exited $?"; exit 1; }
done
python3 - "$work" <<'PY'
import csv, json, sys
work = sys.argv[1]
failures = []
def check(ok, what):
    if not ok:
        failures.append(what)

gpus, experts = 8, 384
report = json.load(open(f"{work}/a/report.json"))
rows = list(csv.DictReader(open(f"{work}/a/stream.csv")))
stream = report["stream"]
check(report["passed"] is True and stream["passed"] is True, "the run did not pass")
check(len(rows) == 2 * 6 * 3, f"{len(rows)} rows, expected 36")
for layer in range(2):
    for iteration in range(6):
        loads = [0] * gpus
        for line in open(f"{work}/traces/l{layer}_i{iteration}.csv"):
            for e in line.split(","):
                loads[int(e) // (experts // gpus)] += 1
        mean = sum(loads) / gpus
        excess = sum(max(0.0, l - mean) for l in loads)
        mine = [r for r in rows if int(r["layer"]) == layer and int(r["iteration"]) == iteration]
        check(len(mine) == 3, f"layer {layer} iteration {iteration}: {len(mine)} rows")
        for r in mine:
            check(abs(float(r["excess_before"]) - excess) <= 0.05,
                  f"layer {layer} iteration {iteration} {r['policy']}: excess_before {r['excess_before']}, the file's {excess}")
    iser = sorted((int(r["iteration"]), r) for r in rows if r["policy"] == "iser" and int(r["layer"]) == layer)
    for (it, r), (_, prev) in zip(iser[1:], iser):
        check(int(r["kept"]) + int(r["evicted"]) == int(prev["replicas"]),
              f"layer {layer} iteration {it}: kept {r['kept']} + evicted {r['evicted']} != {prev['replicas']}")
    static0 = next(r for r in rows if r["policy"] == "static" and int(r["layer"]) == layer and r["iteration"] == "0")
    check(float(static0["excess_after"]) < float(static0["excess_before"]),
          f"layer {layer}: static placed nothing at iteration 0 from that iteration's loads")
check(stream["policies"]["iser"]["removed_fraction"] > 0.5, f"iser removed {stream['policies']['iser']['removed_fraction']}")
check(stream["policies"]["iser"]["kept"] > 0, "iser kept nothing")
report_b = json.load(open(f"{work}/b/report.json"))
rows_b = list(csv.DictReader(open(f"{work}/b/stream.csv")))
check(rows_b == rows and report_b["stream"] == stream, "the same traces gave another stream")
for f in failures:
    print("FAIL:", f)
print("removed", {p: stream["policies"][p]["removed_fraction"] for p in ("static", "iser")})
sys.exit(1 if failures else 0)
PY
