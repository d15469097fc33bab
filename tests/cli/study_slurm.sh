#!/usr/bin/env bash
# Runs a study through a real one-node Slurm (tests/cli/slurm_cluster.sh starts it here) with
# scripts/study-slurm.sh, one array task per point and then in two shards, and requires the merge
# to pass and study.csv and summary.json byte-identical to a local `nvsvp study` of the same study;
# study.csv must hold the expected number of lines, so that the comparison cannot pass on empty
# files. Then a study with a failing point: its array task fails, the merge still runs (afterany),
# names the point and exits 1, and so does `study-slurm.sh --wait`.
# Exit 77 (skipped) when Slurm cannot start on this machine, with the reason.
# usage: study_slurm.sh NVSVP STUDY ROWS FAILING_STUDY WORKDIR [--set K=V ...]
nvsvp=$1
study=$2
rows=$3
failing=$4
work=$5
shift 5
here=$(cd "$(dirname "$0")" && pwd)
script=$here/../../scripts/study-slurm.sh
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)

fail() { echo "FAIL: $*"; exit 1; }
# submit LOG [study-slurm.sh arguments]: the script, bounded in time, its output in LOG.
submit() {
  local log=$1
  shift
  timeout 280 bash "$script" --nvsvp "$nvsvp" --wait --timeout 240 "$@" >"$log" 2>&1 &
  child=$!
  wait "$child"
  local status=$?
  child=
  return $status
}

# shellcheck source=tests/cli/slurm_cluster.sh
source "$here/slurm_cluster.sh"
# The munge socket's path must stay short (a Unix socket's limit); a deep build folder gets a
# cluster folder in /tmp instead, removed at the end.
cluster=$work/cluster
temporary=
if [ ${#cluster} -gt 70 ]; then
  cluster=$(mktemp -d "${TMPDIR:-/tmp}/nvsvp-slurm.XXXXXX") || fail "mktemp"
  temporary=$cluster
fi
child=
cleanup() {
  [ -z "$child" ] || kill "$child" 2>/dev/null
  slurm_cluster_stop
  [ -z "$temporary" ] || rm -rf "$temporary"
}
trap cleanup EXIT
# bash runs the EXIT trap on a signal only when the signal is trapped, and only once the command
# in the foreground has ended: the slow commands run in the background (submit), waited for.
trap 'exit 130' INT
trap 'exit 143' TERM HUP
slurm_cluster_start "$cluster" || exit 77
echo "slurm: node $NVSVP_SLURM_NODE idle; cluster in $cluster"

"$nvsvp" study "$study" --out "$work/local" "$@" >"$work/local.log" 2>&1 ||
  { cat "$work/local.log"; fail "the local study exited $?"; }
[ "$(grep -c . "$work/local/study.csv")" -eq "$rows" ] ||
  fail "$work/local/study.csv has $(grep -c . "$work/local/study.csv") lines, expected $rows"
points=$("$nvsvp" study "$study" --list "$@" | grep -c '^  ')  # one indented line per point

# on_slurm WAY [study-slurm.sh options]: the study through Slurm into WORKDIR/WAY, compared.
on_slurm() {
  local way=$1 dir=$work/$1 status
  shift
  submit "$work/$way.log" --out "$dir" "$@" "$study"
  status=$?
  [ $status -eq 0 ] || { cat "$work/$way.log"; fail "$way: study-slurm.sh --wait exited $status"; }
  grep -q "^study-slurm: merge job [0-9]* ended: COMPLETED, exit code 0" "$work/$way.log" ||
    { cat "$work/$way.log"; fail "$way: the merge job's end is not reported"; }
  [ "$(grep -c . "$dir/study.csv")" -eq "$rows" ] ||
    fail "$dir/study.csv has $(grep -c . "$dir/study.csv") lines, expected $rows"
  cmp "$work/local/study.csv" "$dir/study.csv" ||
    { diff "$work/local/study.csv" "$dir/study.csv"; fail "$way: study.csv differs from the local one"; }
  cmp "$work/local/summary.json" "$dir/summary.json" ||
    { diff "$work/local/summary.json" "$dir/summary.json"; fail "$way: summary.json differs from the local"; }
}

on_slurm per_point "${@}"
[ "$(grep -c . "$work/per_point/slurm/commands.txt")" -eq "$points" ] ||
  fail "expected $points emitted commands in $work/per_point/slurm/commands.txt"
for ((k = 1; k <= points; k++)); do
  grep -q "^point.sh: task $k on " "$work/per_point/slurm/point-$k.log" ||
    fail "array task $k left no log saying it ran ($work/per_point/slurm/point-$k.log)"
done

on_slurm shards --shards 2 "${@}"
[ -s "$work/shards/slurm/shard-2.log" ] && [ ! -e "$work/shards/slurm/shard-3.log" ] ||
  fail "--shards 2: expected the logs of exactly two array tasks in $work/shards/slurm"

# A failed point: the array task fails, the merge runs anyway and names it.
submit "$work/fails.log" --out "$work/fails" "$@" "$failing"
status=$?
[ $status -eq 1 ] ||
  { cat "$work/fails.log"; fail "a failing point: study-slurm.sh --wait exited $status, expected 1"; }
grep -q "^point .* FAILED" "$work/fails/slurm/merge.log" ||
  { cat "$work/fails.log"; fail "the merge log names no failed point"; }

echo "slurm: $rows study.csv lines and summary.json identical to the local study, one task per point" \
     "and in 2 shards; a failing point makes the merge exit 1"
