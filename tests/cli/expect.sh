#!/usr/bin/env bash
# Runs a command and checks its exit code, its output and the files it wrote.
# usage: expect.sh [--exit N] [--stdout ERE]... [--stderr ERE]... [--file PATH ERE]...
#                  [--absent PATH]... [--fresh DIR]... -- COMMAND [ARGS...]
# --fresh removes DIR before the run (so that --file checks see this run's output only);
# --absent requires that the command did not write PATH.
exit_expected=0
stdout_res=()
stderr_res=()
files=()
absent=()
fresh=()
while [ $# -gt 0 ]; do
  case "$1" in
    --exit) exit_expected=$2; shift 2 ;;
    --stdout) stdout_res+=("$2"); shift 2 ;;
    --stderr) stderr_res+=("$2"); shift 2 ;;
    --file) files+=("$2" "$3"); shift 3 ;;
    --absent) absent+=("$2"); shift 2 ;;
    --fresh) fresh+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "expect.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "expect.sh: no command" >&2; exit 2; }
for d in "${fresh[@]}"; do rm -rf "$d"; done

out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
"$@" >"$out" 2>"$err"
code=$?

fail=0
if [ "$code" -ne "$exit_expected" ]; then
  echo "FAIL: exit code $code, expected $exit_expected"
  fail=1
fi
for re in "${stdout_res[@]}"; do
  grep -Eq -- "$re" "$out" || { echo "FAIL: stdout does not match /$re/"; fail=1; }
done
for re in "${stderr_res[@]}"; do
  grep -Eq -- "$re" "$err" || { echo "FAIL: stderr does not match /$re/"; fail=1; }
done
for ((i = 0; i < ${#files[@]}; i += 2)); do
  f=${files[i]}
  re=${files[i + 1]}
  if [ ! -f "$f" ]; then
    echo "FAIL: $f was not written"
    fail=1
  elif ! grep -Eq -- "$re" "$f"; then
    echo "FAIL: $f does not match /$re/"
    fail=1
  fi
done
for f in "${absent[@]}"; do
  [ ! -e "$f" ] || { echo "FAIL: $f was written"; fail=1; }
done
if [ "$fail" -ne 0 ]; then
  echo "--- command: $*"
  echo "--- stdout:"; cat "$out"
  echo "--- stderr:"; cat "$err"
fi
exit "$fail"
