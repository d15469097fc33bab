#!/usr/bin/env bash
# The calibration cases (configs/anchors/) at reduced size on the packet and the fast fabric: every
# case the fast fabric moves (not the NVLS all-reduces: multimem loads) with at most 32 tokens per
# GPU and collectives of at most 16 MiB (cases that become the same run once), run by `nvsvp anchors`
# on both engines; each case's figure on the fast fabric within 2 % of the packet fabric's (the
# bound the fast fabric promises for the calibration table; a figure is a phase's bandwidth, a
# phase of tens of microseconds here), both runs' checks passing.
# usage: fast_fabric_anchors.sh NVSVP WORKDIR
set -u
nvsvp=$1
work=$2
configs=$(cd "$(dirname "$0")/../../configs" && pwd)
rm -rf "$work"
mkdir -p "$work/configs/anchors"
for d in models platforms scenarios studies traces; do ln -s "$configs/$d" "$work/configs/$d"; done
python3 - "$configs/anchors" "$work/configs/anchors" <<'PY'
import os, re, sys
source, target = sys.argv[1], sys.argv[2]
seen = set()
for name in sorted(os.listdir(source)):
    if not name.endswith(".yaml") or "allreduce-nvls" in name or name.startswith("deepgemm"):
        continue  # multimem loads (not on the fast fabric yet); no fabric at all
    text = open(os.path.join(source, name)).read()
    text = re.sub(r"^(  tokens_per_gpu:) *(\d+)", lambda m: f"{m.group(1)} {min(int(m.group(2)), 32)}", text, flags=re.M)
    text = re.sub(r"^(  bytes:) *(\d+)", lambda m: f"{m.group(1)} {min(int(m.group(2)), 16 << 20)}", text, flags=re.M)
    # A case that reduces to one already written (bs2048 to bs128) runs once.
    kept, in_anchor = [], False
    for line in text.splitlines():
        if not line.startswith((" ", "#")):
            in_anchor = line.startswith("anchor:")
        if not in_anchor and not line.startswith(("#", "name:", "what:")):
            kept.append(line)
    case = "\n".join(kept)
    if case in seen:
        continue
    seen.add(case)
    open(os.path.join(target, name), "w").write(text)
PY
for engine in packet fast; do
  # Exit 1 when a case misses its anchor, as these reduced cases do: the figures are what is compared.
  NVSVP_CONFIG_PATH="$work/configs" "$nvsvp" anchors --set simulation.fabric=$engine --out "$work/$engine" --quiet \
    > "$work/$engine.log" 2>&1
  code=$?
  [ "$code" -le 1 ] || { echo "FAIL: anchors on $engine exited $code"; cat "$work/$engine.log"; exit 1; }
done
python3 - "$work" "$work/configs/anchors" <<'PY'
import json, os, sys
work, anchors = sys.argv[1], sys.argv[2]
failed = False
cases = sorted(n[:-5] for n in os.listdir(anchors) if n.endswith(".yaml"))
worst = 0.0
for case in cases:
    try:
        packet, fast = (json.load(open(f"{work}/{e}/{case}.json")) for e in ("packet", "fast"))
    except OSError as error:
        print(f"FAIL: {case}: {error}")
        failed = True
        continue
    ratio = fast["model"] / packet["model"]
    worst = max(worst, abs(ratio - 1))
    checks = packet["passed"] and fast["passed"]
    if abs(ratio - 1) > 0.02 or not checks:
        print(f"FAIL: {case}: packet {packet['model']:.2f}, fast {fast['model']:.2f} {packet['unit']} "
              f"(fast / packet {ratio:.4f}), checks passed: {checks}")
        failed = True
print(f"{len(cases)} calibration cases at reduced size: the fast fabric within {100 * worst:.2f} % of the packet fabric")
sys.exit(1 if failed else 0)
PY
