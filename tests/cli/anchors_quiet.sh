#!/usr/bin/env bash
# `nvsvp anchors --quiet` with a case whose sizes its plan refuses: exit 2 and, though the table
# and the progress are silenced, the reason on stderr (it used to exit 2 saying nothing).
# usage: anchors_quiet.sh NVSVP CONFIGS WORKDIR
nvsvp=$1
configs=$2
work=$3
rm -rf "$work"
mkdir -p "$work/configs/anchors"
cp -r "$configs/platforms" "$configs/models" "$work/configs/"
# An all-reduce of 1000 bytes: not a whole number of the ring's chunks.
sed -e 's/^name: .*/name: odd-bytes/' -e 's/^  bytes: .*/  bytes: 1000/' \
  "$configs/anchors/nccl-h100x8-allreduce-ring.yaml" >"$work/configs/anchors/odd-bytes.yaml"
"$nvsvp" --config-dir "$work/configs" anchors --quiet --out "$work/out" >"$work/stdout" 2>"$work/stderr"
code=$?
fail=0
[ "$code" -eq 2 ] || { echo "FAIL: exit $code, expected 2"; fail=1; }
[ ! -s "$work/stdout" ] || { echo "FAIL: --quiet printed on stdout:"; cat "$work/stdout"; fail=1; }
grep -Eq "^nvsvp: anchors: case odd-bytes: allreduce_ring: 1000 bytes is not a positive multiple of" "$work/stderr" ||
  { echo "FAIL: stderr does not give the reason:"; cat "$work/stderr"; fail=1; }
[ $fail -eq 0 ] && echo "anchors --quiet: a refused case exits 2 and says why"
exit $fail
