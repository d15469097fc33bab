#!/usr/bin/env bash
# Every scheme under link faults (bit errors on every link, credits lost on one link in both
# directions): the run exits 0, every scheme passes every check, and its faults section shows
# replays, the losses, firmware's view equal to the links' (accounted) and a slowdown against its
# fault-free run. With the fault's rate at zero nothing is replayed.
# usage: faults_every_scheme.sh NVSVP SCENARIO WORKDIR
nvsvp=$1
scenario=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
schemes=$(bash "$(dirname "$0")/every_scheme.sh" "$nvsvp")
faults="faults=[{kind: bit_errors, rate_per_flit: 2.0e-4, seed: 3}, {kind: credit_loss, gpu: 2, link: 5, at_us: 0, credits: 250}]"
"$nvsvp" run "$scenario" --set "$schemes" --set "$faults" --set software.tutel_degree=2 --out "$work/faults" --quiet ||
  { echo "FAIL: the run with faults exited $?"; exit 1; }
"$nvsvp" run "$scenario" --set "schemes=[deepep,dysharp]" --set "faults=[{kind: bit_errors, rate_per_flit: 0}]" \
  --out "$work/rate0" --quiet || { echo "FAIL: the run with rate 0 exited $?"; exit 1; }
python3 - "$work" "$schemes" <<'PY'
import json, sys
work = sys.argv[1]
schemes = sys.argv[2][len("schemes=["):-1].split(",")  # every layer scheme of the registry
failures = []
results = json.load(open(f"{work}/faults/report.json"))["results"]
if [r["scheme"] for r in results] != schemes:
    failures.append(f"results of {[r['scheme'] for r in results]}, expected {schemes}")
for r in results:
    s, f = r["scheme"], r.get("faults")
    if not r["checks"]["passed"]:
        failures.append(f"{s}: checks failed")
    if f is None:
        failures.append(f"{s}: no faults section"); continue
    if not f["detected"]["accounted"] or not r["checks"].get("faults_accounted"):
        failures.append(f"{s}: faults not accounted: {f['detected']}")
    if f["replays"]["packets"] <= 0 or f["replays"]["packets"] != f["detected"]["rx_crc_errors"] + f["detected"]["tx_replays"]:
        failures.append(f"{s}: replays {f['replays']} against detected {f['detected']}")
    if f["credit_loss"]["losses"] != 2 or f["credit_loss"]["flits_lost"] != 500:
        failures.append(f"{s}: credit losses {f['credit_loss']}")
    if f["credit_loss"]["flits_resynchronised"] + f["credit_loss"]["flits_never_resynchronised"] != 500:
        failures.append(f"{s}: lost credits not accounted: {f['credit_loss']}")
    if not isinstance(f["slowdown"], float) or not f["fault_free_passed"]:
        failures.append(f"{s}: slowdown {f['slowdown']}, fault-free passed {f['fault_free_passed']}")
if not any(r["faults"]["credit_loss"]["resyncs"] > 0 for r in results if r.get("faults")):
    failures.append("no scheme's sender starved and resynchronised: the credit loss was not exercised")
for r in json.load(open(f"{work}/rate0/report.json"))["results"]:
    f = r["faults"]
    if f["replays"]["packets"] != 0 or f["slowdown"] != 1.0:
        failures.append(f"rate 0, {r['scheme']}: {f['replays']}, slowdown {f['slowdown']}")
for line in failures:
    print("FAIL:", line)
if failures:
    sys.exit(1)
slowdowns = ", ".join(f"{r['scheme']} {r['faults']['slowdown']:.3f}" for r in results)
print(f"every scheme passes under link faults; slowdowns: {slowdowns}")
PY
