#!/usr/bin/env bash
# Inputs that are not regular files and output folders nvsvp cannot make: each is bad input, exit
# 2, with a message naming the path and what it is; nothing blocks (a FIFO that nobody writes used
# to hang every reader in open) and nothing falls back to a default (`--out ''`).
# usage: special_files.sh NVSVP DATA_DIR WORKDIR
nvsvp=$1
data=$2
work=$3
rm -rf "$work"
mkdir -p "$work"

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# expect CASE CODE ERE COMMAND...: within 30 s the command exits CODE and its output matches ERE.
expect() {
  local name=$1 code=$2 re=$3
  shift 3
  timeout 30 "$@" >"$work/$name.out" 2>&1
  local got=$?
  [ $got -ne 124 ] || { fail "$name: still running after 30 s"; return; }
  [ $got -eq "$code" ] || { cat "$work/$name.out"; fail "$name: exit $got, expected $code"; return; }
  grep -Eq -- "$re" "$work/$name.out" || { cat "$work/$name.out"; fail "$name: output does not match /$re/"; }
}

# FIFOs in every place an input is read from.
mkfifo "$work/scenario.yaml" "$work/study.yaml" "$work/trace.txt"
expect fifo_scenario 2 "scenario.yaml: expected a regular file, got a FIFO" "$nvsvp" validate "$work/scenario.yaml"
expect fifo_run 2 "scenario.yaml: expected a regular file, got a FIFO" "$nvsvp" run "$work/scenario.yaml" --out "$work/o"
expect fifo_study 2 "study.yaml: expected a regular file, got a FIFO" "$nvsvp" study "$work/study.yaml" --list
expect fifo_trace 2 "workload.routing.file: expected a readable trace file \(a regular file\), got .*trace.txt \(a FIFO" \
  "$nvsvp" validate "$data/small_uniform.yaml" --set "workload.routing={kind: trace, file: $work/trace.txt}"
expect device_scenario 2 "/dev/null: expected a regular file, got a character device" "$nvsvp" validate /dev/null

# Output folders that cannot be made or written.
touch "$work/a_file"
expect out_is_a_file 2 "--out: expected an output folder nvsvp can create and write, got .*a_file" \
  "$nvsvp" run "$data/small_uniform.yaml" --quiet --out "$work/a_file"
expect out_under_a_file 2 "--out: expected an output folder nvsvp can create and write, got .*a_file/below" \
  "$nvsvp" run "$data/small_uniform.yaml" --quiet --out "$work/a_file/below"
expect out_in_proc 2 "--out: expected an output folder nvsvp can create and write, got /proc/nvsvp_out" \
  "$nvsvp" run "$data/small_uniform.yaml" --quiet --out /proc/nvsvp_out
expect out_dev_null 2 "--out: expected an output folder nvsvp can create and write, got /dev/null" \
  "$nvsvp" study "$data/studies/tiny.yaml" --out /dev/null
ln -s loop "$work/loop" 2>/dev/null
expect out_symlink_loop 2 "--out: expected an output folder nvsvp can create and write, got .*loop" \
  "$nvsvp" anchors --case nccl-h100x8-allreduce-ring --quiet --out "$work/loop/x"
if [ "$(id -u)" -ne 0 ]; then  # root writes a read-only folder anyway
  mkdir "$work/read_only" && chmod a-w "$work/read_only"
  expect out_read_only 2 "--out: expected an output folder nvsvp can create and write, got .*read_only" \
    "$nvsvp" run "$data/small_uniform.yaml" --quiet --out "$work/read_only"
fi
expect out_empty 2 "--out: expected a path, got an empty one" "$nvsvp" run "$data/small_uniform.yaml" --out ''
expect config_dir_empty 2 "--config-dir: expected a path, got an empty one" \
  "$nvsvp" --config-dir '' validate "$data/small_uniform.yaml"

# A second run into a folder a run is writing: refused, exit 2, naming the process that holds it;
# the first run is not disturbed.
"$nvsvp" run "$data/small_uniform.yaml" --quiet --out "$work/busy" --set workload.tokens_per_gpu=1024 \
  --set 'schemes=[deepep, dysharp, nvls, comet]' >"$work/busy_first.out" 2>&1 &
first=$!
for _ in $(seq 1 300); do  # until the first run holds the folder (its pid is in the lock file)
  [ -s "$work/busy/.nvsvp_run.lock" ] && break
  sleep 0.1
done
expect busy 2 "--out: expected a folder no other run is writing, got .*busy \(in use by nvsvp process $first\)" \
  "$nvsvp" run "$data/small_uniform.yaml" --quiet --out "$work/busy"
wait $first || fail "busy: the first run exited $? ($(cat "$work/busy_first.out"))"
grep -q '"tokens_per_gpu": 1024' "$work/busy/report.json" || fail "busy: the first run's report is not whole"

# A write that fails (here a file-size limit of 16 KiB, as a full disk would: scenario.yaml fits,
# the links and stats CSVs do not): exit 1 and no report.json that says the run passed; the report
# is written last, after every other file.
expect write_fails 1 "cannot write .*(trace|links|utilization|occupancy|stats|latency)_deepep" \
  bash -c 'trap "" XFSZ; ulimit -f 16 && exec "$0" "$@"' "$nvsvp" run "$data/small_uniform.yaml" --quiet \
  --out "$work/write_fails"
[ ! -e "$work/write_fails/report.json" ] || fail "write_fails: report.json written"

# A --set of 120 KB (60 000 list entries) costs memory linear in its length: each parsed node used
# to keep a copy of the whole text (over 4 GiB). The message quotes the start of the value.
# (Under ASan, whose shadow memory needs far more address space than any limit, the limit is off.)
memory_limit='ulimit -v 2000000 && '
[ -z "${ASAN_OPTIONS:-}" ] || memory_limit=''
long_list="[$(printf '1,%.0s' $(seq 1 59999))1]"
expect long_set 2 "command line \(--set simulation.max_time_us=\[1,1,1,.*\.\.\.\): simulation.max_time_us: expected " \
  bash -c "$memory_limit"'exec "$0" "$@"' "$nvsvp" validate "$data/small_uniform.yaml" \
  --set "simulation.max_time_us=$long_list"

rm -f "$work/loop"  # later walks of the build's test outputs need not meet it

[ $failures -eq 0 ] || { echo "$failures case(s) failed"; exit 1; }
echo "special files and unusable output folders: refused with exit 2, nothing blocked"
