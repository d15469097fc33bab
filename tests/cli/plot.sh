#!/usr/bin/env bash
# `nvsvp plot` on real output: a small run (two schemes), the same run without timelines, and a
# small study. Each picture must exist, be non-empty and parse as SVG (XML with an <svg> root) or
# PNG (signature and size from its header); index.html must hold each picture; plotting twice
# gives the same bytes. Then bad input: a folder with no output, a garbled report.json, a
# utilization file with a wrong header, a Python without matplotlib and a binary with no script
# beside it: each exits 2 with a message naming the file (or the package) and what was expected.
# usage: plot.sh NVSVP DATA_DIR WORKDIR   (DATA_DIR: tests/data)
nvsvp=$1
data=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
python=${NVSVP_PYTHON:-/usr/bin/python3}
[ -x "$python" ] || python=python3
fail=0
say_fail() { echo "FAIL: $*"; fail=1; }

# valid_picture FILE: an SVG that parses with an <svg> root, or a PNG with a sane header.
valid_picture() {
  "$python" - "$1" <<'EOF'
import struct, sys, xml.etree.ElementTree as ET
path = sys.argv[1]
with open(path, "rb") as f:
    data = f.read()
if not data:
    sys.exit(f"{path}: empty")
if path.endswith(".svg"):
    root = ET.fromstring(data)
    if not root.tag.endswith("}svg") or len(list(root.iter())) < 10:
        sys.exit(f"{path}: not an SVG picture with content (root {root.tag})")
elif path.endswith(".png"):
    width, height = struct.unpack(">II", data[16:24])
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR" or width < 100 or height < 100:
        sys.exit(f"{path}: not a PNG picture of at least 100 x 100 pixels")
else:
    sys.exit(f"{path}: neither .svg nor .png")
EOF
}

