#!/usr/bin/env python3
"""Pictures of an nvsvp run or study, drawn with matplotlib (what `nvsvp plot DIR` runs).

    scripts/nvsvp_plot.py DIR [--format svg|png] [--out PLOTDIR]

DIR is a run's output folder (report.json, utilization_<scheme>.csv, latency_<scheme>.csv) or a
study's (study.csv and summary.json). For a run it writes layer_time, utilization and latency; for a
study, speedup; each as DIR/<name>.svg (or .png) unless --out names another folder, and index.html
beside them, which holds every picture inline so that it can be opened or mailed alone. A picture
whose input is absent (a run with --no-timelines, a run without latency files) is left out, and
index.html and the console say so.

The same input gives byte-identical files (fixed SVG ids, no dates). Exit codes as nvsvp's: 0 done,
2 bad input or usage (the message names the file, the line and what was expected) or matplotlib
missing.
"""
import argparse
import base64
import csv
import html
import io
import json
import math
import os
import sys

EXIT_BAD_INPUT = 2


class BadInput(Exception):
    """Input that cannot be plotted; the message names the file and what was expected."""


def fail(message):
    print("nvsvp plot: " + message, file=sys.stderr)
    sys.exit(EXIT_BAD_INPUT)


def import_pyplot():
    try:
        import matplotlib
    except ImportError:
        fail("needs matplotlib for " + sys.executable + ": install the Debian package python3-matplotlib "
             "(apt-get install python3-matplotlib, or scripts/install_deps.sh)")
    matplotlib.use("Agg")  # files only, no display
    matplotlib.rcParams.update({
        "svg.hashsalt": "nvsvp",   # element ids from a fixed salt, not a random one
        "svg.fonttype": "none",    # text as text: small files that still read the same
        "font.size": 9,
        "axes.grid": True,
        "grid.alpha": 0.3,
    })
    import matplotlib.pyplot as plt
    return plt


# --- reading -----------------------------------------------------------------------------------

def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise BadInput(f"{path}:{e.lineno}: expected JSON, got a syntax error ({e.msg})")
    except RecursionError:
        raise BadInput(f"{path}: expected JSON of a run or a study, got values nested too deep to read")
    except (OSError, UnicodeDecodeError) as e:
        raise BadInput(f"{path}: expected a readable JSON file, got {e}")


def number(value, where):
    """A finite number from a JSON value or a CSV cell; `where` names it in the message."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise BadInput(f"{where}: expected a number, got {value!r}")
    if not math.isfinite(x):
        raise BadInput(f"{where}: expected a finite number, got {value!r}")
    return x


def read_csv(path, leading_columns, required_columns=()):
    """The rows of a CSV file as dicts; its header must start with `leading_columns` and name every
    one of `required_columns`, and the file must end with a newline (a file cut short does not)."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise BadInput(f"{path}: expected a readable CSV file, got {e}")
    if text and not text.endswith("\n"):
        raise BadInput(f"{path}: expected lines ending with a newline, got a file cut short")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if not rows or rows[0][:len(leading_columns)] != leading_columns:
        got = ",".join(rows[0]) if rows else "an empty file"
        raise BadInput(f"{path}:1: expected a header starting {','.join(leading_columns)}, got {got}")
    missing = [c for c in required_columns if c not in rows[0]]
    if missing:
        raise BadInput(f"{path}:1: expected a header with the columns {','.join(missing)}, got {','.join(rows[0])}")
    header = rows[0]
    records = []
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise BadInput(f"{path}:{line}: expected {len(header)} fields as in the header, got {len(row)}")
        records.append((line, dict(zip(header, row))))
    return records


