#!/usr/bin/env bash
# Benchmarks against a reference binary (docs/performance.md): every scenario of
# configs/scenarios/bench/ (or the ones named) run by the reference and by build/nvsvp alternately,
# RUNS times each, so that both see the same minutes of the machine; per scheme the median wall
# seconds (report.json's results[].sim.wall_seconds), the ratio reference / this, peak memory and
# layer time of each. The reference finds its own presets (a build tree's share/nvsvp/configs), or
# those --ref-configs names (the configs/ folder of its commit).
# usage: bench_compare.sh REF [--runs N] [--ref-configs DIR] [--set KEY=VALUE]... [--set-this KEY=VALUE]... [SCENARIO...]
#   --set        applies to both binaries; --set-this to build/nvsvp only (e.g. simulation.fabric=fast)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || [ ! -x "$1" ]; then
  echo "usage: $0 REF [--runs N] [--ref-configs DIR] [--set KEY=VALUE]... [--set-this KEY=VALUE]... [SCENARIO...]" >&2
  echo "  REF: the reference nvsvp binary (an executable)" >&2
  exit 2
fi
ref=$(realpath "$1")
shift
runs=3
ref_options=()
both=()
this=()
scenarios=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --ref-configs) ref_options=(--config-dir "$(realpath "$2")"); shift 2 ;;
    --set) both+=(--set "$2"); shift 2 ;;
    --set-this) this+=(--set "$2"); shift 2 ;;
    -*) echo "$0: unknown option $1" >&2; exit 2 ;;
    *) scenarios+=("$1"); shift ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "$0: --runs expects a positive count, got $runs" >&2; exit 2; }
[ ${#scenarios[@]} -gt 0 ] || scenarios=(configs/scenarios/bench/*.yaml)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "reference: $ref ($("$ref" --version 2>/dev/null | head -1))"
echo "this:      build/nvsvp ($(build/nvsvp --version | head -1)) ${this[*]:-}"
echo "machine:   $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), $runs runs each, alternated"
for scenario in "${scenarios[@]}"; do
  name=$(basename "$scenario" .yaml)
  for i in $(seq 1 "$runs"); do
    "$ref" "${ref_options[@]}" run "$scenario" "${both[@]}" --out "$work/$name/ref$i" --quiet --no-timelines > /dev/null
    build/nvsvp run "$scenario" "${both[@]}" "${this[@]}" --out "$work/$name/this$i" --quiet --no-timelines > /dev/null
  done
  python3 - "$work/$name" "$runs" "$name" <<'PY'
import json, statistics, sys
folder, runs, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def results(kind):
    per_scheme = {}
    for i in range(1, runs + 1):
        for r in json.load(open(f"{folder}/{kind}{i}/report.json"))["results"]:
            per_scheme.setdefault(r["scheme"], []).append(r)
    return per_scheme
ref, this = results("ref"), results("this")
print(f"\n== {name}")
print(f"{'scheme':<16}{'ref wall s':>12}{'this wall s':>13}{'ref/this':>10}{'ref MB':>9}{'this MB':>9}{'ref layer us':>14}{'this layer us':>15}")
for scheme, rs in ref.items():
    ts = this.get(scheme)
    if not ts:
        print(f"{scheme:<16} only in the reference")
        continue
    rw = statistics.median(r["sim"]["wall_seconds"] for r in rs)
    tw = statistics.median(t["sim"]["wall_seconds"] for t in ts)
    rm = max(r["sim"]["peak_rss_mb"] for r in rs)
    tm = max(t["sim"]["peak_rss_mb"] for t in ts)
    print(f"{scheme:<16}{rw:>12.2f}{tw:>13.2f}{rw / tw:>10.2f}{rm:>9.0f}{tm:>9.0f}{rs[0]['layer_time_us']:>14.1f}{ts[0]['layer_time_us']:>15.1f}")
PY
done
