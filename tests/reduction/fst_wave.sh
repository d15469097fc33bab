#!/usr/bin/env bash
# An FST waveform of `nvsvp rtl-verify` is read by gtkwave's fst2vcd, holds exactly the clocks of
# its window, and carries the same value changes, signal by signal, as the VCD of the same run.
# usage: fst_wave.sh NVSVP OUT_DIR
set -u
nvsvp=$1
out=$2
here=$(dirname "$0")
fail() { echo "FAIL: $*"; exit 1; }
command -v fst2vcd > /dev/null || fail "fst2vcd not found: install the Debian package gtkwave (scripts/install_deps.sh)"
rm -rf "$out" && mkdir -p "$out"
run=(rtl-verify --random-only --seed 9 --beats 300 --wave-from 100 --wave-to 300)
"$nvsvp" "${run[@]}" --wave "$out/run.fst" > "$out/fst_run.txt" || fail "rtl-verify --wave run.fst: exit $?"
grep -q "^fst: $out/run.fst (clocks from 100 ns to 300 ns)$" "$out/fst_run.txt" || fail "no fst: line"
"$nvsvp" "${run[@]}" --wave "$out/run.vcd" > "$out/vcd_run.txt" || fail "rtl-verify --wave run.vcd: exit $?"
fst2vcd "$out/run.fst" > "$out/fst2vcd.vcd" || fail "fst2vcd cannot read $out/run.fst"
grep -q '\$var .* cmd_valid ' "$out/fst2vcd.vcd" || fail "fst2vcd's output declares no cmd_valid"
# Clocks 100..299, two dumps each: the first at 100000 ps, the last at 299500 ps.
times=$(grep '^#' "$out/fst2vcd.vcd")
[ "$(echo "$times" | wc -l)" -eq 400 ] || fail "expected 400 time stamps, got $(echo "$times" | wc -l)"
[ "$(echo "$times" | head -1)" = "#100000" ] || fail "first time stamp $(echo "$times" | head -1), expected #100000"
[ "$(echo "$times" | tail -1)" = "#299500" ] || fail "last time stamp $(echo "$times" | tail -1), expected #299500"
awk -f "$here/vcd_changes.awk" "$out/run.vcd" | sort > "$out/vcd.changes"
awk -f "$here/vcd_changes.awk" "$out/fst2vcd.vcd" | sort > "$out/fst.changes"
[ -s "$out/vcd.changes" ] || fail "no value changes in the VCD"
diff -q "$out/vcd.changes" "$out/fst.changes" > /dev/null || fail "the FST and the VCD of one run differ (diff $out/vcd.changes $out/fst.changes)"
echo "FST read by fst2vcd: 400 time stamps, $(wc -l < "$out/fst.changes") value changes, the same as the VCD's"