def scheme_results(report, path):
    """report.json's results: each with its scheme, layer time and phases checked."""
    results = report.get("results") if isinstance(report, dict) else None
    if not isinstance(results, list) or not results:
        raise BadInput(f"{path}: expected a report with a non-empty list 'results'")
    checked = []
    for i, r in enumerate(results):
        at = f"{path}: results[{i}]"
        if not isinstance(r, dict) or not isinstance(r.get("scheme"), str):
            raise BadInput(f"{at}: expected an object with a string 'scheme'")
        if "error" in r and "layer_time_us" not in r:
            continue  # the scheme's process failed: nothing to draw, report.json says why
        layer = number(r.get("layer_time_us"), f"{at}.layer_time_us")
        phases = r.get("phases", {})
        if not isinstance(phases, dict):
            raise BadInput(f"{at}.phases: expected an object of phases")
        spans = []
        for name, span in phases.items():
            if not isinstance(span, dict):
                raise BadInput(f"{at}.phases.{name}: expected an object with start_us and end_us")
            spans.append((number(span.get("start_us"), f"{at}.phases.{name}.start_us"),
                          number(span.get("end_us"), f"{at}.phases.{name}.end_us"), name))
        checked.append({"scheme": r["scheme"], "layer_time_us": layer, "phases": sorted(spans)})
    return checked


# --- run pictures ------------------------------------------------------------------------------

PHASE_COLORS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c"]


def colors(plt, count):
    """`count` distinct colours: the eight above, or matplotlib's 20-colour table for more."""
    if count <= len(PHASE_COLORS):
        return PHASE_COLORS[:count]
    table = plt.get_cmap("tab20").colors
    return [table[k % len(table)] for k in range(count)]


def plot_layer_time(plt, results):
    """Per scheme a row: its phases as bars over the layer's time (they may overlap), the layer
    time as a thin bar beneath with its value."""
    phase_names = []
    for r in results:
        for _, _, name in r["phases"]:
            if name not in phase_names:
                phase_names.append(name)
    lanes = max(1, len(phase_names))
    fig, ax = plt.subplots(figsize=(8, 0.9 + 0.22 * (lanes + 1) * len(results)))
    lane = 0.8 / (lanes + 1)
    labelled = set()  # each phase once in the legend
    for row, r in enumerate(results):
        top = row - 0.4
        for start, end, name in r["phases"]:
            k = phase_names.index(name)
            ax.broken_barh([(start, end - start)], (top + k * lane, lane * 0.9),
                           color=PHASE_COLORS[k % len(PHASE_COLORS)], label=None if name in labelled else name)
            labelled.add(name)
        ax.broken_barh([(0, r["layer_time_us"])], (top + lanes * lane, lane * 0.9), color="#333333")
        ax.text(r["layer_time_us"], top + (lanes + 0.5) * lane, f" {r['layer_time_us']:.2f} us",
                va="center", fontsize=8)
    ax.set_yticks(range(len(results)))
    ax.set_yticklabels([r["scheme"] for r in results])
    ax.invert_yaxis()
    ax.set_xlabel("time since the layer's start (us)")
    ax.set_title("layer time per scheme and its phases (dark bar: the whole layer)")
    ax.set_xlim(0, max(r["layer_time_us"] for r in results) * 1.15)
    ax.legend(loc="lower right", fontsize=8)
    return fig


def read_utilization(path):
    rows = read_csv(path, ["time_us", "gpu_to_switch", "switch_to_gpu"])
    series = {"time_us": [], "gpu_to_switch": [], "switch_to_gpu": []}
    for line, row in rows:
        for key in series:
            series[key].append(number(row[key], f"{path}:{line}: {key}"))
    return series


MAX_DRAWN_BINS = 400  # a longer series is drawn in wider bins: the picture stays small


def coarser(series):
    """The series in bins of k consecutive ones (k the smallest that leaves at most MAX_DRAWN_BINS):
    each the mean busy fraction of its k, which is the wider bin's own busy fraction."""
    k = max(1, math.ceil(len(series["time_us"]) / MAX_DRAWN_BINS))
    if k == 1:
        return series
    return {key: (values[::k] if key == "time_us" else
                  [sum(values[i:i + k]) / len(values[i:i + k]) for i in range(0, len(values), k)])
            for key, values in series.items()}


