#!/usr/bin/env bash
# Submits an nvsvp study to Slurm: a job array runs the points, a dependent job merges them into
# study.csv and summary.json, the same files a single `nvsvp study FILE --out DIR` run gives.
#
# usage: scripts/study-slurm.sh [OPTIONS] FILE [sbatch options...]
#
#   --nvsvp PATH      the nvsvp binary (default: $NVSVP, else nvsvp on PATH, else <repo>/build/nvsvp)
#   --out DIR         the study's output folder (default out/<study name>, as `nvsvp study` has it)
#   --set K=V         override a key of the base scenario, as `nvsvp study --set` (repeatable)
#   --config-dir DIR  where nvsvp finds its presets, as `nvsvp --config-dir`
#   --shards N        N array tasks, task I running points I, I+N, I+2N, ... (`nvsvp study --shard
#                     I/N`), instead of one task per point: for a cluster whose MaxArraySize is
#                     below the number of points, or points too short to be worth a job each
#   --wait            wait for the merge job to end, print its log, exit with its status
#   --timeout S       how long --wait waits, in seconds (default 86400); the jobs go on after it
#   after FILE        options for sbatch, given to both submissions: e.g. --partition=short,
#                     --time=30, --mem=4G, --account=...
#
# `nvsvp study FILE --emit-commands` writes DIR/study.json and one command line per point, saved in
# DIR/slurm/commands.txt; array task k runs line k (DIR/slurm/point.sh), its output in
# DIR/slurm/point-k.log (shard-k.log with --shards; their command lines are DIR/slurm/shards.txt).
# The merge job (`nvsvp study-merge DIR`, output DIR/slurm/merge.log) depends on the array with
# afterany, so it also runs when points failed, and names them. --set and --config-dir reach every
# point either way: the emitted commands hold them, and the shard commands are given them.
# The compute nodes must see the nvsvp binary, its configs, the study's files and DIR at the same
# paths (a shared file system) and run the same nvsvp build: the merge refuses points of another.
#
# Exit status: 0 submitted (with --wait: the merge passed); with --wait, the merge's status (1 a
# point failed or is missing, 2 points of another study) or 1 when the merge job did not end well
# or in time; 2 bad usage or input; 1 when sbatch refused a submission.
set -uo pipefail

