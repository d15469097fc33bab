#!/usr/bin/env bash
# Coverage files of two seeds merged by `nvsvp rtl-coverage-merge` equal their union, computed
# here from the two files: per point the sum of the counts, the covered points those covered in
# either. verilator_coverage reads the files, and its own merge (--write) agrees.
# usage: coverage_merge.sh NVSVP OUT_DIR
set -u
nvsvp=$1
out=$2
fail() { echo "FAIL: $*"; exit 1; }
command -v verilator_coverage > /dev/null || fail "verilator_coverage not found: install the Debian package verilator"
rm -rf "$out" && mkdir -p "$out"
for seed in 11 12; do
  "$nvsvp" rtl-verify --random-only --backend model --seed $seed --beats 4000 --coverage-file "$out/seed$seed.dat" \
    > "$out/seed$seed.txt" || fail "rtl-verify --seed $seed: exit $?"
  grep -q "^coverage file: $out/seed$seed.dat " "$out/seed$seed.txt" || fail "no coverage file line for seed $seed"
done
"$nvsvp" rtl-coverage-merge "$out/seed11.dat" "$out/seed12.dat" --out "$out/merged.dat" --coverage \
  > "$out/merge.txt" || fail "rtl-coverage-merge: exit $?"

# "C '<key>' <count>" -> "<key>\t<count>", sorted (the key holds \001 and \002, never a tab).
points() { sed -n "s/^C '\(.*\)' \([0-9][0-9]*\)\$/\1\t\2/p" "$1" | LC_ALL=C sort; }
for f in seed11 seed12 merged; do points "$out/$f.dat" > "$out/$f.points"; done
[ "$(wc -l < "$out/seed11.points")" -eq 1269 ] || fail "seed 11: expected 1269 points, got $(wc -l < "$out/seed11.points")"
cmp -s "$out/seed11.points" "$out/seed12.points" && fail "the two seeds gave the same counts: the union would prove nothing"
LC_ALL=C awk -F '\t' '{ sum[$1] += $2 } END { for (k in sum) printf "%s\t%d\n", k, sum[k] }' \
  "$out/seed11.points" "$out/seed12.points" | LC_ALL=C sort > "$out/union.points"
cmp -s "$out/union.points" "$out/merged.points" || fail "the merge is not the sum per point (diff $out/union.points $out/merged.points)"
covered() { awk -F '\t' '$2 > 0 { print $1 }' "$@" | LC_ALL=C sort -u; }
covered "$out/seed11.points" "$out/seed12.points" > "$out/union.covered"
covered "$out/merged.points" > "$out/merged.covered"
cmp -s "$out/union.covered" "$out/merged.covered" || fail "the merge's covered points are not the union of the two seeds'"
hit=$(wc -l < "$out/merged.covered")
grep -q "^coverage: $hit of 1269 bins hit" "$out/merge.txt" || fail "the merge's report does not say $hit of 1269 bins hit"
grep -q "^op type class " "$out/merge.txt" || fail "no coverage table"

# verilator_coverage reads every file; its merge equals ours.
verilator_coverage --write "$out/verilator_merged.dat" "$out/seed11.dat" "$out/seed12.dat" \
  || fail "verilator_coverage cannot read the files"
points "$out/verilator_merged.dat" > "$out/verilator_merged.points"
cmp -s "$out/verilator_merged.points" "$out/merged.points" || fail "verilator_coverage's merge differs from ours"
verilator_coverage --write-info "$out/merged.info" "$out/merged.dat" || fail "verilator_coverage cannot read the merge"
[ "$(grep -c '^DA:' "$out/merged.info")" -eq 1269 ] || fail "expected 1269 lines of bins in verilator_coverage's info"
echo "merged 2 seeds: $hit of 1269 bins covered ($(covered "$out/seed11.points" | wc -l) and $(covered "$out/seed12.points" | wc -l) alone), counts summed per point; verilator_coverage agrees"