def plot_utilization(plt, per_scheme):
    """The links' mean busy fraction over time, one panel per direction, a line per scheme."""
    fig, axes = plt.subplots(2, 1, figsize=(8, 5.5), sharex=True)
    per_scheme = [(scheme, coarser(s)) for scheme, s in per_scheme]
    for ax, direction in zip(axes, ["gpu_to_switch", "switch_to_gpu"]):
        for (scheme, s), color in zip(per_scheme, colors(plt, len(per_scheme))):
            ax.plot(s["time_us"], s[direction], color=color, label=scheme, linewidth=1, drawstyle="steps-post")  # a bin from its start
        ax.set_ylabel("busy fraction")
        ax.set_ylim(0, 1.05)
        ax.set_title(f"link utilization over time, {direction.replace('_', ' ')} (mean over the GPUs' links)")
    axes[-1].set_xlabel("time (us)")
    axes[0].legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    return fig


def read_latency(path):
    """Per message class, its bins (start_ns, end_ns, messages) in order."""
    classes = {}
    for line, row in read_csv(path, ["class", "bin_start_ns", "bin_end_ns", "messages"]):
        where = f"{path}:{line}"
        start = number(row["bin_start_ns"], f"{where}: bin_start_ns")
        end = number(row["bin_end_ns"], f"{where}: bin_end_ns")
        messages = number(row["messages"], f"{where}: messages")
        if not end > start or start < 0 or messages < 0:
            raise BadInput(f"{where}: expected 0 <= bin_start_ns < bin_end_ns and messages >= 0, got "
                           f"{row['bin_start_ns']}, {row['bin_end_ns']}, {row['messages']}")
        classes.setdefault(row["class"], []).append((start, end, messages))
    for name, bins in classes.items():
        bins.sort()
        for (s0, e0, _), (s1, _, _) in zip(bins, bins[1:]):
            if s1 < e0:
                raise BadInput(f"{path}: class {name}: expected bins that do not overlap, got [{s0}, {e0}) and one from {s1}")
    return classes


def stairs_of(bins, total):
    """Edges and each bin's share of the class's messages, gaps between bins as zero."""
    edges, shares = [bins[0][0]], []
    for start, end, messages in bins:
        if start > edges[-1]:
            shares.append(0.0)
            edges.append(start)
        shares.append(messages / total)
        edges.append(end)
    return edges, shares


def plot_latency(plt, per_scheme):
    """Per scheme a panel: each message class's latency distribution as its share of the class's
    messages per bin (log time axis when the bins span more than a decade)."""
    fig, axes = plt.subplots(len(per_scheme), 1, figsize=(8, 0.5 + 2.4 * len(per_scheme)), squeeze=False)
    for ax, (scheme, classes) in zip(axes[:, 0], per_scheme):
        low = min(b[0][0] for b in classes.values())
        high = max(b[-1][1] for b in classes.values())
        for k, (name, bins) in enumerate(sorted(classes.items())):
            total = sum(m for _, _, m in bins)
            if total == 0:
                continue
            edges, shares = stairs_of(bins, total)
            ax.stairs(shares, edges, label=f"{name} ({int(total)} messages)",
                      color=PHASE_COLORS[k % len(PHASE_COLORS)], linewidth=1.2)
        if low > 0 and high / low > 10:
            ax.set_xscale("log")
        ax.set_ylabel("share of messages")
        ax.set_title(f"{scheme}: message latency, injection to tail arrival")
        ax.legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("latency (ns)")
    fig.tight_layout()
    return fig