me=${0##*/}
usage() {
  echo "usage: $me [--nvsvp PATH] [--out DIR] [--set K=V]... [--config-dir DIR] [--shards N] [--wait]" \
       "[--timeout S] FILE [sbatch options...]" >&2
  exit 2
}
bad() {  # bad OPTION WHAT-WAS-EXPECTED
  echo "$me: $1: $2" >&2
  exit 2
}
# A word for sh or bash, single-quoted: safe for any path, also under /bin/sh (sbatch --wrap).
quote() {
  local s=${1//\'/\'\\\'\'}
  printf "'%s'" "$s"
}
command_line() {  # the words given, quoted, as one line
  local line='' word
  for word in "$@"; do
    line+="${line:+ }$(quote "$word")"
  done
  printf '%s\n' "$line"
}
absolute() {
  case $1 in
    /*) printf '%s\n' "$1" ;;
    *) printf '%s\n' "$PWD/$1" ;;
  esac
}

nvsvp=${NVSVP:-}
out=
sets=()
config=()
shards=
wait_for_merge=false
timeout=86400
while [ $# -gt 0 ]; do
  case $1 in
    --nvsvp | --out | --set | --config-dir | --shards | --timeout)
      [ $# -ge 2 ] || bad "$1" "expected a value after it"
      case $1 in
        --nvsvp) nvsvp=$2 ;;
        --out) out=$2 ;;
        --set) sets+=(--set "$2") ;;
        --config-dir) config=(--config-dir "$(absolute "$2")") ;;
        --shards) shards=$2 ;;
        --timeout) timeout=$2 ;;
      esac
      shift 2 ;;
    --wait) wait_for_merge=true; shift ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) bad "$1" "unknown option before the study FILE (options after FILE go to sbatch)" ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { echo "$me: expected the study FILE" >&2; usage; }
study=$(absolute "$1")
shift
sbatch_options=("$@")

if [ -n "$shards" ] && ! [[ $shards =~ ^[1-9][0-9]*$ ]]; then
  bad --shards "expected a positive integer, got '$shards'"
fi
[[ $timeout =~ ^[1-9][0-9]*$ ]] || bad --timeout "expected a positive number of seconds, got '$timeout'"
command -v sbatch >/dev/null ||
  { echo "$me: sbatch not found on PATH (Slurm's client commands; Debian package slurm-client)" >&2; exit 2; }

if [ -z "$nvsvp" ]; then
  nvsvp=$(command -v nvsvp || true)
  [ -n "$nvsvp" ] || nvsvp=$(cd "$(dirname "$0")/.." && pwd)/build/nvsvp
fi
nvsvp=$(absolute "$nvsvp")  # the jobs do not run in this folder
[ -x "$nvsvp" ] && [ -f "$nvsvp" ] || bad --nvsvp "no nvsvp binary at $nvsvp (give --nvsvp PATH or set NVSVP)"

if [ -z "$out" ]; then
  # The study's own default, out/<study name>; --list checks the study without running a point.
  # (pipefail: a study nvsvp refuses exits here with nvsvp's status, 2)
  name=$("$nvsvp" "${config[@]}" study "$study" "${sets[@]}" --list | sed -n '1s/^study \([^:]*\):.*/\1/p') ||
    exit $?
  [ -n "$name" ] || { echo "$me: nvsvp study --list did not name the study" >&2; exit 1; }
  out=out/$name
fi
out=$(absolute "$out")
slurm=$out/slurm
mkdir -p "$out" || exit 2
# Logs and task lists of an earlier submission into this folder would mislead.
rm -rf "$slurm" && mkdir -p "$slurm" || exit 2

commands=$slurm/commands.txt
"$nvsvp" "${config[@]}" study "$study" "${sets[@]}" --out "$out" --emit-commands >"$commands" || exit $?
points=$(grep -c . "$commands")
[ "$points" -gt 0 ] || { echo "$me: nvsvp study --emit-commands printed no command" >&2; exit 1; }

tasks_file=$commands
tasks=$points
log_name=point
if [ -n "$shards" ]; then
  # More shards than points would leave tasks with nothing to run.
  tasks=$((shards < points ? shards : points))
  tasks_file=$slurm/shards.txt
  log_name=shard
  for ((i = 1; i <= tasks; i++)); do
    command_line "$nvsvp" "${config[@]}" study "$study" --shard "$i/$tasks" --out "$out" "${sets[@]}"
  done >"$tasks_file"
fi

cat >"$slurm/point.sh" <<'EOF'
#!/usr/bin/env bash
# Written by scripts/study-slurm.sh: array task k runs line k of the task list given ($1) and
# exits with its status, so that Slurm records a failed point as a failed task.
set -u
k=${SLURM_ARRAY_TASK_ID:?is not set: run this as a task of a Slurm job array}
line=$(sed -n "${k}p" "$1")
[ -n "$line" ] || { echo "point.sh: $1 has no line $k" >&2; exit 1; }
echo "point.sh: task $k on $(hostname): $line"
exec bash -c "$line"
EOF
chmod +x "$slurm/point.sh"

submit() {  # submit WHAT SBATCH-ARGUMENTS...: prints the job id; sbatch's own message on failure
  local what=$1 answer
  shift
  answer=$(sbatch --parsable "$@") ||
    { echo "$me: sbatch refused the $what (its message is above)" >&2; exit 1; }
  printf '%s\n' "${answer%%;*}"  # --parsable prints ID or ID;CLUSTER
}
# A cluster's MaxArraySize (1001 by default) bounds the array: --shards N runs more points a task.
array=$(submit "job array of $tasks tasks (over the cluster's MaxArraySize? then give --shards N)" \
        --array="1-$tasks" --job-name="nvsvp-study" --output="$slurm/$log_name-%a.log" \
        "${sbatch_options[@]}" "$slurm/point.sh" "$tasks_file") || exit 1
merge_command=$(command_line "$nvsvp" "${config[@]}" study-merge "$out")
merge=$(submit "merge job" --dependency="afterany:$array" --job-name="nvsvp-study-merge" \
        --output="$slurm/merge.log" "${sbatch_options[@]}" --wrap "$merge_command") || exit 1

if [ -n "$shards" ]; then
  echo "study-slurm: $points points of $study in $tasks shards: job array $array ($slurm/shard-I.log)"
else
  echo "study-slurm: $points points of $study: job array $array ($slurm/point-K.log)"
fi
echo "study-slurm: merge job $merge, after the array: $out/study.csv, $out/summary.json ($slurm/merge.log)"
$wait_for_merge || exit 0

# --- wait for the merge job: poll scontrol (sacct once the controller has forgotten the job) ---
job_state() {  # prints STATE EXITCODE (EXITCODE as status:signal), or nothing when unknown
  local info
  info=$(timeout 60 scontrol show job --oneliner "$merge" 2>/dev/null)
  if [ -n "$info" ]; then
    sed -n 's/.* JobState=\([^ ]*\) .* ExitCode=\([0-9]*:[0-9]*\).*/\1 \2/p' <<<"$info"
    return
  fi
  command -v sacct >/dev/null &&
    timeout 60 sacct --noheader --allocations --parsable2 --jobs="$merge" --format=State,ExitCode \
      2>/dev/null |
      head -1 | sed -n 's/^\([A-Z_]*\)[^|]*|\([0-9]*:[0-9]*\)$/\1 \2/p'
}
deadline=$((SECONDS + timeout))
state=
while :; do
  read -r state code <<<"$(job_state)"
  case ${state:-} in
    COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE | PREEMPTED)
      break ;;
    "") echo "$me: Slurm no longer knows merge job $merge (scontrol and sacct have no record)" >&2; exit 1 ;;
  esac
  [ $SECONDS -lt $deadline ] ||
    { echo "$me: merge job $merge still ${state} after ${timeout} s; the jobs go on" >&2; exit 1; }
  sleep 2
done
echo "study-slurm: merge job $merge ended: $state, exit code ${code%%:*}; $slurm/merge.log:"
cat "$slurm/merge.log" 2>/dev/null
status=${code%%:*}
if [ "${code#*:}" != 0 ] || { [ "$state" != COMPLETED ] && [ "$state" != FAILED ]; }; then
  echo "$me: merge job $merge did not run to its end ($state, signal ${code#*:})" >&2
  exit 1
fi
exit "$status"
