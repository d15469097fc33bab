#!/usr/bin/env bash
# Runs every case of a malformed-input table (tests/cli/malformed_inputs.table) against nvsvp and
# checks that each exits with status 2 and that its message names the expected origin (FILE:LINE,
# FILE, or `command line (--set ...)`) and the expected key path.
# usage: malformed_inputs.sh NVSVP TABLE
#
# A row is `name | origin | key | arguments`; `#` lines and blank lines are skipped. The last
# field is everything after the third `|`: nvsvp's arguments, split as the shell would (quotes
# work; no globbing), with @DATA replaced by tests/data, @M by tests/data/malformed and @OUT by a
# fresh directory of the case's own (@DATA and @M in the origin too). A case passes when nvsvp
# exits with exactly 2 and a line of its stderr matches
#     (start or '/' or ' ') ORIGIN ': ' [KEY ('[' n ']')* ': '] 'expected '
# with ORIGIN and KEY taken literally; KEY `-` means the message names no key (YAML syntax errors
# and the like, where there is none). A name starting with `!` marks a known defect of nvsvp
# (described in the table next to it): the case is still run and still fails until it is fixed.
# Prints a line per failing case (the command and its stderr), then `N passed, M failed`; exits 1
# when a case failed.
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 NVSVP TABLE" >&2
  exit 2
fi
nvsvp=$1
table=$2
[ -x "$nvsvp" ] || { echo "$0: $nvsvp is not an executable" >&2; exit 2; }
[ -f "$table" ] || { echo "$0: no table $table" >&2; exit 2; }
data=$(cd "$(dirname "$table")/../data" && pwd) || exit 2
work=$(mktemp -d)
q_work=$(printf '%q' "$work")
trap 'rm -rf "$work"' EXIT
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
set -f  # the arguments hold YAML (`*a`, `[...]`): never glob them

# Escapes a string for use as a literal inside an ERE.
ere_literal() { printf '%s' "$1" | sed 's/[][\.*^$+?(){}|/]/\\&/g'; }
# Sets the variable named $1 to $2 without leading and trailing blanks (no subshell: a row costs
# few processes).
trim_into() {
  local s=$2
  s=${s#"${s%%[![:space:]]*}"}
  s=${s%"${s##*[![:space:]]}"}
  printf -v "$1" '%s' "$s"
}
q_data=$(printf '%q' "$data")
q_malformed=$(printf '%q' "$data/malformed")

passed=0
failed=0
names=" "
line_no=0
while IFS= read -r row || [ -n "$row" ]; do
  line_no=$((line_no + 1))
  trim_into row "$row"
  case "$row" in '' | '#'*) continue ;; esac
  IFS='|' read -r f_name f_origin f_key f_args <<<"$row"
  trim_into name "$f_name"
  trim_into origin "$f_origin"
  trim_into key "$f_key"
  trim_into argstr "${f_args:-}"
  if [ -z "$name" ] || [ -z "$origin" ] || [ -z "$key" ] || [ -z "$argstr" ]; then
    echo "FAIL table line $line_no: expected name | origin | key | arguments, got: $row"
    failed=$((failed + 1))
    continue
  fi
  known_defect=
  if [ "${name#!}" != "$name" ]; then
    known_defect=" [known defect]"
    name=${name#!}
  fi
  if [ "${names#* "$name" }" != "$names" ]; then
    echo "FAIL table line $line_no: case $name is in the table twice"
    failed=$((failed + 1))
    continue
  fi
  names="$names$name "
  case "$name" in *[!A-Za-z0-9_.-]*)
    echo "FAIL table line $line_no: a case name is letters, digits, '_', '.' and '-', got $name"
    failed=$((failed + 1))
    continue ;;
  esac
  out="$work/out/$name"
  origin=${origin//@DATA/$data}
  origin=${origin//@M/$data/malformed}
  argstr=${argstr//@DATA/$q_data}
  argstr=${argstr//@M/$q_malformed}
  argstr=${argstr//@OUT/$q_work/out/$name}
  if ! eval "args=($argstr)" 2>/dev/null; then
    echo "FAIL $name (table line $line_no): the arguments do not parse as shell words: $argstr"
    failed=$((failed + 1))
    continue
  fi
  err="$work/stderr"
  timeout 60 "$nvsvp" "${args[@]}" >/dev/null 2>"$err"
  code=$?
  pattern="(^|[/ ])$(ere_literal "$origin"): "
  [ "$key" = "-" ] || pattern+="$(ere_literal "$key")(\\[[0-9]+\\])*: "
  pattern+="expected "
  problem=
  if [ "$code" -ne 2 ]; then
    problem="exit $code, expected 2"
  fi
  if ! grep -Eq -- "$pattern" "$err"; then
    what="origin '$origin'"
    [ "$key" = "-" ] || what+=" and key '$key'"
    problem="${problem:+$problem; }stderr does not name $what"
  fi
  if [ -z "$problem" ]; then
    passed=$((passed + 1))
    [ -z "$known_defect" ] || echo "note: $name is marked as a known defect but passes now: unmark it"
  else
    failed=$((failed + 1))
    command=$(printf ' %q' "$nvsvp" "${args[@]}")
    stderr=$(tr '\n' ' ' <"$err")
    echo "FAIL $name$known_defect: $problem; command:$command; stderr: ${stderr:-(empty)}"
  fi
done <"$table"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
