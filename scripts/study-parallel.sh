#!/usr/bin/env bash
# Runs an nvsvp study through GNU parallel (Debian package `parallel`): here, or over other hosts
# with parallel's --sshlogin, then merges the point folders into study.csv and summary.json.
#
# usage: scripts/study-parallel.sh [--nvsvp PATH] [--out DIR] [--set K=V]... [--config-dir DIR] FILE [GNU parallel options...]
#
#   --nvsvp PATH  the nvsvp binary (default: $NVSVP, else nvsvp on PATH, else <repo>/build/nvsvp)
#   --out DIR     the study's output folder (default out/<study name>, as `nvsvp study` has it)
#   --set K=V     override a key of the base scenario, as `nvsvp study --set` (repeatable)
#   --config-dir DIR  where nvsvp finds its presets, as `nvsvp --config-dir`
#   after FILE    options for GNU parallel, e.g. -j 4, --sshlogin 4/host1,4/host2, --retries 2
#
# `nvsvp study FILE --emit-commands` writes one command line per point (absolute paths), which
# parallel runs in any order, each point into its own folder under DIR; `nvsvp study-merge DIR`
# then builds the tables, the same files a single `nvsvp study FILE --out DIR` run gives. Hosts
# named by --sshlogin must see the nvsvp binary, its configs, the study's files and DIR at the same
# paths (a shared file system) and have the same nvsvp build: the merge refuses points of another.
# Exit status: the merge's (0 every point passed, 1 a point failed or is missing, 2 bad input).
set -uo pipefail

usage() {
  echo "usage: $0 [--nvsvp PATH] [--out DIR] [--set K=V]... [--config-dir DIR] FILE [GNU parallel options...]" >&2
  exit 2
}

nvsvp=${NVSVP:-}
out=
sets=()
config=()
while [ $# -gt 0 ]; do
  case $1 in
    --nvsvp) [ $# -ge 2 ] || usage; nvsvp=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
    --set) [ $# -ge 2 ] || usage; sets+=(--set "$2"); shift 2 ;;
    --config-dir) [ $# -ge 2 ] || usage; config=(--config-dir "$2"); shift 2 ;;
    -h | --help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "$0: unknown option $1 before the study FILE (options after FILE go to GNU parallel)" >&2; usage ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || usage
study=$1
shift

if [ -z "$nvsvp" ]; then
  nvsvp=$(command -v nvsvp || true)
  [ -n "$nvsvp" ] || nvsvp=$(cd "$(dirname "$0")/.." && pwd)/build/nvsvp
fi
[ -x "$nvsvp" ] || { echo "$0: no nvsvp binary at $nvsvp (give --nvsvp PATH or set NVSVP)" >&2; exit 2; }
command -v parallel >/dev/null ||
  { echo "$0: GNU parallel is not installed (Debian package parallel; scripts/install_deps.sh installs it)" >&2; exit 2; }

if [ -z "$out" ]; then
  # The study's own default, out/<study name>; --list checks the study without running a point.
  name=$("$nvsvp" "${config[@]}" study "$study" "${sets[@]}" --list | sed -n '1s/^study \([^:]*\):.*/\1/p') || exit $?
  [ -n "$name" ] || { echo "$0: nvsvp study --list did not name the study" >&2; exit 1; }
  out=out/$name
fi
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)

commands=$out/commands.txt
"$nvsvp" "${config[@]}" study "$study" "${sets[@]}" --out "$out" --emit-commands >"$commands.tmp" || exit $?
mv "$commands.tmp" "$commands"
echo "study-parallel: $(wc -l <"$commands") points of $study into $out; joblog $out/parallel.joblog"

# --halt never: a failed point must not stop the others; the merge names it. Each command's own
# output is its console ([1/1] NAME: ok); the point's run log is in its folder.
parallel --will-cite --halt never --joblog "$out/parallel.joblog" "$@" <"$commands"
status=$?
# 1-100: that many points failed (the merge names them); 255: parallel's own error, a bad option.
if [ $status -eq 255 ]; then
  echo "$0: GNU parallel could not run the points (exit 255; see its message above)" >&2
  exit 2
fi
"$nvsvp" study-merge "$out"