def run_pictures(plt, directory):
    """(name, figure or None, note) for a run's output folder."""
    report_path = os.path.join(directory, "report.json")
    results = scheme_results(read_json(report_path), report_path)
    if not results:
        raise BadInput(f"{report_path}: expected at least one scheme with a result, got only failed ones")
    pictures = [("layer_time", plot_layer_time(plt, results), "layer time per scheme with its phases")]

    utilization, missing = [], []
    for r in results:
        path = os.path.join(directory, f"utilization_{r['scheme']}.csv")
        if os.path.exists(path):
            utilization.append((r["scheme"], read_utilization(path)))
        else:
            missing.append(r["scheme"])
    if utilization:
        note = "link utilization over time per direction"
        if missing:
            note += f" (no utilization file for {', '.join(missing)})"
        pictures.append(("utilization", plot_utilization(plt, utilization), note))
    else:
        pictures.append(("utilization", None, "no utilization_<scheme>.csv (a run with --no-timelines): left out"))

    latency, missing = [], []
    for r in results:
        path = os.path.join(directory, f"latency_{r['scheme']}.csv")
        if os.path.exists(path):
            classes = read_latency(path)
            if classes:
                latency.append((r["scheme"], classes))
                continue
        missing.append(r["scheme"])
    if latency:
        note = "message latency distributions per class"
        if missing:
            note += f" (no latency rows for {', '.join(missing)})"
        pictures.append(("latency", plot_latency(plt, latency), note))
    else:
        pictures.append(("latency", None, "no latency_<scheme>.csv with rows in this run: left out"))
    return pictures


# --- study pictures ----------------------------------------------------------------------------

def plot_speedup(plt, summary, path):
    """The speedup of the reference over each other scheme at every point, and its geometric mean."""
    if not isinstance(summary, dict):
        raise BadInput(f"{path}: expected a study summary (a JSON object), got a {type(summary).__name__}")
    reference = summary.get("reference")
    schemes = summary.get("schemes")
    points = summary.get("points")
    if not isinstance(reference, str) or not isinstance(schemes, list) or not isinstance(points, list) or not points:
        raise BadInput(f"{path}: expected a study summary with 'reference', 'schemes' and a non-empty 'points'")
    others = [s for s in schemes if s != reference]
    if not others:
        return None
    names, values = [], {s: [] for s in others}
    for i, p in enumerate(points):
        if not isinstance(p, dict) or not isinstance(p.get("speedup_of_reference"), dict):
            raise BadInput(f"{path}: points[{i}]: expected an object with 'name' and 'speedup_of_reference'")
        names.append(str(p.get("name", i)))
        for s in others:
            v = p["speedup_of_reference"].get(s)
            values[s].append(float("nan") if v is None else number(v, f"{path}: points[{i}].speedup_of_reference.{s}"))
    statistics = summary.get("speedup_of_reference", {})
    names.append("geomean")
    for s in others:
        of_scheme = statistics.get(s) if isinstance(statistics, dict) else None
        g = of_scheme.get("geometric_mean") if isinstance(of_scheme, dict) else None
        values[s].append(float("nan") if g is None else number(g, f"{path}: speedup_of_reference.{s}.geometric_mean"))

    fig, ax = plt.subplots(figsize=(min(12, max(6, 0.5 + 0.28 * len(names) * len(others))), 4.2))
    width = 0.8 / len(others)
    for k, (s, color) in enumerate(zip(others, colors(plt, len(others)))):
        xs = [i - 0.4 + (k + 0.5) * width for i in range(len(names))]
        ax.bar(xs, values[s], width * 0.95, label=s, color=color)
    ax.axhline(1.0, color="#333333", linewidth=0.8)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=30 if len(names) > 4 else 0, ha="right" if len(names) > 4 else "center")
    ax.set_ylabel(f"layer time of the scheme / that of {reference}")
    ax.set_title(f"study {summary.get('study', '')}: speedup of {reference} over each scheme (missing: not passed)")
    ax.legend(fontsize=8, ncol=2 if len(others) > 6 else 1)
    fig.tight_layout()
    return fig


