#!/usr/bin/env python3
"""Run HolisticTraceAnalysis (HTA) on per-rank Kineto trace directories and
print what it sees of a multi-rank job, as Markdown.

How to run it (needs an HTA checkout; not part of `make test`):

    # HTA from its public repository, e.g. from a bare mirror:
    mkdir /tmp/hta-src && git --git-dir=MIRROR archive HEAD hta | tar -x -C /tmp/hta-src
    # Debian's packages (PyPI is not needed):
    apt-get install -y python3-pandas python3-plotly python3-networkx python3-psutil python3-yaml
    /usr/bin/python3 tools/hta/hta_report.py --hta /tmp/hta-src \
        after=runs/train4-kineto/combined-kineto.kineto [before=OTHER_DIR ...]

or `make hta HTA=/tmp/hta-src RUN=runs/train4-kineto`.

Each LABEL=DIR is a directory holding only the ranks' traces (*.json,
*.json.gz), as chronosync combine writes them into <base>.kineto/; it is
read with HTA's TraceAnalysis(trace_dir=DIR). For each it prints:

- HTA's temporal breakdown (get_temporal_breakdown) and comm/comp overlap
  (get_comm_comp_overlap), per rank;
- the communication share of kernel time per rank, with HTA's own kernel
  classification (hta.utils.utils.get_kernel_type);
- a summary: each rank's first collective kernel start, their spread, the
  largest and median start spread over all collectives, and how many
  collectives run at the same time on all ranks (the latest start before
  the earliest end);
- a per-collective alignment table (the i-th communication kernel of each
  rank, by start): each rank's start and the spread max - min.

Times are HTA's: microseconds from the earliest event of all ranks.
"""

import argparse
import logging
import statistics
import sys


def load(trace_dir):
    """Parse a trace directory with HTA and return its TraceAnalysis."""
    from hta.trace_analysis import TraceAnalysis

    return TraceAnalysis(trace_dir=trace_dir)


def comm_kernels(ta, by_name=False):
    """Per rank, HTA's communication kernels as (start, end) in us, by start;
    with by_name, the kernels whose name contains nccl or rccl instead."""
    from hta.utils.utils import get_kernel_type, KernelType

    sym = ta.t.symbol_table.get_sym_table()
    out = {}
    for rank, df in sorted(ta.t.traces.items()):
        k = df[df["stream"].ne(-1)]
        names = k["name"].map(lambda i: sym[i])
        if by_name:
            comm = k[names.str.contains("nccl|rccl", case=False, regex=True)]
        else:
            comm = k[names.map(get_kernel_type).eq(KernelType.COMMUNICATION.name)]
        comm = comm.sort_values(by=["ts", "end"])
        out[rank] = list(zip(comm["ts"].tolist(), comm["end"].tolist()))
    return out


def comm_share(ta):
    """Per rank, communication kernel time / all kernel time, in %."""
    from hta.utils.utils import get_kernel_type, KernelType

    sym = ta.t.symbol_table.get_sym_table()
    out = {}
    for rank, df in sorted(ta.t.traces.items()):
        k = df[df["stream"].ne(-1)]
        kinds = k["name"].map(lambda i: get_kernel_type(sym[i]))
        total = k["dur"].sum()
        comm = k[kinds.eq(KernelType.COMMUNICATION.name)]["dur"].sum()
        out[rank] = 100.0 * comm / total if total else float("nan")
    return out


def table(header, rows):
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        lines.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(lines)


def fmt(v):
    """A number for a table: integers as they are, floats to 2 decimals."""
    if isinstance(v, float):
        return "NaN" if v != v else f"{v:.2f}"
    return str(v)


def df_table(df):
    """A pandas DataFrame as a Markdown table."""
    return table([str(c) for c in df.columns], [[fmt(v) for v in row] for row in df.itertuples(index=False)])


def report(label, trace_dir, limit):
    """Print one directory's report."""
    ta = load(trace_dir)
    print(f"## {label}: `{trace_dir}`\n")
    print("### HTA temporal breakdown (get_temporal_breakdown)\n")
    print(df_table(ta.get_temporal_breakdown(visualize=False)) + "\n")
    print("### HTA comm/comp overlap (get_comm_comp_overlap)\n")
    print(df_table(ta.get_comm_comp_overlap(visualize=False)) + "\n")

    kernels = comm_kernels(ta)
    share = comm_share(ta)
    ranks = sorted(kernels)
    n = min((len(v) for v in kernels.values()), default=0)
    note = ""
    if n == 0:
        kernels = comm_kernels(ta, by_name=True)
        n = min((len(v) for v in kernels.values()), default=0)
        note = " (HTA counts no kernel as communication: these are the kernels named nccl or rccl)"
    spreads, overlapping = [], 0
    for i in range(n):
        starts = [kernels[r][i][0] for r in ranks]
        ends = [kernels[r][i][1] for r in ranks]
        spreads.append(max(starts) - min(starts))
        if max(starts) < min(ends):
            overlapping += 1
    print(f"### Summary{note}\n")
    rows = []
    for r in ranks:
        first = kernels[r][0][0] if kernels[r] else "-"
        rows.append([r, len(kernels[r]), fmt(first), fmt(share[r])])
    print(table(["rank", "collective kernels", "first collective start (us)", "HTA comm share of kernel time (%)"], rows) + "\n")
    if n:
        print(f"- first collective start spread: {fmt(spreads[0])} us")
        print(f"- start spread over {n} collectives: max {fmt(max(spreads))} us, median {fmt(statistics.median(spreads))} us")
        print(f"- collectives running at once on all ranks: {overlapping} of {n}\n")
    else:
        print("- no communication kernels\n")

    print(f"### Per-collective alignment (first {min(limit, n)} of {n}){note}\n")
    rows = []
    for i in range(min(limit, n)):
        starts = [kernels[r][i][0] for r in ranks]
        rows.append([i] + [fmt(s) for s in starts] + [fmt(max(starts) - min(starts))])
    print(table(["collective"] + [f"rank {r} start (us)" for r in ranks] + ["spread (us)"], rows) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hta", required=True, help="path of an HTA checkout (the directory holding hta/)")
    ap.add_argument("--rows", type=int, default=16, help="rows of the per-collective table (default 16)")
    ap.add_argument("dirs", nargs="+", metavar="LABEL=DIR", help="a directory of rank traces, labelled")
    args = ap.parse_args()
    sys.path.insert(0, args.hta)
    logging.getLogger("hta").setLevel(logging.ERROR)
    import pandas as pd

    pd.set_option("display.width", 200)
    for d in args.dirs:
        label, sep, path = d.partition("=")
        if not sep:
            label, path = d, d
        report(label, path, args.rows)


if __name__ == "__main__":
    main()
