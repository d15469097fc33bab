#!/usr/bin/env bash
# Runs `nvsvp rtl-verify` twice with one seed in separate processes and compares the reports,
# less the wall-time line; a third run with another seed must differ.
# usage: same_seed_same_report.sh NVSVP OUT_DIR
set -u
nvsvp=$1
out=$2
rm -rf "$out" && mkdir -p "$out"
for run in first second; do
  "$nvsvp" rtl-verify --seed 31337 --beats 40000 --coverage | grep -v '^wall: ' > "$out/$run.txt" || {
    echo "FAIL: rtl-verify --seed 31337 failed"; cat "$out/$run.txt"; exit 1; }
done
"$nvsvp" rtl-verify --random-only --seed 31338 --beats 40000 --coverage | grep -v '^wall: ' > "$out/other.txt"
grep -q '^rtl-verify: seed 31337' "$out/first.txt" || { echo "FAIL: no seed line"; exit 1; }
if ! diff "$out/first.txt" "$out/second.txt"; then
  echo "FAIL: the same seed gave different reports"
  exit 1
fi
if diff -q <(grep -v seed "$out/first.txt" | sed -n '/^random:/,$p') <(grep -v seed "$out/other.txt" | sed -n '/^random:/,$p') > /dev/null; then
  echo "FAIL: another seed gave the same random run"
  exit 1
fi
echo "same seed, same report ($(wc -l < "$out/first.txt") lines)"
