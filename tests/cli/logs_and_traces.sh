#!/usr/bin/env bash
# `nvsvp run --log` and `--trace` end to end on a small scenario:
#   1. --log 'switch*=debug' prints the switch chips' debug lines on stderr and nothing of the GPUs;
#   2. --trace gpu_0 writes a row per message on exactly GPU 0's links, as many per link and
#      direction as links_<scheme>.csv counts, and none on the other GPUs' links;
#   3. --trace 'switch_*.csr' writes the bring-up's register accesses: a LO and a HI route entry
#      per chip and GPU, one ID read per chip.
# usage: logs_and_traces.sh NVSVP SCENARIO WORKDIR
nvsvp=$1
scenario=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

# 1. Switch logs. nvls's multimem stores make the chips replicate (a debug line each).
"$nvsvp" run "$scenario" --set "schemes=[nvls]" --out "$work/log" --quiet --log 'switch*=debug' \
  2>"$work/log.stderr" || fail "the --log run exited $?"
switch_lines=$(grep -cE '^[0-9]+\.[0-9]{3} ns \[debug\] switch_[0-9]+: ' "$work/log.stderr")
[ "$switch_lines" -gt 0 ] || fail "no switch debug lines on stderr: $(head -3 "$work/log.stderr")"
grep -qE 'switch_[0-9]+: multimem_store #[0-9]+ from GPU [0-9]+: group at 0x[0-9a-f]+, 8 member copies' "$work/log.stderr" ||
  fail "no replication line of a switch"
if grep -qE '\] (gpu_|firmware)' "$work/log.stderr"; then
  fail "lines of components --log did not name: $(grep -m3 -E '\] (gpu_|firmware)' "$work/log.stderr")"
fi
echo "--log 'switch*=debug': $switch_lines switch debug lines, none of GPUs or firmware"

# 2. and 3. Traces (deepep: the scenario's own scheme).
"$nvsvp" run "$scenario" --out "$work/trace" --quiet --trace gpu_0 --trace 'switch_*.csr' ||
  fail "the --trace run exited $?"
transactions=$work/trace/transactions_deepep.csv
registers=$work/trace/registers_deepep.csv
links=$work/trace/links_deepep.csv
[ -f "$transactions" ] || fail "$transactions was not written"
[ -f "$registers" ] || fail "$registers was not written"
head -1 "$transactions" | grep -q '^time_ns,component,direction,gpu,link,chip,port,kind,traffic_class,vc,source,destination,bytes,' ||
  fail "transactions header: $(head -1 "$transactions")"
# links_<scheme>.csv: direction,gpu,link,chip,port,messages,packets,wire_bytes,...; the trace's columns
# 3-5 are direction,gpu,link. Both sides as "direction,gpu,link messages wire_bytes", sorted.
awk -F, 'NR > 1 && $2 == 0 && $6 > 0 { print $1 "," $2 "," $3, $6, $8 }' "$links" | sort >"$work/expected"
awk -F, 'NR > 1 { key = $3 "," $4 "," $5; n[key]++; b[key] += $13 } END { for (k in n) print k, n[k], b[k] }' \
  "$transactions" | sort >"$work/traced"
[ -s "$work/expected" ] || fail "GPU 0's links carried nothing: the comparison proves nothing"
diff -u "$work/expected" "$work/traced" || fail "the trace's messages and bytes per link differ from $links"
rows=$(($(wc -l <"$transactions") - 1))
echo "--trace gpu_0: $rows rows, per link and direction equal to links_deepep.csv ($(wc -l <"$work/expected") links)"

chips=$(awk -F, 'NR > 1 { print $4 }' "$links" | sort -u | wc -l)
gpus=$(awk -F, 'NR > 1 { print $2 }' "$links" | sort -u | wc -l)
id_reads=$(grep -c ',read,0x0,ID,' "$registers")
# Two route words per chip and GPU (chips of up to 64 ports; docs/registers.md).
route_writes=$(grep -cE ',write,0x[0-9a-f]+,ROUTE\[[0-9]+\]\.W[01],' "$registers")
[ "$id_reads" -eq "$chips" ] || fail "$id_reads ID reads, expected one per chip ($chips)"
[ "$route_writes" -eq $((2 * chips * gpus)) ] ||
  fail "$route_writes route writes, expected words 0 and 1 per chip and GPU ($((2 * chips * gpus)))"
refused=$(tail -n +2 "$registers" | grep -vc ',TLM_OK_RESPONSE,')
[ "$refused" -eq 0 ] || fail "$refused refused register accesses"
echo "--trace 'switch_*.csr': $(($(wc -l <"$registers") - 1)) accesses, $id_reads ID reads, $route_writes route writes"
