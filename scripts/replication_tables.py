#!/usr/bin/env python3
"""Prints the tables of docs/results.md "Hot-expert replication" from the replication studies'
output (out/studies/replication_*/, as scripts/run_studies.sh leaves it)."""
import csv
import glob
import json
import sys

OUT = sys.argv[1] if len(sys.argv) > 1 else "out/studies"


def results(study):
    """(point name, scheme) -> the scheme's result in its point's report.json, in CSV order."""
    rows = list(csv.DictReader(open(f"{OUT}/{study}/study.csv")))
    reports = {}
    for path in glob.glob(f"{OUT}/{study}/*/report.json"):
        for r in json.load(open(path))["results"]:
            reports.setdefault(path, {})[r["scheme"]] = r
    by_point = {}
    for path, schemes in sorted(reports.items()):
        point = path.split("/")[-2].split("_", 1)[0]
        by_point[int(point)] = schemes
    points = []
    for r in rows:
        if r["point"] not in [p for p, _ in points]:
            points.append((r["point"], by_point[len(points) + 1]))
    return points


def f(x, n=1):
    return f"{x:.{n}f}"


def line(cells):
    print("| " + " | ".join(cells) + " |")


def rep_cells(r):
    rep = r["replication"]
    removed = "—" if rep["policy"] == "none" else f(rep["excess_load_removed"], 3)
    broadcast = "—" if rep["broadcast"] is None else f(rep["broadcast_time_us"])
    return rep, removed, f"{broadcast} / {f(rep['shared_expert_time_us'])}"


def zipf():
    print("### replication_zipf")
    line(["Zipf exponent", "policy", "replicas", "max/mean", "removed", "broadcast / shared", "deepep", "dysharp"])
    line(["---"] * 8)
    for point, s in results("replication_zipf"):
        rep, removed, times = rep_cells(s["deepep"])
        exponent = point.split("exponent:")[1].split(",")[0]
        line([exponent, rep["policy"], str(len(rep["replicas"])), f(rep["max_mean_after"], 3), removed, times,
              f(s["deepep"]["layer_time_us"]), f(s["dysharp"]["layer_time_us"])])


def models():
    print("### replication_models")
    line(["model", "platform", "policy", "replicas", "max/mean", "removed", "broadcast / shared", "deepep", "dysharp"])
    line(["---"] * 9)
    for point, s in results("replication_models"):
        rep, removed, times = rep_cells(s["deepep"])
        keys = dict(kv.split("=") for kv in point.split(","))
        line([keys["model"], keys["platform"], rep["policy"], str(len(rep["replicas"])), f(rep["max_mean_after"], 3),
              removed, times, f(s["deepep"]["layer_time_us"]), f(s["dysharp"]["layer_time_us"])])


def groups():
    print("### replication_groups")
    line(["groups", "replicas", "max/mean", "removed", "broadcast / shared", "deepep", "dysharp"])
    line(["---"] * 7)
    for point, s in results("replication_groups"):
        rep, removed, times = rep_cells(s["deepep"])
        line([point.split("=")[1], str(len(rep["replicas"])), f(rep["max_mean_after"], 3), removed, times,
              f(s["deepep"]["layer_time_us"]), f(s["dysharp"]["layer_time_us"])])


def broadcast():
    print("### replication_broadcast")
    line(["platform", "method", "replicas", "removed", "estimated / broadcast / shared", "hidden", "deepep", "dysharp"])
    line(["---"] * 8)
    for point, s in results("replication_broadcast"):
        rep, removed, times = rep_cells(s["deepep"])
        keys = dict(kv.split("=") for kv in point.split(","))
        line([keys["platform"], keys["broadcast"], str(len(rep["replicas"])), removed,
              f"{f(rep['estimated_broadcast_us'])} / {times}", "yes" if rep["hidden"] else "no",
              f(s["deepep"]["layer_time_us"]), f(s["dysharp"]["layer_time_us"])])


def history():
    print("### replication_history")
    line(["Zipf exponent", "policy", "placed from", "replicas", "max/mean", "removed", "deepep", "dysharp"])
    line(["---"] * 8)
    for point, s in results("replication_history"):
        rep, removed, _ = rep_cells(s["deepep"])
        keys = dict(kv.split("=") for kv in point.split(","))
        source = {"static": "another batch (seed " + keys["static_seed"] + ")" if "static_seed" in keys else "this layer",
                  "iser": "this layer"}[rep["policy"]]
        line([keys["exponent"], rep["policy"], source, str(len(rep["replicas"])), f(rep["max_mean_after"], 3), removed,
              f(s["deepep"]["layer_time_us"]), f(s["dysharp"]["layer_time_us"])])


zipf()
models()
groups()
broadcast()
history()
