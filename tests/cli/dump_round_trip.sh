#!/usr/bin/env bash
# `validate --dump > s.yaml` writes a scenario that runs to the same report: stdout is the YAML
# alone (the status line is on stderr), the dump validates, and a run of it gives the results of
# a run of the original, apart from host measurements and the names of the files and the command;
# the run's own scenario.yaml is the dump again. A run with another seed must differ, so that the
# comparison can fail.
# usage: dump_round_trip.sh NVSVP SCENARIO WORKDIR [--set ...]
set -u
nvsvp=$1 scenario=$2 work=$3
shift 3
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

"$nvsvp" validate --dump "$scenario" "$@" >"$work/dump.yaml" 2>"$work/dump.err" || fail "validate --dump exited $?"
grep -q ': ok (' "$work/dump.yaml" && fail "the status line is on stdout, in the dump"
grep -q ': ok (' "$work/dump.err" || fail "no status line on stderr: $(cat "$work/dump.err")"
head -1 "$work/dump.yaml" | grep -q '^# Effective configuration' || fail "the dump does not start with its header"
"$nvsvp" validate "$work/dump.yaml" >/dev/null || fail "the dump does not validate"

# Host measurements, and the fields that name the files and the command, which differ by design.
strip() {
  python3 - "$1" <<'PY'
import json, sys
differs = {"wall_seconds", "plan_seconds", "simulate_seconds", "verify_seconds", "peak_rss_mb",
           "remote_token_copies_per_wall_second", "file", "command_line"}
def strip(node):
    if isinstance(node, dict):
        return {k: strip(v) for k, v in node.items() if k not in differs}
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node
print(json.dumps(strip(json.load(open(sys.argv[1]))), indent=1, sort_keys=True))
PY
}
run() {  # run NAME SCENARIO [--set ...]
  local name=$1 file=$2
  shift 2
  "$nvsvp" run "$file" --quiet --no-timelines --out "$work/$name" "$@" || fail "run $name exited $?"
  strip "$work/$name/report.json" >"$work/$name.stripped" || fail "cannot read $work/$name/report.json"
}
run original "$scenario" "$@"
run dumped "$work/dump.yaml"
run other_seed "$work/dump.yaml" --set workload.routing.seed=77

grep -q '"layer_time_us"' "$work/original.stripped" || fail "the stripped report lost its results"
diff -u "$work/original.stripped" "$work/dumped.stripped" || fail "the dump ran to another report than the original"
diff -q "$work/original.stripped" "$work/other_seed.stripped" >/dev/null &&
  fail "another seed gave the same report: the comparison proves nothing"
# Each run wrote its effective scenario: the same text, but for the header line naming its file.
for name in original dumped; do
  tail -n +2 "$work/$name/scenario.yaml" | diff -q - <(tail -n +2 "$work/dump.yaml") >/dev/null ||
    fail "$name/scenario.yaml is not the dump"
done
echo "round trip: the dump validates and runs to the same report ($(grep -c . "$work/original.stripped") lines)"
