#!/usr/bin/env python3
"""Turn criterion's results into the tables and charts of docs/benchmarks.md.

Reads every `<target>/criterion/**/new/{benchmark,estimates}.json` (the
results of the last `cargo bench` run), and for each benchmark group prints a
Markdown table (median time, per-element or per-byte figure, throughput, and
the ratio to the group's first row or to a named baseline) and writes an SVG
bar chart of the medians to `docs/charts/<group>.svg`.

Usage:
    python3 scripts/bench_report.py [--target target] [--charts docs/charts] [GROUP ...]

Only the standard library is used, so it runs on a fresh machine.
"""

import argparse
import json
import math
import os
import sys
from pathlib import Path

# The row each group's ratios are taken against, when present (else the first row).
BASELINES = {
    "nearest_root": "brute_force",
}


def load(target):
    groups = {}
    root = Path(target) / "criterion"
    for bench in sorted(root.glob("**/new/benchmark.json")):
        meta = json.loads(bench.read_text())
        est = json.loads((bench.parent / "estimates.json").read_text())
        name = meta["function_id"] or ""
        if meta.get("value_str"):
            name = f"{name}/{meta['value_str']}" if name else meta["value_str"]
        groups.setdefault(meta["group_id"], []).append(
            {
                "name": name,
                "median_ns": est["median"]["point_estimate"],
                "low_ns": est["median"]["confidence_interval"]["lower_bound"],
                "high_ns": est["median"]["confidence_interval"]["upper_bound"],
                "throughput": meta.get("throughput") or {},
                "order": bench.stat().st_mtime,
            }
        )
    for rows in groups.values():
        rows.sort(key=lambda r: r["order"])  # the order the bench ran them in
    return groups


def fmt_time(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def per_item(row):
    tp = row["throughput"]
    if "Elements" in tp and tp["Elements"] > 1:
        n = tp["Elements"]
        return f"{row['median_ns'] / n:.3g} ns/vector", f"{n / row['median_ns'] * 1e3:.3g} M/s"
    if "Bytes" in tp:
        n = tp["Bytes"]
        return "", f"{n / row['median_ns']:.3g} GB/s"
    return "", ""


def table(group, rows):
    base_name = BASELINES.get(group)
    base = next((r for r in rows if r["name"] == base_name), rows[0])
    out = [f"#### `{group}`", "", "| path | median | per item | throughput | vs `" + base["name"] + "` |", "|---|---|---|---|---|"]
    for r in rows:
        item, tp = per_item(r)
        ratio = base["median_ns"] / r["median_ns"]
        out.append(f"| `{r['name']}` | {fmt_time(r['median_ns'])} | {item} | {tp} | {ratio:.2f}× |")
    return "\n".join(out)


def svg(group, rows):
    width, bar_h, gap, label_w = 760, 22, 6, 260
    height = 40 + len(rows) * (bar_h + gap)
    longest = max(r["median_ns"] for r in rows)
    shortest = min(r["median_ns"] for r in rows)
    log_scale = longest / max(shortest, 1e-9) > 50
    plot_w = width - label_w - 120

    def length(ns):
        if log_scale:
            lo = math.log10(shortest) - 0.3
            return plot_w * (math.log10(ns) - lo) / (math.log10(longest) - lo)
        return plot_w * ns / longest

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
        f'<text x="10" y="20" font-size="14" font-weight="bold">{group}: median time{" (log scale)" if log_scale else ""}, shorter is faster</text>',
    ]
    for i, r in enumerate(rows):
        y = 34 + i * (bar_h + gap)
        w = max(length(r["median_ns"]), 1.0)
        parts.append(f'<text x="{label_w - 8}" y="{y + 15}" text-anchor="end">{r["name"]}</text>')
        parts.append(f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="#4a7ebb"/>')
        parts.append(f'<text x="{label_w + w + 6:.1f}" y="{y + 15}">{fmt_time(r["median_ns"])}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default=os.environ.get("CARGO_TARGET_DIR", "target"))
    ap.add_argument("--charts", default="docs/charts")
    ap.add_argument("groups", nargs="*")
    args = ap.parse_args()
    groups = load(args.target)
    if not groups:
        sys.exit(f"no criterion results under {args.target}/criterion: run cargo bench first")
    Path(args.charts).mkdir(parents=True, exist_ok=True)
    for group, rows in groups.items():
        if args.groups and group not in args.groups:
            continue
        print(table(group, rows))
        print()
        (Path(args.charts) / f"{group.replace('/', '_')}.svg").write_text(svg(group, rows))


if __name__ == "__main__":
    main()
