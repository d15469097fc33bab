#!/usr/bin/env bash
# Runs the same study one point at a time and two at a time and requires identical study.csv files
# apart from the wall-clock column; each must hold the expected number of rows, so the comparison
# cannot pass on empty files.
# usage: study_determinism.sh NVSVP STUDY ROWS WORKDIR [STUDY OPTIONS...]
nvsvp=$1
study=$2
rows=$3
work=$4
shift 4
rm -rf "$work"
mkdir -p "$work"

run() {  # run JOBS [STUDY OPTIONS...]
  local jobs=$1
  shift
  "$nvsvp" study "$study" --jobs "$jobs" --out "$work/jobs$jobs" "$@" >/dev/null ||
    { echo "FAIL: the study with --jobs $jobs exited $?"; exit 1; }
  local csv=$work/jobs$jobs/study.csv
  head -1 "$csv" | grep -q ',sim.wall_seconds,speedup_of_reference$' ||
    { echo "FAIL: sim.wall_seconds is not the second-to-last column of $csv"; exit 1; }
  # The second-to-last field; point names before it may hold quoted commas, the fields after not.
  sed -E 's/,[^,]*(,[^,]*)$/\1/' "$csv" >"$work/jobs$jobs.stripped"
  [ "$(grep -c . "$work/jobs$jobs.stripped")" -eq "$rows" ] ||
    { echo "FAIL: $csv has $(grep -c . "$csv") lines, expected $rows"; exit 1; }
}
run 1 "$@"
run 2 "$@"
if ! diff -u "$work/jobs1.stripped" "$work/jobs2.stripped"; then
  echo "FAIL: --jobs 1 and --jobs 2 gave different study.csv files"
  exit 1
fi
echo "deterministic: $rows study.csv lines identical with --jobs 1 and --jobs 2"
