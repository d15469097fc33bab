#!/usr/bin/env python3
"""Tables the study CSVs do not hold as they are, as CSV on standard output:

  scripts/study_extra_tables.py utilisation out/studies/link_utilisation_nvl32
      per point and scheme, the mean utilisation of every GPU link in each tenth of the layer, per
      direction (from the points' utilization_<scheme>.csv and report.json);
  scripts/study_extra_tables.py breakdown out/studies/models_topk_nvl32/study.csv [BASELINE]
      per point and scheme, the time breakdown (communication alone, compute alone, both, neither)
      of the critical GPU over BASELINE's layer time at that point (default deepep)."""
import csv
import glob
import json
import os
import sys

TENTHS = 10


def utilisation(study_dir):
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["point", "scheme", "direction"] + [f"tenth_{i + 1}" for i in range(TENTHS)])
    for report_path in sorted(glob.glob(os.path.join(study_dir, "*", "report.json"))):
        point_dir = os.path.dirname(report_path)
        point = os.path.basename(point_dir).split("_", 1)[1]
        for result in json.load(open(report_path))["results"]:
            scheme = result["scheme"]
            layer_us = result["layer_time_us"]
            series = os.path.join(point_dir, f"utilization_{scheme}.csv")
            if not os.path.exists(series) or layer_us <= 0:
                continue
            sums = {d: [0.0] * TENTHS for d in ("gpu_to_switch", "switch_to_gpu")}
            counts = [0] * TENTHS
            for row in csv.DictReader(open(series)):
                t = float(row["time_us"])
                if t < 0 or t >= layer_us:
                    continue
                tenth = int(t * TENTHS / layer_us)
                counts[tenth] += 1
                for d in sums:
                    sums[d][tenth] += float(row[d])
            for d, values in sums.items():
                out.writerow([point, scheme, d] +
                             [f"{v / c:.3f}" if c else "" for v, c in zip(values, counts)])


def breakdown(study_csv, baseline):
    rows = list(csv.DictReader(open(study_csv)))
    base = {r["point"]: float(r["layer_time_us"]) for r in rows if r["scheme"] == baseline}
    parts = ["comm_only_us", "compute_only_us", "overlap_us", "idle_us"]
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["point", "scheme", "layer_time_over_" + baseline] + [p[:-3] for p in parts])
    for r in rows:
        if r["point"] not in base or not r.get("time_breakdown.comm_only_us"):
            continue
        b = base[r["point"]]
        out.writerow([r["point"], r["scheme"], f"{float(r['layer_time_us']) / b:.3f}"] +
                     [f"{float(r['time_breakdown.' + p]) / b:.3f}" for p in parts])


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "utilisation":
        utilisation(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "breakdown":
        breakdown(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "deepep")
    else:
        sys.exit(__doc__)
