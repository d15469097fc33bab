#!/usr/bin/env bash
# A run into a folder that holds an earlier run's files leaves only its own: the per-scheme files
# of schemes it does not run (and of kinds it does not write, here the timelines) are removed,
# files nvsvp does not write stay, and scenario.yaml is this run's.
# usage: output_hygiene.sh NVSVP SCENARIO WORKDIR
set -u
nvsvp=$1 scenario=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

stale=(links_nvls.csv utilization_nvls.csv trace_dysharp-basic.json utilization_deepep.csv trace_deepep.json
       stats_dysharp.json transactions_tutel_degree4.csv layer_time.svg latency.png index.html report.json)
kept=(notes.txt notes_deepep.txt trace_deepep.json.bak links_deepep-old.csv transactions_tutel_degree.csv
      speedup.svg layer_time.svg.bak)
for f in "${stale[@]}" "${kept[@]}"; do echo "earlier" >"$work/$f"; done
echo "name: earlier" >"$work/scenario.yaml"

"$nvsvp" run "$scenario" --quiet --no-timelines --set workload.tokens_per_gpu=16 --set "schemes=[deepep]" \
  --out "$work" || fail "the run exited $?"
for f in "${stale[@]}"; do
  [ "$f" = report.json ] && continue
  [ -e "$work/$f" ] && fail "$f of an earlier run is left"
done
grep -q '"passed": true' "$work/report.json" || fail "report.json is not this run's"
grep -q '^name: small_uniform ' "$work/scenario.yaml" || fail "scenario.yaml is not this run's"
[ -s "$work/links_deepep.csv" ] && [ "$(head -c 9 "$work/links_deepep.csv")" = direction ] || fail "no links_deepep.csv of this run"
for f in "${kept[@]}"; do
  [ "$(cat "$work/$f" 2>/dev/null)" = earlier ] || fail "$f, not nvsvp's, was changed or removed"
done
echo "an earlier run's ${#stale[@]} files cleared, ${#kept[@]} others kept"
