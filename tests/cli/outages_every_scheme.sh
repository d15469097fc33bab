#!/usr/bin/env bash
# Every scheme under link and chip outages (docs/configuration.md#faults), mid-layer on dgx-h100:
#   - a link down for good (its chip keeps other links to the GPU): firmware retires the link;
#   - a link down and up again;
#   - a chip down: what it held comes back to the issuers and goes again;
#   - on hgx-h800 (2 links per GPU and chip), both links of a GPU to chip 0 down: firmware
#     retires the chip (flushes it) and every GPU spreads over the other chips.
# Each run exits 0, every scheme passes every check, the faults section shows the outage
# detected and recovered (time from fault to recovery), everything lost re-issued (accounted) and
# a slowdown. Then every chip down at once: recovery is impossible and the run exits 1 naming the
# GPU that lost its last link.
# usage: outages_every_scheme.sh NVSVP SCENARIO WORKDIR
nvsvp=$1
scenario=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
schemes=$(bash "$(dirname "$0")/every_scheme.sh" "$nvsvp")
# Register accesses take an assumed 1 us (the presets' 0 makes recovery instantaneous).
access="platform.switch.register_access_ns=1000"
run() {  # name, then --set options
  local name=$1
  shift
  "$nvsvp" run "$scenario" --set "$schemes" --set software.tutel_degree=2 --set "$access" "$@" --out "$work/$name" --quiet ||
    { echo "FAIL: $name exited $?"; exit 1; }
}
run link_down --set "faults=[{kind: link_down, gpu: 2, link: 5, at_us: 3}]"
run link_flap --set "faults=[{kind: link_down, gpu: 5, link: 0, at_us: 2, up_at_us: 6, direction: from_switch}]"
run chip_down --set "faults=[{kind: chip_down, chip: 1, at_us: 3}]"
run chip_retired --set platform=hgx-h800 --set "$access" \
  --set "faults=[{kind: link_down, gpu: 1, link: 0, at_us: 3}, {kind: link_down, gpu: 1, link: 1, at_us: 3}]"
python3 - "$work" "$schemes" <<'PY'
import json, sys
work = sys.argv[1]
schemes = sys.argv[2][len("schemes=["):-1].split(",")  # every layer scheme of the registry
failures = []
def check(name, event_kinds, expect_lost):
    results = json.load(open(f"{work}/{name}/report.json"))["results"]
    if [r["scheme"] for r in results] != schemes:
        failures.append(f"{name}: results of {[r['scheme'] for r in results]}, expected {schemes}")
    lost_somewhere = False
    for r in results:
        s, f = r["scheme"], r.get("faults")
        if not r["checks"]["passed"] or not r["checks"].get("faults_accounted"):
            failures.append(f"{name} {s}: checks {r['checks']}")
        if f is None:
            failures.append(f"{name} {s}: no faults section"); continue
        o = f["outages"]
        kinds = [e["kind"] for e in o["recoveries"]]
        for k in event_kinds:
            if k not in kinds:
                failures.append(f"{name} {s}: no {k} recovery in {kinds}")
        for e in o["recoveries"]:
            if e["fault_to_recovery_us"] is None or not 0 < e["fault_to_recovery_us"] < 50:
                failures.append(f"{name} {s}: fault to recovery {e}")
        lost = o["lost"]["messages"] + o["lost"]["loads"]
        lost_somewhere |= lost > 0
        if lost != o["reissued"] or o["held"] != 0 or not o["accounted"]:
            failures.append(f"{name} {s}: lost {o['lost']} against re-issued {o['reissued']}, held {o['held']}")
        if not isinstance(f["slowdown"], float) or not f["fault_free_passed"]:
            failures.append(f"{name} {s}: slowdown {f['slowdown']}")
    if expect_lost and not lost_somewhere:
        failures.append(f"{name}: no scheme lost anything: the loss path was not exercised")
    if not expect_lost and lost_somewhere:
        failures.append(f"{name}: something was lost where re-routing alone should do")
    return results
check("link_down", ["link_down"], False)
check("link_flap", ["link_down", "link_up"], False)
check("chip_down", ["chip_down"], True)
check("chip_retired", ["link_down", "chip_retired"], True)
for line in failures:
    print("FAIL:", line)
if failures:
    sys.exit(1)
PY
[ $? -eq 0 ] || exit 1
# Every chip down: no GPU has a link left.
"$nvsvp" run "$scenario" --set "schemes=[deepep]" \
  --set "faults=[{kind: chip_down, chip: 0, at_us: 3}, {kind: chip_down, chip: 1, at_us: 3}, {kind: chip_down, chip: 2, at_us: 3}, {kind: chip_down, chip: 3, at_us: 3}]" \
  --out "$work/all_down" --quiet >"$work/all_down.txt" 2>&1
status=$?
[ $status -eq 1 ] || { echo "FAIL: every chip down exited $status, expected 1"; cat "$work/all_down.txt"; exit 1; }
grep -q "GPU [0-9]* has no usable link" "$work/all_down/report.json" "$work/all_down.txt" ||
  { echo "FAIL: every chip down does not name the GPU that lost its links"; cat "$work/all_down.txt"; exit 1; }
echo "every scheme passes under link and chip outages; every chip down exits 1 naming the GPU"
