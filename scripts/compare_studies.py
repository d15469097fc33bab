#!/usr/bin/env python3
"""Compares two runs of the same studies: for each study.csv found in both OLD and NEW (a file, or
a directory searched for <study>.csv / <study>/study.csv), prints per scheme the geometric mean,
minimum and maximum of new/old layer time over the points, and the same for the speedup over the
study's reference scheme over each (speedup_of_reference). Markdown tables on stdout.

    scripts/compare_studies.py docs/study_results out/studies
"""
import csv
import math
import os
import sys


def study_files(root):
    found = {}
    if os.path.isfile(root):
        found[os.path.splitext(os.path.basename(root))[0]] = root
        return found
    for entry in sorted(os.listdir(root)):
        path = os.path.join(root, entry)
        if entry.endswith(".csv"):
            found[entry[:-4]] = path
        elif os.path.isfile(os.path.join(path, "study.csv")):
            found[entry] = os.path.join(path, "study.csv")
    return found


def rows(path):
    with open(path, newline="") as f:
        return {(r["point"], r["scheme"]): r for r in csv.DictReader(f)}


def ratios(old, new, column):
    per_scheme = {}
    for key, r in new.items():
        o = old.get(key)
        if o is None or not o.get(column) or not r.get(column):
            continue
        per_scheme.setdefault(key[1], []).append(float(r[column]) / float(o[column]))
    return per_scheme


def summary(values):
    geo = math.exp(sum(math.log(v) for v in values) / len(values))
    return f"{geo:.3f} | {min(values):.3f} | {max(values):.3f}"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    old_files, new_files = study_files(sys.argv[1]), study_files(sys.argv[2])
    for study in sorted(set(old_files) & set(new_files)):
        old, new = rows(old_files[study]), rows(new_files[study])
        time = ratios(old, new, "layer_time_us")
        speedup = ratios(old, new, "speedup_of_reference")
        points = len({p for p, _ in new})
        print(f"\n**{study}** ({points} points)\n")
        print("| scheme | layer time new/old: geo-mean | min | max | the reference's speedup over it, new/old: geo-mean | min | max |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for scheme in sorted(time):
            s = summary(speedup[scheme]) if scheme in speedup else "- | - | -"
            print(f"| {scheme} | {summary(time[scheme])} | {s} |")


if __name__ == "__main__":
    main()
