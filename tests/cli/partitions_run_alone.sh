#!/usr/bin/env bash
# Two partitions each run their own MoE layer in one simulation (docs/configuration.md#partitions),
# and each one's results equal its run alone on a platform of just its GPUs, except for time:
#   - dgx-h100 split into [6, 1] and [0, 2, 3, 4] (unequal sizes, listed out of order; GPUs 5
#     and 7 isolated), every scheme that runs within a partition;
#   - each partition alone: platform.gpus its size, routing seed 5 + its index;
#   - per scheme and partition, equal: the checks (token copies expected, delivered and remote,
#     tokens checked, errors), the load, the plan's figures; per GPU (partition GPU i is the
#     machine's partitions[p][i]) the messages sent and received and the payload bytes each of its
#     links' directions carried in total;
#   - the isolated GPUs sent and received nothing, and the switch refused nothing;
#   - the same with hot-expert replication by switch multicast (the groups moved per partition);
#   - with a switch chip down and a link down mid-layer, each partition still delivers what it
#     delivers alone (lost operations re-issued; the firmware recovers for every partition).
# A dynamic multimem scheme with partitions is refused (tests/cli/malformed_inputs.table).
# usage: partitions_run_alone.sh NVSVP SCENARIO REPLICATION_SCENARIO WORKDIR
nvsvp=$1
scenario=$2
replication_scenario=$3
work=$4
rm -rf "$work"
mkdir -p "$work"
schemes=$(bash "$(dirname "$0")/every_scheme.sh" "$nvsvp" --within-partitions)
run() {  # name, scenario, then --set options
  local name=$1 file=$2
  shift 2
  "$nvsvp" run "$file" --set "$schemes" --set software.tutel_degree=2 "$@" --out "$work/$name" --quiet ||
    { echo "FAIL: $name exited $?"; exit 1; }
}
run together "$scenario" --set "partitions=[[6, 1], [0, 2, 3, 4]]"
run alone0 "$scenario" --set platform.gpus=2 --set workload.routing.seed=5
run alone1 "$scenario" --set platform.gpus=4 --set workload.routing.seed=6
replication="replication.broadcast=multicast"
run replicated "$replication_scenario" --set "$replication" --set "partitions=[[0, 1, 2, 3], [4, 5, 6, 7]]"
run replicated_alone0 "$replication_scenario" --set "$replication" --set platform.gpus=4 --set workload.routing.seed=5
run replicated_alone1 "$replication_scenario" --set "$replication" --set platform.gpus=4 --set workload.routing.seed=6
run outage "$scenario" --set "partitions=[[6, 1], [0, 2, 3, 4]]" --set platform.switch.register_access_ns=1000 \
  --set "faults=[{kind: chip_down, chip: 1, at_us: 3}, {kind: link_down, gpu: 0, link: 2, at_us: 2}]"
python3 - "$work" "$schemes" <<'PY'
import csv, json, sys
work = sys.argv[1]
schemes = sys.argv[2][len("schemes=["):-1].split(",")  # every scheme that runs within a partition
failures = []

def per_gpu_bytes(run, scheme):
    """(gpu, direction) -> payload bytes over all of the GPU's links."""
    total = {}
    with open(f"{work}/{run}/links_{scheme}.csv") as f:
        for row in csv.DictReader(f):
            key = (int(row["gpu"]), row["direction"])
            total[key] = total.get(key, 0) + int(row["payload_bytes"])
    return total

CHECKS = ["token_copies_expected", "token_copies_delivered", "remote_token_copies", "tokens_checked",
          "combine_errors", "receive_count_errors", "weight_chunks_expected", "weight_chunks_landed", "passed"]

