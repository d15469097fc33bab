#!/usr/bin/env bash
# Runs one study in every way nvsvp offers and requires byte-identical study.csv and summary.json
# from each: all points here one at a time and two at a time; each point by its emitted command,
# the commands run by GNU parallel (scripts/study-parallel.sh); two shards in two processes, then
# `nvsvp study-merge`; and `nvsvp study FILE --merge` on the shards' folder. study.csv must hold
# the expected number of lines, so that the comparison cannot pass on empty files.
# usage: study_runs_alike.sh NVSVP STUDY ROWS WORKDIR [--set K=V ...]
nvsvp=$1
study=$2
rows=$3
work=$4
shift 4
scripts=$(cd "$(dirname "$0")/../../scripts" && pwd)
rm -rf "$work"
mkdir -p "$work"

fail() { echo "FAIL: $*"; exit 1; }
# Each way's study.csv and summary.json against the first's.
compare() {  # compare WAY
  local dir=$work/$1
  [ "$(grep -c . "$dir/study.csv")" -eq "$rows" ] || fail "$dir/study.csv has $(grep -c . "$dir/study.csv") lines, expected $rows"
  [ "$1" = jobs1 ] && return
  cmp "$work/jobs1/study.csv" "$dir/study.csv" || { diff "$work/jobs1/study.csv" "$dir/study.csv"; fail "$1: study.csv differs"; }
  cmp "$work/jobs1/summary.json" "$dir/summary.json" || { diff "$work/jobs1/summary.json" "$dir/summary.json"; fail "$1: summary.json differs"; }
}

for jobs in 1 2; do
  "$nvsvp" study "$study" --jobs $jobs --out "$work/jobs$jobs" "$@" >/dev/null || fail "the study with --jobs $jobs exited $?"
  compare jobs$jobs
done

NVSVP=$nvsvp bash "$scripts/study-parallel.sh" --out "$work/parallel" "${@}" "$study" -j 2 >"$work/parallel.log" 2>&1 ||
  { cat "$work/parallel.log"; fail "study-parallel.sh exited $?"; }
[ "$(wc -l <"$work/parallel/commands.txt")" -eq 3 ] || fail "expected 3 emitted commands"
compare parallel

for shard in 1/2 2/2; do
  "$nvsvp" study "$study" --shard $shard --out "$work/shards" "$@" >"$work/shard.log" 2>&1 ||
    { cat "$work/shard.log"; fail "shard $shard exited $?"; }
done
[ ! -e "$work/shards/study.csv" ] || fail "a shard wrote study.csv: only the merge may"
"$nvsvp" study-merge "$work/shards" >/dev/null || fail "study-merge exited $?"
compare shards
# Both shards at once into a fresh folder, neither preceded by --emit-commands: they race to write
# study.json, and the merge is still the same.
"$nvsvp" study "$study" --shard 1/2 --out "$work/racing" "$@" >"$work/racing1.log" 2>&1 &
"$nvsvp" study "$study" --shard 2/2 --out "$work/racing" "$@" >"$work/racing2.log" 2>&1 ||
  { cat "$work/racing2.log"; fail "racing shard 2/2 exited $?"; }
wait $! || { cat "$work/racing1.log"; fail "racing shard 1/2 exited $?"; }
"$nvsvp" study-merge "$work/racing" >/dev/null || fail "study-merge of the racing shards exited $?"
compare racing
rm "$work/shards/study.csv" "$work/shards/summary.json"
"$nvsvp" study "$study" --merge "$work/shards" "$@" >/dev/null || fail "study --merge exited $?"
compare shards
echo "alike: $rows study.csv lines and summary.json identical with --jobs 1, --jobs 2, GNU parallel, shards + study-merge (also racing), study --merge"