# expect_pictures DIR EXT NAME...: each DIR/NAME.EXT valid, and inline in DIR/index.html.
expect_pictures() {
  local dir=$1 ext=$2
  shift 2
  [ -s "$dir/index.html" ] || say_fail "$dir/index.html not written"
  for name in "$@"; do
    local f="$dir/$name.$ext"
    if [ ! -s "$f" ]; then
      say_fail "$f not written or empty"
    elif ! valid_picture "$f"; then
      say_fail "$f is not a valid picture"
    elif ! grep -q "href=\"$name.$ext\"" "$dir/index.html"; then
      say_fail "$dir/index.html does not show $name.$ext"
    fi
  done
  local inline=$( [ "$ext" = svg ] && echo "<svg" || echo "data:image/png;base64,")
  [ "$(grep -o "$inline" "$dir/index.html" | wc -l)" -eq $# ] || say_fail "$dir/index.html does not hold the $# pictures inline"
}

# expect_exit CODE STDERR_ERE COMMAND...: the command's exit code and a line of its stderr (an
# empty ERE: nothing on stderr).
expect_exit() {
  local code=$1 re=$2
  shift 2
  "$@" >"$work/out.txt" 2>"$work/err.txt"
  local got=$?
  [ "$got" -eq "$code" ] || say_fail "exit $got, expected $code: $*"
  if [ -z "$re" ]; then
    [ ! -s "$work/err.txt" ] || { say_fail "stderr not empty: $*"; cat "$work/err.txt"; }
  elif ! grep -Eq -- "$re" "$work/err.txt"; then
    say_fail "stderr does not match /$re/: $*"
    cat "$work/err.txt"
  fi
}

# A run: two schemes, every picture. latency_<scheme>.csv comes from the run when it writes one,
# else from the fixture.
run=$work/run
"$nvsvp" run "$data/small_uniform.yaml" --quiet --set "schemes=[deepep,dysharp-basic]" --set workload.tokens_per_gpu=16 \
  --out "$run" || say_fail "the run exited $?"
[ -f "$run/latency_deepep.csv" ] || cp "$data/plot/latency_deepep.csv" "$run/"
expect_exit 0 "" "$nvsvp" plot "$run"
expect_pictures "$run" svg layer_time utilization latency
grep -q "dysharp-basic" "$run/layer_time.svg" || say_fail "layer_time.svg does not name scheme dysharp-basic"
grep -q "combine" "$run/layer_time.svg" || say_fail "layer_time.svg does not name phase combine"
"$nvsvp" plot "$run" --out "$work/again" >/dev/null || say_fail "the second plot exited $?"
for name in layer_time utilization latency; do
  cmp -s "$run/$name.svg" "$work/again/$name.svg" || say_fail "plotting twice gave different $name.svg"
done
expect_exit 0 "" "$nvsvp" plot "$run" --format png --out "$work/png"
expect_pictures "$work/png" png layer_time utilization latency

# Without timelines or latency files: the layer time alone, the others left out and said so.
bare=$work/no_timelines
"$nvsvp" run "$data/small_uniform.yaml" --quiet --no-timelines --set workload.tokens_per_gpu=16 --out "$bare" \
  || say_fail "the run without timelines exited $?"
rm -f "$bare"/latency_*.csv
expect_exit 0 "" "$nvsvp" plot "$bare"
expect_pictures "$bare" svg layer_time
grep -q "^utilization: no utilization_<scheme>.csv" "$work/out.txt" || say_fail "plot did not say the utilization picture is left out"
grep -q "^latency: no latency_<scheme>.csv" "$work/out.txt" || say_fail "plot did not say the latency picture is left out"
[ ! -e "$bare/utilization.svg" ] || say_fail "utilization.svg drawn without a utilization file"

# A study: the speedup chart.
study=$work/study
"$nvsvp" study "$data/studies/tiny.yaml" --set workload.tokens_per_gpu=8 --out "$study" >/dev/null \
  || say_fail "the study exited $?"
expect_exit 0 "" "$nvsvp" plot "$study"
expect_pictures "$study" svg speedup
grep -q "deepep" "$study/speedup.svg" || say_fail "speedup.svg does not name scheme deepep"

# Bad input.
mkdir -p "$work/empty"
expect_exit 2 "empty: expected a run's output \(report.json\) or a study's \(study.csv and summary.json\), found neither" \
  "$nvsvp" plot "$work/empty"
expect_exit 2 "no_such_folder: expected a run's or a study's output folder" "$nvsvp" plot "$work/no_such_folder"
mkdir -p "$work/garbled"
printf '{"results": [\n  {"scheme": "deepep",\n' >"$work/garbled/report.json"
expect_exit 2 "garbled/report.json:[0-9]+: expected JSON" "$nvsvp" plot "$work/garbled"
mkdir -p "$work/bad_header"
cp "$run/report.json" "$work/bad_header/"
printf 'time,up,down\n0,0,0\n' >"$work/bad_header/utilization_deepep.csv"
expect_exit 2 "bad_header/utilization_deepep.csv:1: expected a header starting time_us,gpu_to_switch,switch_to_gpu, got time,up,down" \
  "$nvsvp" plot "$work/bad_header"
mkdir -p "$work/deep"
python3 -c 'print("[" * 100000 + "]" * 100000)' >"$work/deep/report.json"
expect_exit 2 "deep/report.json: expected JSON of a run or a study, got values nested too deep to read" "$nvsvp" plot "$work/deep"
mkdir -p "$work/summary_list"
cp "$study/study.csv" "$work/summary_list/"
printf '[1, 2]\n' >"$work/summary_list/summary.json"
expect_exit 2 "summary_list/summary.json: expected a study summary \(a JSON object\), got a list" \
  "$nvsvp" plot "$work/summary_list"
mkdir -p "$work/cut_header"
cp "$study/summary.json" "$work/cut_header/"
head -c 20 "$study/study.csv" >"$work/cut_header/study.csv"
expect_exit 2 "cut_header/study.csv: expected lines ending with a newline, got a file cut short" "$nvsvp" plot "$work/cut_header"
expect_exit 2 "--format: jpg not in" "$nvsvp" plot "$run" --format jpg
PYTHONPATH="$data/plot/no_matplotlib" expect_exit 2 "needs matplotlib .*install the Debian package python3-matplotlib" \
  "$nvsvp" plot "$run"

# The script is found beside the binary: share/nvsvp/ in its folder (the build tree), or
# ../share/nvsvp/ (an installed binary); neither is an error naming both places.
mkdir -p "$work/prefix/bin" "$work/prefix/share/nvsvp" "$work/lone"
cp "$nvsvp" "$work/prefix/bin/nvsvp"
cp "$(dirname "$nvsvp")/share/nvsvp/nvsvp_plot.py" "$work/prefix/share/nvsvp/"
expect_exit 0 "" "$work/prefix/bin/nvsvp" plot "$study" --out "$work/installed"
expect_pictures "$work/installed" svg speedup
cp "$nvsvp" "$work/lone/nvsvp"
expect_exit 2 "expected the plot script nvsvp_plot.py at .*/lone/share/nvsvp/nvsvp_plot.py or .*/share/nvsvp/nvsvp_plot.py, found neither" \
  "$work/lone/nvsvp" plot "$run"

[ "$fail" -eq 0 ] && echo "plot: every picture drawn and checked"
exit "$fail"
