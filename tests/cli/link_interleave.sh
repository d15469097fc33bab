#!/usr/bin/env bash
# gpu.link_interleave (docs/models/gpu.md): with local_address, a GPU's writes to many peers at
# the same offsets in their buffers (a perfect router's all-to-all) all hash to the same few links,
# so many of its links stay idle while others carry 2-3x the mean; with fabric_address (the peer's
# range of the fabric's address space in the hash) every link carries traffic and the dispatch
# takes well under half the time (docs/calibration.md#blackwell-cases).
# usage: link_interleave.sh NVSVP SCENARIO WORKDIR
nvsvp=$1
scenario=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
for mode in local_address fabric_address; do
  "$nvsvp" run "$scenario" --out "$work/$mode" --quiet --no-timelines --set "platform.gpu.link_interleave=$mode" ||
    { echo "FAIL: run $mode exited $?"; exit 1; }
done
python3 - "$work" <<'PY'
import csv, json, sys
work = sys.argv[1]
figures = {}
for mode in ("local_address", "fabric_address"):
    rows = [r for r in csv.DictReader(open(f"{work}/{mode}/links_deepep.csv")) if r["direction"] == "gpu_to_switch"]
    up = [int(r["wire_bytes"]) for r in rows]
    result = json.load(open(f"{work}/{mode}/report.json"))["results"][0]
    dispatch = result["phases"]["dispatch"]
    figures[mode] = {"idle": sum(1 for b in up if b == 0), "links": len(up),
                     "max_over_mean": max(up) / (sum(up) / len(up)),
                     "dispatch_us": dispatch["end_us"] - dispatch["start_us"],
                     "passed": result["checks"]["passed"]}
print(figures)
local, fabric = figures["local_address"], figures["fabric_address"]
failures = []
if not (local["passed"] and fabric["passed"]):
    failures.append("a run failed its checks")
if local["idle"] < local["links"] // 10 or local["max_over_mean"] < 2.0:
    failures.append(f"local_address spread its writes: {local['idle']} idle links, max/mean {local['max_over_mean']:.2f}")
if fabric["idle"] != 0 or fabric["max_over_mean"] > 1.3:
    failures.append(f"fabric_address left links idle or uneven: {fabric['idle']}, max/mean {fabric['max_over_mean']:.2f}")
if fabric["dispatch_us"] > 0.6 * local["dispatch_us"]:
    failures.append(f"dispatch {fabric['dispatch_us']:.1f} us against {local['dispatch_us']:.1f} us")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
PY
