#!/usr/bin/env python3
"""Per-primitive profile of the `cpu` backend's warm batch-1 forwards, from oneDNN's own log.

Runs taconite-bench (batch 1, one precision) under ONEDNN_VERBOSE=1 for each build given, splits
the `exec` lines into forwards (each forward ends with the head's inner product), drops the first
forwards (load, network build, warm-up) and prints, per primitive kind / implementation / post-ops,
the count and milliseconds per forward: the median over the last N forwards of each forward's sum. Several builds give
side-by-side columns (e.g. before = main, after = this branch).

  bench/onednn_profile.py --bundle DIR --precision auto|f32|bf16|int8 [--isa AVX512_CORE] [--threads 2]
      [--forwards 20] [--rounds 1] LABEL=BUILD_DIR [LABEL=BUILD_DIR ...]

oneDNN 2.6 prints `onednn_verbose,exec,cpu,<kind>,<impl>,<prop>,<mds>,<attrs>,<aux>,<problem>,<ms>`.
Work outside oneDNN primitives (the input's tiling, the border corrections of folded affines) is
not in the log; bench/border_fix_bench.cpp measures the border corrections.
"""
import argparse
import collections
import json
import os
import re
import statistics
import subprocess
import sys


def run_bench(build, bundle, precision, threads, isa, budget):
    env = dict(os.environ, ONEDNN_VERBOSE="1", OMP_WAIT_POLICY=os.environ.get("OMP_WAIT_POLICY", "passive"),
               BENCH_BUDGET_S=str(budget))
    if isa:
        env["ONEDNN_MAX_CPU_ISA"] = isa
    exe = os.path.join(build, "bench", "taconite-bench")
    out = subprocess.run([exe, bundle, "cpu", precision, str(threads), "1"], env=env, check=True,
                         capture_output=True, text=True).stdout
    execs, result = [], None
    for line in out.splitlines():
        if line.startswith("onednn_verbose,exec,"):
            execs.append(line.split(","))
        elif line.startswith("{"):
            result = json.loads(line)
    return execs, result


def post_ops(attrs):
    """'sum', 'binary_add', ... from an attr field like 'attr-post-ops:sum+binary_add:per_oc '."""
    m = re.search(r"attr-post-ops:(\S+)", attrs)
    if not m:
        return ""
    names = [re.split(r"[:\d.]", op)[0] for op in m.group(1).split("+")]
    return "+" + "+".join(names)


def key_of(fields):
    kind, impl, attrs = fields[3], fields[4], fields[7]
    return f"{kind} {impl}{post_ops(attrs)}"


def forwards_of(execs):
    """Lists of exec lines, one per forward (a forward ends with the inner product)."""
    forwards, current = [], []
    for fields in execs:
        current.append(fields)
        if fields[3] == "inner_product":
            forwards.append(current)
            current = []
    return forwards


def last_forwards(execs, keep):
    forwards = forwards_of(execs)
    if len(forwards) < keep + 2:
        sys.exit(f"only {len(forwards)} forwards in the log; need {keep + 2} (raise the bench budget)")
    return forwards[-keep:]


def profile(forwards):
    per_forward = []  # per forward: key -> (count, ms)
    for forward in forwards:
        count, ms = collections.Counter(), collections.Counter()
        for fields in forward:
            key = key_of(fields)
            count[key] += 1
            ms[key] += float(fields[-1])
        per_forward.append((count, ms))
    keys = {k for count, _ in per_forward for k in count}
    # The median over forwards: one disturbed forward on a shared machine does not move it.
    return {k: (statistics.median(c[k] for c, _ in per_forward), statistics.median(m[k] for _, m in per_forward))
            for k in keys}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--precision", default="f32", choices=["auto", "f32", "bf16", "int8"],
                    help="a build whose taconite-bench predates bf16 treats anything but f32 as auto")
    ap.add_argument("--isa", default="", help="ONEDNN_MAX_CPU_ISA, e.g. AVX512_CORE or AVX2")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--forwards", type=int, default=20)
    ap.add_argument("--budget", type=float, default=30.0, help="BENCH_BUDGET_S (the bench stops at 50 forwards)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="runs of each build, alternating; the medians pool the forwards of every run")
    ap.add_argument("builds", nargs="+", metavar="LABEL=BUILD_DIR")
    args = ap.parse_args()

    specs = [spec.split("=", 1) for spec in args.builds]
    pooled = {label: [] for label, _ in specs}
    results = {label: [] for label, _ in specs}
    for rnd in range(args.rounds):
        for label, build in (specs if rnd % 2 == 0 else list(reversed(specs))):
            execs, result = run_bench(build, args.bundle, args.precision, args.threads, args.isa, args.budget)
            pooled[label] += last_forwards(execs, args.forwards)
            results[label].append(result)
    columns = [(label, profile(pooled[label]), results[label], len(pooled[label])) for label, _ in specs]

    isa = args.isa or "native"
    load = open("/proc/loadavg").read().split()[:3]
    print(f"bundle {args.bundle}, precision {args.precision}, ONEDNN_MAX_CPU_ISA {isa}, threads {args.threads}, "
          f"batch 1, median over the last {args.forwards} forwards of {args.rounds} alternating run(s) per build; "
          f"load average {' '.join(load)} at the end")
    for label, _, rs, total in columns:
        print(f"  {label}: ran {'/'.join(sorted({r['precision'] for r in rs}))}, {total} forwards profiled, bench medians "
              f"{', '.join(str(r['batches']['1']['median_ms']) for r in rs)} ms per forward (with the log's printing)")
    keys = sorted({k for _, table, _, _ in columns for k in table},
                  key=lambda k: -max(table.get(k, (0, 0))[1] for _, table, _, _ in columns))
    header = "| primitive (kind impl +post-ops) | " + " | ".join(f"{c[0]} per forward | {c[0]} ms" for c in columns) + " |"
    print()
    print(header)
    print("|---|" + "---|---|" * len(columns))
    for k in keys:
        cells = []
        for _, table, _, _ in columns:
            n, ms = table.get(k, (0, 0.0))
            cells.append(f"{n:g} | {ms:.3f}" if n else "- | -")
        print(f"| {k} | " + " | ".join(cells) + " |")
    totals = [(sum(v[0] for v in table.values()), sum(v[1] for v in table.values())) for _, table, _, _ in columns]
    print("| **all oneDNN primitives** | " + " | ".join(f"**{n:g}** | **{ms:.3f}**" for n, ms in totals) + " |")


if __name__ == "__main__":
    main()
