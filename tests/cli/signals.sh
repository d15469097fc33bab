#!/usr/bin/env bash
# SIGTERM or SIGINT to an `nvsvp run` or `nvsvp study` stops every process it started: the parent
# ends by that signal (shell status 128 + signal), says so on stderr, and none of its children or
# grandchildren is left, nor any process writing into its output folder.
# usage: signals.sh NVSVP SIGNAL DEPTH WORKDIR -- NVSVP-ARGUMENTS...
#   DEPTH: 1 waits for a child before signalling (run: a scheme's process), 2 for a grandchild
#   (study: a point's run and its scheme's process). The arguments should name --out WORKDIR/...
#   and take some seconds to run, so that the signal comes while children run.
set -u
set -m  # job control: a background job of a script would otherwise ignore SIGINT
nvsvp=$1 signal=$2 depth=$3 work=$4
shift 4
[ "$1" = "--" ] && shift
rm -rf "$work"
mkdir -p "$work"

# Every descendant of a process, depth first.
descendants() {
  local child
  for child in $(pgrep -P "$1"); do
    echo "$child"
    descendants "$child"
  done
}
# How deep the process tree under $1 goes (0: no children).
tree_depth() {
  local child d max=0
  for child in $(pgrep -P "$1"); do
    d=$(($(tree_depth "$child") + 1))
    [ "$d" -gt "$max" ] && max=$d
  done
  echo "$max"
}

"$nvsvp" "$@" >"$work/stdout" 2>"$work/stderr" &
parent=$!

# Wait (up to 60 s) for the tree to reach DEPTH, then note every process in it.
for _ in $(seq 1200); do
  [ "$(tree_depth "$parent")" -ge "$depth" ] && break
  kill -0 "$parent" 2>/dev/null || break
  sleep 0.05
done
if [ "$(tree_depth "$parent")" -lt "$depth" ]; then
  echo "FAIL: nvsvp $* had no process tree of depth $depth to stop (did it end too soon?)"
  kill -KILL "$parent" 2>/dev/null
  exit 1
fi
started=$(descendants "$parent")
echo "sending SIG$signal to $parent, with descendants:" $started
kill -s "$signal" "$parent"

# The parent must end within 30 s.
for _ in $(seq 600); do
  kill -0 "$parent" 2>/dev/null || break
  sleep 0.05
done
if kill -0 "$parent" 2>/dev/null; then
  echo "FAIL: nvsvp still runs 30 s after SIG$signal"
  kill -KILL "$parent" $started 2>/dev/null
  exit 1
fi
wait "$parent"
status=$?
expected=$((128 + $(kill -l "$signal")))

fail=0
if [ "$status" -ne "$expected" ]; then
  echo "FAIL: exit status $status after SIG$signal, expected $expected"
  fail=1
fi
grep -q "^nvsvp: SIG$signal: stopping the child processes$" "$work/stderr" ||
  { echo "FAIL: nvsvp did not say it was stopping: $(cat "$work/stderr")"; fail=1; }
for pid in $started; do
  if [ -e "/proc/$pid" ]; then
    echo "FAIL: process $pid is left: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) ($(awk '{print "state " $3}' "/proc/$pid/stat" 2>/dev/null))"
    fail=1
  fi
done
# Any nvsvp process (its first word; not this script, which holds the same arguments).
if left=$(pgrep -f -- "^[^ ]*nvsvp .*--out $work/"); then
  echo "FAIL: processes writing into $work are left: $left"
  fail=1
fi
[ "$fail" -eq 0 ] && echo "SIG$signal stopped nvsvp (status $status) and its $(echo $started | wc -w) descendants"
exit "$fail"
