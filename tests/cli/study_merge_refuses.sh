#!/usr/bin/env bash
# What `nvsvp study-merge` does with point folders that are missing, failed, or not the study's:
# a missing or failed point is named and makes it exit 1 (the other points' rows still written);
# a point of another study, another nvsvp build or another scenario is refused with exit 2 and
# nothing is written; a point run into a folder of another study is refused before it runs.
# usage: study_merge_refuses.sh NVSVP STUDIES_DIR WORKDIR
nvsvp=$1
studies=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
set8=(--set workload.tokens_per_gpu=8)

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# expect CASE CODE ERE COMMAND...: the command exits CODE and its stdout or stderr matches ERE.
expect() {
  local name=$1 code=$2 re=$3
  shift 3
  "$@" >"$work/$name.out" 2>&1
  local got=$?
  [ $got -eq "$code" ] || { cat "$work/$name.out"; fail "$name: exit $got, expected $code"; return; }
  grep -Eq -- "$re" "$work/$name.out" || { cat "$work/$name.out"; fail "$name: output does not match /$re/"; }
}
copy_of_base() {  # a copy of the whole study's folder without its tables
  rm -rf "$work/$1"
  cp -r "$work/base" "$work/$1"
  rm -f "$work/$1/study.csv" "$work/$1/summary.json" "$work/$1/wall_times.csv"
}
lines() { grep -c . "$1" 2>/dev/null || echo 0; }

"$nvsvp" study "$studies/tiny.yaml" "${set8[@]}" --jobs 2 --out "$work/base" >/dev/null || { echo "FAIL: the base study exited $?"; exit 1; }
[ "$(lines "$work/base/study.csv")" -eq 7 ] || { echo "FAIL: the base study.csv has $(lines "$work/base/study.csv") lines"; exit 1; }

# A missing point: named, exit 1, the other points' rows (header + 2 points x 2 schemes).
copy_of_base missing
rm -r "$work/missing/2_top_k=4"
expect missing 1 "^top_k=4 +- +- +- +MISSING$" "$nvsvp" study-merge "$work/missing"
expect missing 1 "^point top_k=4 FAILED: missing: no point.json .*its folder: .*/missing/2_top_k=4$" \
  "$nvsvp" study-merge "$work/missing"
[ "$(lines "$work/missing/study.csv")" -eq 5 ] || fail "missing: study.csv has $(lines "$work/missing/study.csv") lines, expected 5"
grep -q '"failure": "missing: no point.json' "$work/missing/summary.json" || fail "missing: summary.json does not name it"
# ... and the command it prints runs the missing point again, after which the merge passes.
again=$(sed -n 's/^to run the failed and missing points again: //p' "$work/missing.out")
[[ "$again" == *"--point 2" ]] || fail "missing: no command to run point 2 again: $again"
(eval "${again/#nvsvp/$nvsvp}") >/dev/null || fail "missing: '$again' exited $?"
expect missing_again 0 "^top_k=4 .* ok$" "$nvsvp" study-merge "$work/missing"
cmp -s "$work/base/study.csv" "$work/missing/study.csv" || fail "missing: after the rerun study.csv differs from the base's"

# A failed point, run by a shard: the shard exits 1, the merge names the point and exits 1.
expect failed_shard 1 "^\[2/2\] max_time_us=5: FAILED \(exit status 1\)" \
  "$nvsvp" study "$studies/one_point_fails.yaml" "${set8[@]}" --shard 1/1 --out "$work/failed"
expect failed_merge 1 "^point max_time_us=5 FAILED: exit status 1; its output: .*/2_max_time_us=5/run.log$" \
  "$nvsvp" study-merge "$work/failed"

# A point of another study in the folder: refused, exit 2, nothing written.
copy_of_base foreign
rm -r "$work/foreign/1_top_k=2"
cp -r "$work/failed/1_max_time_us=10000" "$work/foreign/1_top_k=2"
expect foreign 2 "1_top_k=2/point.json: a point of study \"one_point_fails\", not of \"tiny\"" \
  "$nvsvp" study-merge "$work/foreign"
[ ! -e "$work/foreign/study.csv" ] || fail "foreign: study.csv written"

# A point made by another nvsvp build (its record says so): refused, exit 2.
copy_of_base version
sed -i 's/"version": "[^"]*"/"version": "0.0.0-other"/' "$work/version/3_seed=9/point.json"
expect version 2 "3_seed=9/point.json: made by nvsvp 0.0.0-other \(git [0-9a-f]+.*\), the study by nvsvp " \
  "$nvsvp" study-merge "$work/version"
