#!/usr/bin/env bash
# Where a binary finds its presets (docs/configuration.md#where-presets-are-found): a copy of the
# binary alone finds none and names every place it searched (exit 2); NVSVP_CONFIG_PATH and
# --config-dir point it to some; configs/ in share/nvsvp beside it is found; and `cmake --install`
# gives a prefix whose bin/nvsvp reads its own share/nvsvp/configs, with the docs in share/doc/nvsvp;
# the build tree's share/nvsvp links to the source tree's configs/ and plot script.
# usage: config_search.sh NVSVP BUILD_DIR SOURCE_DIR WORKDIR
set -u
nvsvp=$1 build=$2 source=$3 work=$4
rm -rf "$work"
mkdir -p "$work/moved"
unset NVSVP_CONFIG_PATH
fail() { echo "FAIL: $*"; exit 1; }
scenario=$source/tests/data/small_uniform.yaml

# A copy of the binary, without its share/ folder.
cp "$nvsvp" "$work/moved/nvsvp"
"$work/moved/nvsvp" validate "$scenario" >"$work/out" 2>"$work/err"
code=$?
[ "$code" -eq 2 ] || fail "a binary without presets exited $code, expected 2: $(cat "$work/out" "$work/err")"
for place in "NVSVP_CONFIG_PATH (not set)" "$work/moved/share/nvsvp/configs" "$work/share/nvsvp/configs"; do
  grep -qF -- "$place" "$work/err" || fail "the message does not name $place: $(cat "$work/err")"
done
grep -q "expected a directory holding platforms/ or models/" "$work/err" || fail "the message says not what was expected"
# It does not read the source tree it was built from.
grep -qF -- "$source/configs" "$work/err" && fail "the copy looked into the source tree"

# NVSVP_CONFIG_PATH: the first entry that holds presets.
NVSVP_CONFIG_PATH="$work/none:$source/configs" "$work/moved/nvsvp" validate "$scenario" >/dev/null ||
  fail "NVSVP_CONFIG_PATH=$work/none:$source/configs did not find the presets"
"$work/moved/nvsvp" --config-dir "$source/configs" validate "$scenario" >/dev/null ||
  fail "--config-dir $source/configs did not find the presets"
"$work/moved/nvsvp" --config-dir "$work/none" validate "$scenario" 2>"$work/err"
code=$?
[ "$code" -eq 2 ] && grep -qF -- "--config-dir: expected a directory of presets" "$work/err" ||
  fail "--config-dir to no directory: exit $code, $(cat "$work/err")"

# Beside the binary: share/nvsvp/configs.
mkdir -p "$work/moved/share/nvsvp"
cp -r "$source/configs" "$work/moved/share/nvsvp/configs"
"$work/moved/nvsvp" presets | grep -q "^platform  dgx-h100 " || fail "the copy does not list its share/nvsvp/configs"

# The build tree's presets are the source tree's own (a link), so that an edit under configs/
# takes effect on the next run without a build; the plot script likewise.
for pair in "configs configs" "nvsvp_plot.py scripts/nvsvp_plot.py"; do
  set -- $pair
  linked=$(readlink -f "$build/share/nvsvp/$1")
  [ "$linked" = "$(readlink -f "$source/$2")" ] ||
    fail "$build/share/nvsvp/$1 is not the source tree's $2 (it resolves to $linked)"
done

# cmake --install into a prefix.
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" 2>&1 || fail "cmake --install: $(cat "$work/install.log")"
for file in bin/nvsvp share/nvsvp/configs/platforms/dgx-h100.yaml share/nvsvp/configs/scenarios/default.yaml \
            share/doc/nvsvp/README.md share/doc/nvsvp/docs/configuration.md; do
  [ -e "$work/prefix/$file" ] || fail "cmake --install did not install $file"
done
# An installed binary keeps the copy the install made.
[ -L "$work/prefix/share/nvsvp/configs" ] && fail "the installed configs/ is a link, not a copy"
"$work/prefix/bin/nvsvp" validate "$work/prefix/share/nvsvp/configs/scenarios/default.yaml" >/dev/null ||
  fail "the installed binary does not validate the installed default scenario"
"$work/prefix/bin/nvsvp" run "$scenario" --quiet --no-timelines --set workload.tokens_per_gpu=16 --out "$work/run" ||
  fail "the installed binary does not run"
echo "presets found: through NVSVP_CONFIG_PATH, --config-dir, beside a copied binary and in an installed prefix"
