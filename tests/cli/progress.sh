#!/usr/bin/env bash
# The progress line: on a terminal (a pseudo-terminal from script(1)), `run` shows "scheme k/n
# NAME: simulated T us" (tutel's search: each candidate degree), `study` "points d/total,
# elapsed ..." and `anchors` "cases d/total, ..."; with stderr a file, or with --quiet, nothing.
# The simulation runs in slices while the line is shown: the report must be the same as without
# it (apart from host measurements), also for a run stopped by the simulated-time limit.
# usage: progress.sh NVSVP DATA_DIR WORKDIR   (DATA_DIR: tests/data)
nvsvp=$1
data=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
fail=0
say_fail() { echo "FAIL: $*"; fail=1; }
host_fields='"(wall_seconds|peak_rss_mb|plan_seconds|simulate_seconds|verify_seconds|remote_token_copies_per_wall_second|command_line)"'

# on_terminal OUTFILE COMMAND...: runs COMMAND with stdin, stdout and stderr on a pseudo-terminal;
# everything it wrote goes to OUTFILE. Returns its exit code.
on_terminal() {
  local out=$1
  shift
  local command
  printf -v command '%q ' "$@"
  script -qec "$command" /dev/null </dev/null >"$out"
}

# same_reports A B: report.json of two runs equal apart from host measurements.
same_reports() {
  grep -Ev "$host_fields" "$1/report.json" >"$1.stripped"
  grep -Ev "$host_fields" "$2/report.json" >"$2.stripped"
  grep -q '"simulated_us"' "$1.stripped" || say_fail "$1/report.json has no simulated_us to compare"
  diff -u "$1.stripped" "$2.stripped" >"$work/diff.txt" || { say_fail "$1 and $2 differ:"; head -40 "$work/diff.txt"; }
}

run_args=("$data/small_uniform.yaml" --set "schemes=[deepep,dysharp-basic,tutel]" --set workload.tokens_per_gpu=16)

# A run on a terminal: the line for each scheme and tutel's candidates, at its start and end.
on_terminal "$work/terminal.txt" "$nvsvp" run "${run_args[@]}" --out "$work/terminal" || say_fail "the run on a terminal exited $?"
for re in $'\rscheme 1/3 deepep: simulated 0\\.0 us' $'\rscheme 1/3 deepep: simulated [1-9][0-9.]* us' \
          $'\rscheme 2/3 dysharp-basic: simulated [1-9][0-9.]* us' $'\rscheme 3/3 tutel \\(degree 1\\): simulated [1-9]' \
          "report: .*/terminal/report.json"; do
  grep -Eq "$re" "$work/terminal.txt" || say_fail "the run on a terminal did not show /${re//$'\r'/\\r}/"
done
# Erased before the summary: spaces over the line, then the summary's first line from column 0.
grep -Eq $'\r +\rscenario small_uniform' "$work/terminal.txt" || say_fail "the progress line was not erased before the summary"

# stderr a file: no progress line, and the same report.
"$nvsvp" run "${run_args[@]}" --out "$work/file" >"$work/file.out" 2>"$work/file.err" || say_fail "the run exited $?"
[ ! -s "$work/file.err" ] || { say_fail "a run with stderr in a file wrote to it:"; head -5 "$work/file.err"; }
grep -q "simulated" "$work/file.out" && say_fail "the progress line went to stdout"
same_reports "$work/file" "$work/terminal"
for f in "$work"/file/*.csv "$work"/file/trace_*.json; do
  cmp -s "$f" "$work/terminal/$(basename "$f")" || say_fail "$(basename "$f") differs with the progress line shown"
done

# --quiet on a terminal: nothing at all.
on_terminal "$work/quiet.txt" "$nvsvp" run "${run_args[@]}" --quiet --out "$work/quiet" || say_fail "the quiet run exited $?"
[ ! -s "$work/quiet.txt" ] || { say_fail "a --quiet run on a terminal printed:"; head -5 "$work/quiet.txt"; }

# A run stopped by the simulated-time limit (exit 1): the slices end where the single run ends.
limit_args=("$data/small_uniform.yaml" --set simulation.max_time_us=5 --set workload.tokens_per_gpu=16)
on_terminal "$work/limit.txt" "$nvsvp" run "${limit_args[@]}" --out "$work/limit_terminal"
[ $? -eq 1 ] || say_fail "the run stopped by the time limit did not exit 1 on a terminal"
"$nvsvp" run "${limit_args[@]}" --quiet --out "$work/limit_file" 2>/dev/null
[ $? -eq 1 ] || say_fail "the run stopped by the time limit did not exit 1"
reached=$(grep -Eo '"simulated_us": [0-9.e+-]+' "$work/limit_file/report.json" | awk '{printf "%.1f", $2}')
grep -Eq $'\r'"scheme 1/1 deepep: simulated $reached us" "$work/limit.txt" \
  || say_fail "the stopped run did not show the simulated time it reached ($reached us)"
grep -q "W571" "$work/limit.txt" && say_fail "the stopped run printed SystemC's warning of an empty sc_start"
same_reports "$work/limit_file" "$work/limit_terminal"

# A study on a terminal: points done of the total, elapsed time; --quiet: nothing.
study_args=(study "$data/studies/tiny.yaml" --set workload.tokens_per_gpu=8)
on_terminal "$work/study.txt" "$nvsvp" "${study_args[@]}" --out "$work/study" || say_fail "the study on a terminal exited $?"
grep -Eq $'\rpoints 0/3, elapsed [0-9]+ s' "$work/study.txt" || say_fail "the study did not show points 0/3"
grep -Eq $'\rpoints [12]/3, elapsed [0-9]+ s, ~[0-9]+ s left' "$work/study.txt" || say_fail "the study did not show an estimate of the time left"
grep -Eq $'(^|\r)\\[3/3\\] ' "$work/study.txt" || say_fail "the study's own lines are missing on a terminal"
"$nvsvp" "${study_args[@]}" --out "$work/study_file" >/dev/null 2>"$work/study.err" || say_fail "the study exited $?"
[ ! -s "$work/study.err" ] || say_fail "a study with stderr in a file wrote to it"
on_terminal "$work/study_quiet.txt" "$nvsvp" "${study_args[@]}" --quiet --out "$work/study_quiet" || say_fail "the quiet study exited $?"
[ ! -s "$work/study_quiet.txt" ] || { say_fail "a --quiet study on a terminal printed:"; head -5 "$work/study_quiet.txt"; }
[ -s "$work/study_quiet/study.csv" ] || say_fail "the quiet study wrote no study.csv"

# anchors on a terminal: cases done of the total.
on_terminal "$work/anchors.txt" "$nvsvp" anchors --case p2p-h100-write-oneway --out "$work/anchors" \
  || say_fail "anchors on a terminal exited $?"
grep -Eq $'\rcases 0/1, elapsed [0-9]+ s' "$work/anchors.txt" || say_fail "anchors did not show cases 0/1"
grep -q "p2p-h100-write-oneway" "$work/anchors.txt" || say_fail "anchors' own table is missing on a terminal"

[ "$fail" -eq 0 ] && echo "progress: shown on a terminal, silent otherwise, reports unchanged"
exit "$fail"
