#!/usr/bin/env bash
# --trace on the fast fabric: its transactions_<scheme>.csv has a row per packet, as the packet
# fabric's has, on every link a pattern names (docs/configuration.md). Both engines run writes
# (deepep) and reads (ccfuser) tracing GPU 0 and switch chip 1; per link and direction the rows
# are the same packets (kind, class, source, destination, sizes, index and count in their
# message; the issue numbers are each engine's own), the fast fabric's rows add up to its
# links_<scheme>.csv, start one after another on each link, and the last one lands within 2 % of the
# packet fabric's.
# usage: fast_fabric_traces.sh NVSVP SCENARIO WORKDIR
set -u
nvsvp=$1
scenario=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
for engine in packet fast; do
  "$nvsvp" run "$scenario" --set simulation.fabric=$engine --set "schemes=[deepep,ccfuser]" \
    --set workload.tokens_per_gpu=16 --trace gpu_0 --trace switch_1 --out "$work/$engine" --quiet \
    > "$work/$engine.log" 2>&1 || { echo "FAIL: the run on $engine exited $?"; cat "$work/$engine.log"; exit 1; }
done
python3 - "$work" <<'PY'
import collections, csv, sys
work = sys.argv[1]
failed = False
def fail(text):
    global failed
    failed = True
    print("FAIL:", text)
for scheme in ("deepep", "ccfuser"):
    rows = {}
    for engine in ("packet", "fast"):
        per_link = collections.defaultdict(list)
        with open(f"{work}/{engine}/transactions_{scheme}.csv") as f:
            for r in csv.DictReader(f):
                per_link[(r["component"], r["direction"])].append(r)
        rows[engine] = per_link
    if set(rows["packet"]) != set(rows["fast"]):
        fail(f"{scheme}: the engines trace different links")
        continue
    def packets(rs):
        return collections.Counter((r["kind"], r["traffic_class"], r["source"], r["destination"], r["bytes"],
                                    r["payload_bytes"], r["packet"], r["packets"]) for r in rs)
    worst = 0.0
    for link, fast in rows["fast"].items():
        packet = rows["packet"][link]
        if packets(fast) != packets(packet):
            fail(f"{scheme} {link}: {len(fast)} packets on fast, {len(packet)} on packet, not the same ones")
        starts = sorted(float(r["time_ns"]) for r in fast)
        if any(b <= a for a, b in zip(starts, starts[1:])):
            fail(f"{scheme} {link}: two packets start at once on one link")
        last = {e: max(float(r["arrival_ns"]) for r in rows[e][link]) for e in ("packet", "fast")}
        worst = max(worst, abs(last["fast"] - last["packet"]) / last["packet"])
    if worst > 0.02:
        fail(f"{scheme}: a link's last packet lands {100 * worst:.2f} % off the packet fabric's (bound 2 %)")
    # The fast fabric's rows are its links' packets and bytes.
    by_end = {(rs[0]["direction"], rs[0]["gpu"], rs[0]["link"]): rs for rs in rows["fast"].values()}
    matched = 0
    with open(f"{work}/fast/links_{scheme}.csv") as f:
        for r in csv.DictReader(f):
            traced = by_end.get((r["direction"], r["gpu"], r["link"]))
            if traced is None:
                continue
            matched += 1
            if len(traced) != int(r["packets"]) or sum(int(t["bytes"]) for t in traced) != int(r["wire_bytes"]):
                fail(f"{scheme} {traced[0]['component']}: {len(traced)} rows, links csv {r['packets']} packets")
    if matched != len(by_end):
        fail(f"{scheme}: {len(by_end)} links traced, {matched} of them in links_{scheme}.csv")
    print(f"{scheme}: {len(rows['fast'])} link directions traced alike; last packets within {100 * worst:.3f} %")
sys.exit(1 if failed else 0)
PY