def study_pictures(plt, directory):
    # A study's table, checked for its header (cut short, it would lack these).
    read_csv(os.path.join(directory, "study.csv"), ["point"], ["scheme", "layer_time_us"])
    path = os.path.join(directory, "summary.json")
    figure = plot_speedup(plt, read_json(path), path)
    if figure is None:
        return [("speedup", None, "the study has no scheme besides its reference: no speedup to draw")]
    return [("speedup", figure, "speedup of the reference scheme over each other scheme, per point")]


# --- writing -----------------------------------------------------------------------------------

def save(plt, figure, path, fmt):
    # No date or software version in the file: the same input gives the same bytes.
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    figure.savefig(path, format=fmt, metadata=metadata, bbox_inches="tight")
    plt.close(figure)


def write_index(out, title, written, fmt):
    """index.html: every picture inline (SVG as markup, PNG as data), the notes of those left out."""
    parts = ["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\">",
             f"<title>{html.escape(title)}</title>",
             "<style>body{font-family:sans-serif;max-width:60em;margin:auto} figure{margin:1em 0}</style>",
             "</head><body>", f"<h1>{html.escape(title)}</h1>"]
    for name, file_name, note in written:
        parts.append(f"<h2>{html.escape(name)}</h2>")
        if file_name is None:
            parts.append(f"<p><em>{html.escape(note)}</em></p>")
            continue
        path = os.path.join(out, file_name)
        if fmt == "svg":
            with open(path, encoding="utf-8") as f:
                svg = f.read()
            body = svg[svg.index("<svg"):]  # the markup without the XML prolog and doctype
        else:
            with open(path, "rb") as f:
                body = f"<img alt=\"{html.escape(name)}\" src=\"data:image/png;base64,{base64.b64encode(f.read()).decode()}\">"
        parts.append(f"<figure>{body}<figcaption>{html.escape(note)} "
                     f"(<a href=\"{html.escape(file_name)}\">{html.escape(file_name)}</a>)</figcaption></figure>")
    parts.append("</body></html>")
    with open(os.path.join(out, "index.html"), "w", encoding="utf-8") as f:
        f.write("\n".join(parts) + "\n")


def main(argv):
    parser = argparse.ArgumentParser(prog="nvsvp plot", description="pictures of an nvsvp run or study")
    parser.add_argument("dir", metavar="DIR", help="a run's or a study's output folder")
    parser.add_argument("--format", choices=["svg", "png"], default="svg", help="picture format (default svg)")
    parser.add_argument("--out", metavar="PLOTDIR", help="where to write the pictures (default DIR)")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.dir):
        fail(f"{args.dir}: expected a run's or a study's output folder, got no such folder")
    is_run = os.path.isfile(os.path.join(args.dir, "report.json"))
    is_study = os.path.isfile(os.path.join(args.dir, "study.csv")) and os.path.isfile(os.path.join(args.dir, "summary.json"))
    if not is_run and not is_study:
        fail(f"{args.dir}: expected a run's output (report.json) or a study's (study.csv and summary.json), found neither")
    plt = import_pyplot()
    try:
        pictures = study_pictures(plt, args.dir) if is_study else run_pictures(plt, args.dir)
    except BadInput as e:
        fail(str(e))
    out = args.out or args.dir
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        fail(f"--out {out}: expected a folder that can be made, got {e.strerror}")
    written = []
    for name, figure, note in pictures:
        if figure is None:
            print(f"{name}: {note}")
            written.append((name, None, note))
            continue
        file_name = f"{name}.{args.format}"
        save(plt, figure, os.path.join(out, file_name), args.format)
        print(f"wrote {os.path.join(out, file_name)}")
        written.append((name, file_name, note))
    kind = "study" if is_study else "run"
    write_index(out, f"nvsvp {kind}: {os.path.basename(os.path.normpath(os.path.abspath(args.dir)))}", written, args.format)
    print(f"wrote {os.path.join(out, 'index.html')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