[ ! -e "$work/version/summary.json" ] || fail "version: summary.json written"

# A record that is not one (a failure that is neither null nor text): refused, exit 2.
copy_of_base broken
sed -i 's/"failure": null/"failure": 5/' "$work/broken/2_top_k=4/point.json"
expect broken 2 "2_top_k=4/point.json: not a point record \(expected study, number, name" \
  "$nvsvp" study-merge "$work/broken"
printf '{"format": "1"}' >"$work/broken/study.json"
expect broken_manifest 2 "broken/study.json: expected \"format\": 2" "$nvsvp" study-merge "$work/broken"

# A point folder run again by hand with another scenario: refused, exit 2.
copy_of_base rerun
"$nvsvp" run "$work/rerun/1_top_k=2/scenario.yaml" --set workload.top_k=3 --out "$work/rerun/1_top_k=2" --quiet ||
  fail "rerun: nvsvp run exited $?"
expect rerun 2 "1_top_k=2/point.json: another scenario: .*/1_top_k=2/scenario.yaml is not the point's" \
  "$nvsvp" study-merge "$work/rerun"

# Another definition of the study (another --set) into the base's folder: refused before it runs.
expect other_definition 2 "study.json: the folder holds study \"tiny\" \(fingerprint \"[0-9a-f]{16}\"\), not this study" \
  "$nvsvp" study "$studies/tiny.yaml" --set workload.tokens_per_gpu=16 --point 1 --out "$work/base"
grep -q '"tokens_per_gpu": 8,' "$work/base/1_top_k=2/report.json" || fail "other_definition: the base's point 1 was run again"
expect other_merge 2 "study.json: the folder holds study \"tiny\" .*, not the one .*tiny.yaml defines" \
  "$nvsvp" study "$studies/tiny.yaml" --set workload.tokens_per_gpu=16 --merge "$work/base"

# Not a study's folder; an edited study.json.
expect no_manifest 2 "no_manifest: expected a study's output folder, but it has no study.json" \
  "$nvsvp" study-merge "$work/no_manifest"
copy_of_base edited
sed -i 's/"reference": "dysharp-basic"/"reference": "deepep"/' "$work/edited/study.json"
expect edited 2 "edited/study.json: expected a fingerprint that matches its contents" \
  "$nvsvp" study-merge "$work/edited"

# A study.json that is a folder: refused naming it, exit 2.
copy_of_base manifest_folder
rm "$work/manifest_folder/study.json"
mkdir "$work/manifest_folder/study.json"
expect manifest_folder 2 "manifest_folder/study.json: expected a study.json \(a JSON object\), got a directory" \
  "$nvsvp" study-merge "$work/manifest_folder"

# A point's report.json of another shape, or without one of the study's schemes: that point fails
# naming the file and why, exit 1; the other points' rows are still written.
copy_of_base report_shape
printf '{"results": 5}' >"$work/report_shape/2_top_k=4/report.json"
expect report_shape 1 "^point top_k=4 FAILED: a report.json of another shape \(.*/2_top_k=4/report.json: results is not a list\)" \
  "$nvsvp" study-merge "$work/report_shape"
[ "$(lines "$work/report_shape/study.csv")" -eq 5 ] || fail "report_shape: study.csv has $(lines "$work/report_shape/study.csv") lines, expected 5"
copy_of_base report_scheme
python3 - "$work/report_scheme/2_top_k=4/report.json" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
report["results"] = [r for r in report["results"] if r["scheme"] != "deepep"]
json.dump(report, open(sys.argv[1], "w"))
EOF
expect report_scheme 1 "^point top_k=4 FAILED: a report.json of another shape \(.*: no result of scheme deepep\)" \
  "$nvsvp" study-merge "$work/report_scheme"
copy_of_base report_folder
rm "$work/report_folder/2_top_k=4/report.json"
mkdir "$work/report_folder/2_top_k=4/report.json"
expect report_folder 1 "^point top_k=4 FAILED: no readable report.json \(.*/2_top_k=4/report.json is a directory\)" \
  "$nvsvp" study-merge "$work/report_folder"

# The untouched base merges again to the same files.
cp "$work/base/study.csv" "$work/base.csv"
expect base_again 0 "^csv: " "$nvsvp" study-merge "$work/base"
cmp -s "$work/base.csv" "$work/base/study.csv" || fail "base_again: study.csv changed"

[ $failures -eq 0 ] || { echo "$failures case(s) failed"; exit 1; }
echo "merge: missing and failed points named (exit 1); another study's, build's or scenario's refused (exit 2)"
