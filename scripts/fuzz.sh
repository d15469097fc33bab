#!/usr/bin/env bash
# Fuzzes the input readers (tests/fuzz/): configures a clang build with libFuzzer, ASan and UBSan in
# build-fuzz/, builds only the harnesses, runs each for FUZZ_SECONDS seconds on a working corpus
# seeded from tests/fuzz/corpus/, and prints per harness the executions run and whether it crashed.
# Exit status 1 when any harness found something (its input is saved in build-fuzz/artifacts/).
#
#   scripts/fuzz.sh [HARNESS...]     (default: all; environment: FUZZ_SECONDS, FUZZ_BUILD_DIR,
#                                     FUZZ_JOBS, FUZZ_TIMEOUT, FUZZ_RSS_LIMIT_MB)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
build=${FUZZ_BUILD_DIR:-build-fuzz}
jobs=${FUZZ_JOBS:-$(nproc)}
timeout=${FUZZ_TIMEOUT:-10}            # seconds one input may take before it counts as a hang
rss_limit_mb=${FUZZ_RSS_LIMIT_MB:-2048}
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(scenario study study_manifest trace vector_file coverage_file)

scripts/install_deps.sh fuzz
# NDEBUG stays undefined: a failed assert is a finding too.
CC=clang CXX=clang++ cmake -S . -B "$build" -DNVSVP_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g" > /dev/null
cmake --build "$build" -j "$jobs" --target nvsvp_fuzz_harnesses

mkdir -p "$build/artifacts" "$build/logs"
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
status=0
summary=()
for harness in "${harnesses[@]}"; do
  corpus="$build/corpus/$harness"   # grows as libFuzzer finds new coverage; the seeds stay in git
  mkdir -p "$corpus"
  log="$build/logs/$harness.log"
  echo "fuzz: $harness for ${seconds} s (log $log)"
  set +e
  "$build/tests/fuzz/nvsvp_fuzz_$harness" "$corpus" "tests/fuzz/corpus/$harness" \
    -max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb="$rss_limit_mb" \
    -print_final_stats=1 -artifact_prefix="$build/artifacts/$harness-" > "$log" 2>&1
  rc=$?
  set -e
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [ "$rc" -eq 0 ]; then
    result="no crash"
  else
    result="FOUND A CRASH (exit $rc): $(grep -m1 -E '^==[0-9]+==ERROR|runtime error|deadly signal|terminate called|Test unit written' "$log" || true)"
    status=1
  fi
  summary+=("$(printf '%-12s %12s executions in %s s: %s' "$harness" "${executions:-?}" "$seconds" "$result")")
done
echo "fuzz: summary"
printf '  %s\n' "${summary[@]}"
exit $status
