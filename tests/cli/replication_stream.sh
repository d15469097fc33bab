#!/usr/bin/env bash
# The stream section (docs/configuration.md#stream): none, static and iser decided on the same
# drifting routing, layer by layer, iteration by iteration. Checked from stream.csv, recomputed
# here: one row per layer, iteration and policy; report.json's totals are the rows' sums; none
# moves nothing; static is re-placed exactly every static_refresh iterations and broadcasts
# nothing; iser keeps only last iteration's replicas (kept + evicted = last iteration's replicas),
# broadcasts exactly the new ones' weights (3 x hidden x moe_hidden fp4 parameters each) and stays
# within its budget. The same run twice gives the same stream; a hot set that lives 1000
# iterations keeps more replicas than one that lives 2. With simulate_every, the sampled
# iterations are simulated under each policy with the stream's replicas, kept ones not broadcast.
# usage: replication_stream.sh NVSVP STREAM_SCENARIO WORKDIR
nvsvp=$1
scenario=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
run() {
  local out=$1
  shift
  "$nvsvp" run "$scenario" --out "$work/$out" --quiet "$@" || { echo "FAIL: run $out exited $?"; exit 1; }
}
run a
run b
run long --set workload.routing.hot_lifetime=1000
run short --set workload.routing.hot_lifetime=2
run simulated --set stream.simulate_every=20 --set stream.layers=1
python3 - "$work" <<'PY'
import csv, json, sys
work = sys.argv[1]
failures = []
def check(ok, what):
    if not ok:
        failures.append(what)

def load(name):
    report = json.load(open(f"{work}/{name}/report.json"))
    rows = list(csv.DictReader(open(f"{work}/{name}/stream.csv")))
    return report, rows

report, rows = load("a")
stream = report["stream"]
check(report["passed"] is True and stream["passed"] is True, "the run did not pass")
layers, iterations, refresh = stream["layers"], stream["iterations"], stream["static_refresh"]
check((layers, iterations, refresh) == (2, 40, 15), f"stream settings {layers} {iterations} {refresh}")
check(len(rows) == layers * iterations * 3, f"{len(rows)} rows, expected {layers * iterations * 3}")
keys = [(int(r["layer"]), int(r["iteration"]), r["policy"]) for r in rows]
check(len(set(keys)) == len(keys), "a (layer, iteration, policy) row twice")

parameters = 3 * 7168 * 2048
expert_bytes = parameters // 2 + parameters // 16
for policy in ("none", "static", "iser"):
    mine = [r for r in rows if r["policy"] == policy]
    total = stream["policies"][policy]
    for key in ("excess_before", "excess_after"):
        summed = sum(float(r[key]) for r in mine)
        check(abs(summed - total[key]) <= 0.5 * len(mine), f"{policy}: {key} rows sum {summed}, report {total[key]}")
    removed = 1 - total["excess_after"] / total["excess_before"]
    check(abs(removed - total["removed_fraction"]) < 1e-9, f"{policy}: removed_fraction {total['removed_fraction']}")

for r in rows:
    where = f"layer {r['layer']} iteration {r['iteration']} {r['policy']}"
    it = int(r["iteration"])
    if r["policy"] == "none":
        check(r["excess_after"] == r["excess_before"] and r["replicas"] == "0", f"{where}: none moved load")
    if r["policy"] == "static":
        check(r["refreshed"] == ("1" if it > 0 and it % refresh == 0 else "0"), f"{where}: refreshed {r['refreshed']}")
        check(r["weight_bytes_broadcast"] == "0", f"{where}: static broadcast weights")
    if r["policy"] == "iser":
        new = int(r["replicas"]) - int(r["kept"])
        check(int(r["weight_bytes_broadcast"]) == new * expert_bytes, f"{where}: bytes {r['weight_bytes_broadcast']} for {new} new replicas")
        check(float(r["estimated_broadcast_us"]) <= float(r["budget_us"]) + 1e-3, f"{where}: over budget")
        check(float(r["excess_after"]) <= float(r["excess_before"]), f"{where}: excess rose")
for layer in range(layers):
    iser = sorted((int(r["iteration"]), r) for r in rows if r["policy"] == "iser" and int(r["layer"]) == layer)
    for (it, r), (_, prev) in zip(iser[1:], iser):
        check(int(r["kept"]) + int(r["evicted"]) == int(prev["replicas"]),
              f"layer {layer} iteration {it}: kept {r['kept']} + evicted {r['evicted']} != last iteration's {prev['replicas']}")
    check(iser[0][1]["kept"] == "0", f"layer {layer}: iteration 0 kept replicas")
check(stream["policies"]["static"]["refreshes"] == layers * ((iterations - 1) // refresh), "static refreshes")
check(stream["policies"]["iser"]["kept"] > 0, "iser kept nothing")

report_b, rows_b = load("b")
check(rows_b == rows and report_b["stream"] == stream, "the same scenario gave another stream")

kept = {}
for name in ("long", "short"):
    rep, _ = load(name)
    iser = rep["stream"]["policies"]["iser"]
    kept[name] = iser["kept"] / max(1, iser["kept"] + iser["new_replicas"])
check(kept["long"] > kept["short"] + 0.2, f"kept fraction: hot_lifetime 1000 {kept['long']:.3f}, 2 {kept['short']:.3f}")
# Simulated iterations 0 and 20: every policy's layer simulated, passing its checks, with the
# replicas (and kept replicas) of its stream.csv row; the gains are the mean layer times' ratios.
report, rows = load("simulated")
stream = report["stream"]
sims = stream["simulated"]
check(report["passed"] is True, "the simulated stream did not pass")
check(len(sims) == 2 * 3, f"{len(sims)} simulated runs, expected 6 (iterations 0 and 20, three policies, deepep)")
row_of = {(int(r["iteration"]), r["policy"]): r for r in rows}
times = {"none": [], "static": [], "iser": []}
for sim in sims:
    where = f"simulated iteration {sim['iteration']} {sim['policy']}"
    check(sim["iteration"] in (0, 20) and sim["layer"] == 0 and sim["scheme"] == "deepep", f"{where}: unexpected run")
    check(sim.get("passed") is True, f"{where}: failed its checks ({sim.get('error')})")
    row = row_of[(sim["iteration"], sim["policy"])]
    check(sim["replicas"] == int(row["replicas"]) and sim["kept"] == int(row["kept"]),
          f"{where}: {sim['replicas']} replicas ({sim['kept']} kept), stream.csv {row['replicas']} ({row['kept']})")
    if sim["policy"] != "iser" or sim["kept"] == sim["replicas"]:
        check(sim["broadcast_time_us"] == 0, f"{where}: broadcast {sim['broadcast_time_us']} us with nothing to send")
    times[sim["policy"]].append(sim["layer_time_us"])
check(any(s["policy"] == "iser" and s["kept"] > 0 for s in sims), "no simulated iser run kept a replica")
mean = {p: sum(t) / len(t) for p, t in times.items()}
gain = stream["layer_time_gains"]["deepep"]
check(abs(gain["iser_gain_over_none"] - (mean["none"] / mean["iser"] - 1)) < 1e-9, f"gain over none {gain}")
check(abs(gain["iser_gain_over_static"] - (mean["static"] / mean["iser"] - 1)) < 1e-9, f"gain over static {gain}")
for f in failures:
    print("FAIL:", f)
print("kept fractions", kept, "removed", {p: stream["policies"][p]["removed_fraction"] for p in ("static", "iser")})
sys.exit(1 if failures else 0)
PY
