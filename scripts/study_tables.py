#!/usr/bin/env python3
"""Turns study CSVs (nvsvp study's study.csv, one row per point and scheme) into the markdown
tables of docs/results.md: per study, the layer time of every scheme at every point (the fastest in
bold), the speedup of the study's reference scheme over each other scheme at each point, its
geometric mean and maximum over the points, and the study's extra metrics (METRICS below).

    scripts/study_tables.py docs/study_results > docs/study_results/tables.md
    scripts/study_tables.py docs/study_results/models_topk_nvl32.csv

A directory is searched for <study>.csv; the tables come in the order of the file names.
"""
import csv
import math
import os
import sys

# Per study, the extra columns worth a table of their own: (column, heading, format).
METRICS = {
    "models_topk_nvl32": [("load.max_mean_gpu", "per-GPU max/mean load", "{:.3f}"),
                          ("comm_efficiency", "communication efficiency (ideal / layer)", "{:.3f}"),
                          ("time_breakdown.comm_only_us", "communication alone (µs)", "{:.1f}"),
                          ("time_breakdown.compute_only_us", "compute alone (µs)", "{:.1f}"),
                          ("time_breakdown.overlap_us", "overlapped (µs)", "{:.1f}")],
    "models_topk_dgx_h100": [("load.max_mean_gpu", "per-GPU max/mean load", "{:.3f}")],
    "routing_nvl32": [("load.max_mean_gpu", "per-GPU max/mean load", "{:.3f}")],
    "pure_communication_nvl32": [("comm_efficiency", "pure communication: ideal / time", "{:.3f}")],
    "hub_cache_nvl32": [("hub.cache_hit_rate", "Hub cache hit rate", "{:.4f}")],
    "reduction_buffer_nvl32": [("switch.reduction_no_eviction_rate", "reductions without an eviction", "{:.4f}"),
                               ("payload_efficiency.total", "payload efficiency", "{:.4f}")],
    "dispatch_dtype_nvl32": [("traffic_bytes.gpu_to_switch", "bytes GPU→switch", "{:.3e}")],
}


def study_files(root):
    if os.path.isfile(root):
        return [(os.path.splitext(os.path.basename(root))[0], root)]
    return [(entry[:-4], os.path.join(root, entry)) for entry in sorted(os.listdir(root)) if entry.endswith(".csv")]


def read(path):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        fields = reader.fieldnames or []
        rows = list(reader)
    if "point" not in fields or "scheme" not in fields or "layer_time_us" not in fields:
        return None  # not a study CSV (the derived tables beside them)
    keys = fields[1:fields.index("scheme")]
    points, schemes, cell = [], [], {}
    for r in rows:
        if r["point"] not in points:
            points.append(r["point"])
        if r["scheme"] not in schemes:
            schemes.append(r["scheme"])
        cell[(r["point"], r["scheme"])] = r
    return keys, points, schemes, cell


def label(keys, row):
    return ", ".join(row[k] for k in keys)


def key_header(keys):
    return ", ".join(k.rsplit(".", 1)[-1] for k in keys) or "point"


def number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def table(header, lines):
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    out += ["| " + " | ".join(line) + " |" for line in lines]
    return "\n".join(out)


def reference_of(schemes, cell, points):
    # The reference is the scheme whose speedup_of_reference is 1 at every point.
    for s in schemes:
        values = [number(cell.get((p, s), {}).get("speedup_of_reference")) for p in points]
        if values and all(v is not None and abs(v - 1.0) < 1e-12 for v in values):
            return s
    return None


def study_tables(name, path):
    study = read(path)
    if study is None:
        return ""
    keys, points, schemes, cell = study
    out = [f"### {name}", "", f"[{os.path.basename(path)}]({os.path.basename(path)}); layer time in µs, the fastest in bold.", ""]
    lines = []
    for p in points:
        row0 = next(cell[(p, s)] for s in schemes if (p, s) in cell)
        times = {s: number(cell[(p, s)]["layer_time_us"]) for s in schemes if (p, s) in cell}
        passed = {s: cell[(p, s)].get("checks.passed") == "true" for s in times}
        best = min((t for s, t in times.items() if t is not None and passed[s]), default=None)
        line = [label(keys, row0)]
        for s in schemes:
            t = times.get(s)
            if t is None:
                line.append("-")
            elif not passed[s]:
                line.append(f"{t:.2f} (failed)")
            else:
                line.append(f"**{t:.2f}**" if t == best else f"{t:.2f}")
        lines.append(line)
    out.append(table([key_header(keys)] + schemes, lines))
    reference = reference_of(schemes, cell, points)
    if reference and len(schemes) > 1:
        others = [s for s in schemes if s != reference]
        out += ["", f"Speedup of `{reference}` over each scheme:", ""]
        lines = []
        ratios = {s: [] for s in others}
        for p in points:
            row0 = next(cell[(p, s)] for s in schemes if (p, s) in cell)
            line = [label(keys, row0)]
            for s in others:
                v = number(cell.get((p, s), {}).get("speedup_of_reference"))
                line.append("-" if v is None else f"{v:.2f}")
                if v is not None:
                    ratios[s].append((v, label(keys, row0)))
            lines.append(line)
        geo = ["geomean"] + [f"{math.exp(sum(math.log(v) for v, _ in ratios[s]) / len(ratios[s])):.2f}"
                             if ratios[s] else "-" for s in others]
        top = ["max"] + [(lambda m: f"{m[0]:.2f} ({m[1]})")(max(ratios[s])) if ratios[s] else "-" for s in others]
        out.append(table([key_header(keys)] + others, lines + [geo, top]))
    for column, heading, fmt in METRICS.get(name, []):
        if not any(column in cell[k] for k in cell):
            continue
        out += ["", f"{heading} (`{column}`):", ""]
        lines = []
        for p in points:
            row0 = next(cell[(p, s)] for s in schemes if (p, s) in cell)
            line = [label(keys, row0)]
            for s in schemes:
                v = number(cell.get((p, s), {}).get(column))
                line.append("-" if v is None else fmt.format(v))
            lines.append(line)
        out.append(table([key_header(keys)] + schemes, lines))
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print("# Study tables\n\nWritten by `scripts/study_tables.py docs/study_results` from the committed CSVs "
          "(`scripts/run_studies.sh` makes both); docs/results.md discusses them.\n")
    for name, path in study_files(sys.argv[1]):
        text = study_tables(name, path)
        if text:
            print(text)


if __name__ == "__main__":
    main()
