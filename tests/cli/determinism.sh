#!/usr/bin/env bash
# Runs the same scenario twice and requires identical reports apart from host measurements
# (wall-clock times, memory) and the command line; a run with another routing seed must differ, so the comparison
# itself can fail.
# usage: determinism.sh NVSVP SCENARIO WORKDIR [nvsvp run options, e.g. --set schemes=[...]]
# The option --every-scheme stands for --set schemes=[every layer scheme of the registry].
nvsvp=$1
scenario=$2
work=$3
shift 3
options=()
for option in "$@"; do
  if [ "$option" = "--every-scheme" ]; then
    options+=(--set "$(bash "$(dirname "$0")/every_scheme.sh" "$nvsvp")") || exit 1
  else
    options+=("$option")
  fi
done
rm -rf "$work"
mkdir -p "$work"

# Host measurements, and the command line (each run names its own --out).
host_fields='"(wall_seconds|peak_rss_mb|plan_seconds|simulate_seconds|verify_seconds|remote_token_copies_per_wall_second|command_line)"'
run() {  # run DIR [--set ...]
  local dir=$1
  shift
  "$nvsvp" run "$scenario" --out "$work/$dir" --quiet "${options[@]}" "$@" || { echo "FAIL: run $dir exited $?"; exit 1; }
  grep -Ev "$host_fields" "$work/$dir/report.json" >"$work/$dir.stripped"
}
run a
run b
run c --set workload.routing.seed=99

grep -q '"layer_time_us"' "$work/a.stripped" || { echo "FAIL: stripped report lost its results"; exit 1; }
if ! diff -u "$work/a.stripped" "$work/b.stripped"; then
  echo "FAIL: two runs of $scenario gave different reports"
  exit 1
fi
# Every per-scheme file: link statistics, utilization series, traces.
for f in "$work"/a/*.csv "$work"/a/*.json; do
  name=$(basename "$f")
  [ "$name" = report.json ] && continue
  if ! diff -q "$f" "$work/b/$name"; then
    echo "FAIL: two runs of $scenario gave different $name"
    exit 1
  fi
done
if diff -q "$work/a.stripped" "$work/c.stripped" >/dev/null; then
  echo "FAIL: another routing seed gave the same report: the comparison proves nothing"
  exit 1
fi
echo "deterministic: $(grep -c . "$work/a.stripped") report lines identical"