def compare(together, alones, partitions, isolated):
    report = json.load(open(f"{work}/{together}/report.json"))
    if not report["passed"]:
        failures.append(f"{together}: the partitioned run did not pass")
    workload = report["workload"]["partitions"]
    for p, alone in enumerate(alones):
        alone_report = json.load(open(f"{work}/{alone}/report.json"))
        if workload[p]["token_copies"] != alone_report["workload"]["token_copies"]:
            failures.append(f"{together}: partition {p} has {workload[p]['token_copies']} token copies, "
                            f"alone {alone_report['workload']['token_copies']}")
    results = report["results"]
    if [r["scheme"] for r in results] != schemes:
        failures.append(f"{together}: results of {[r['scheme'] for r in results]}, expected {schemes}")
    for r in results:
        scheme = r["scheme"]
        if "error" in r:
            failures.append(f"{together} {scheme}: {r['error']}")
            continue
        if r["switch"]["access_errors"] != 0:
            failures.append(f"{together} {scheme}: the switch refused {r['switch']['access_errors']} accesses")
        if len(r["partitions"]) != len(partitions):
            failures.append(f"{together} {scheme}: {len(r['partitions'])} partitions in the result")
            continue
        machine_bytes = per_gpu_bytes(together, scheme)
        machine_gpus = {g["gpu"]: g for g in r["gpus"]}
        for g in isolated:
            if machine_gpus[g]["messages_sent"] or machine_gpus[g]["messages_received"] or \
               machine_bytes.get((g, "gpu_to_switch")) or machine_bytes.get((g, "switch_to_gpu")):
                failures.append(f"{together} {scheme}: isolated GPU {g} carried traffic")
        latest = 0.0
        for p, alone in enumerate(alones):
            part = r["partitions"][p]
            latest = max(latest, part["layer_time_us"])
            if part["gpus"] != partitions[p]:
                failures.append(f"{together} {scheme} partition {p}: gpus {part['gpus']}")
            alone_result = next(x for x in json.load(open(f"{work}/{alone}/report.json"))["results"]
                                if x["scheme"] == scheme)
            for key in CHECKS:
                if part["checks"][key] != alone_result["checks"][key]:
                    failures.append(f"{together} {scheme} partition {p}: checks.{key} {part['checks'][key]}, "
                                    f"alone {alone_result['checks'][key]}")
            if not part["checks"]["passed"] or part["checks"]["token_copies_delivered"] == 0:
                failures.append(f"{together} {scheme} partition {p}: did not pass or delivered nothing")
            for key in ["load", "plan"]:
                if part[key] != alone_result.get(key):
                    failures.append(f"{together} {scheme} partition {p}: {key} differs from its run alone")
            if (part["replication"] is None) != (alone_result["replication"] is None):
                failures.append(f"{together} {scheme} partition {p}: replication present in one run only")
            elif part["replication"] is not None:
                for key in ["replicas", "load_before", "load_after", "bytes_sent", "weight_chunks_landed"]:
                    if part["replication"][key] != alone_result["replication"][key]:
                        failures.append(f"{together} {scheme} partition {p}: replication.{key} differs")
            alone_bytes = per_gpu_bytes(alone, scheme)
            alone_gpus = {g["gpu"]: g for g in alone_result["gpus"]}
            for i, m in enumerate(partitions[p]):
                for key in ["messages_sent", "messages_received"]:
                    if machine_gpus[m][key] != alone_gpus[i][key]:
                        failures.append(f"{together} {scheme}: GPU {m} (partition {p} GPU {i}) {key} "
                                        f"{machine_gpus[m][key]}, alone {alone_gpus[i][key]}")
                for direction in ["gpu_to_switch", "switch_to_gpu"]:
                    if machine_bytes.get((m, direction), 0) != alone_bytes.get((i, direction), 0):
                        failures.append(f"{together} {scheme}: GPU {m} {direction} payload bytes "
                                        f"{machine_bytes.get((m, direction), 0)}, alone {alone_bytes.get((i, direction), 0)}")
        if abs(latest - r["layer_time_us"]) > 1e-6:
            failures.append(f"{together} {scheme}: layer time {r['layer_time_us']} is not its latest partition's {latest}")

compare("together", ["alone0", "alone1"], [[6, 1], [0, 2, 3, 4]], [5, 7])
compare("replicated", ["replicated_alone0", "replicated_alone1"], [[0, 1, 2, 3], [4, 5, 6, 7]], [])
replicated = json.load(open(f"{work}/replicated/report.json"))["results"][0]["partitions"][0]["replication"]
if not replicated or not replicated["replicas"] or replicated["broadcast"] != "multicast":
    failures.append(f"replicated: partition 0 broadcast no replica by multicast: {replicated and replicated['broadcast']}")
# Under outages: the same deliveries per partition, every outage accounted for.
outage = json.load(open(f"{work}/outage/report.json"))
for r in outage["results"]:
    alone = [next(x for x in json.load(open(f"{work}/alone{p}/report.json"))["results"] if x["scheme"] == r["scheme"])
             for p in range(2)]
    if not r.get("checks", {}).get("passed") or not r["checks"].get("faults_accounted"):
        failures.append(f"outage {r['scheme']}: did not pass with every outage accounted for")
        continue
    for p in range(2):
        for key in ["token_copies_delivered", "tokens_checked", "combine_errors"]:
            if r["partitions"][p]["checks"][key] != alone[p]["checks"][key]:
                failures.append(f"outage {r['scheme']} partition {p}: checks.{key} differs from its run alone")
for f in failures[:40]:
    print("FAIL:", f)
if failures:
    sys.exit(1)
print("ok: each partition's checks, loads, plans, messages and bytes per GPU equal its run alone")
PY
