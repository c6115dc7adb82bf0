#!/usr/bin/env python3
"""The `cpu` backend's numerics: f32 vs bf16 vs auto, before and after a change, per oneDNN ISA.

For each ISA cap (ONEDNN_MAX_CPU_ISA; "native" = none), model and configuration, runs
taconite-bench (its own process: load, batch 1, batch 8) once per round; the configurations run
interleaved within a round, and the table shows the median over rounds of each figure. One
configuration is BUILD:PRECISION, e.g. after:auto; a build whose taconite-bench predates
`bf16` treats any precision but f32 as auto (main before issue 32: auto = bf16 where the CPU has
native bf16, else f32), so `before:auto` is its default.

  bench/numerics_bench.py --build after=build-rel --build before=/path/build-rel \\
      [--work DIR] [--rounds 3] [--threads 2] [--isa native --isa AVX512_CORE --isa AVX2] \\
      [--models ir18,ir101] [--configs after:f32,after:bf16,after:auto,before:f32,before:auto] [--raw FILE]
  bench/numerics_bench.py --build after=... --build before=... --report FILE   # tables of a --raw file

Bundles: taconite-mkbundle --model M --seed 1 into WORK/M (made with the first build's tool when
missing). "auto / fastest" divides auto's median batch-1 CPU time (wall time in parentheses) by
the faster of f32's and bf16's of the same build and ISA (only for a build with a bf16
configuration); CPU time is the steadier figure on a shared machine.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def run(build, bundle, precision, threads, isa, budget):
    env = dict(os.environ, OMP_WAIT_POLICY=os.environ.get("OMP_WAIT_POLICY", "passive"), BENCH_BUDGET_S=str(budget))
    env.pop("ONEDNN_MAX_CPU_ISA", None)
    if isa != "native":
        env["ONEDNN_MAX_CPU_ISA"] = isa
    proc = subprocess.run([os.path.join(build, "bench", "taconite-bench"), bundle, "cpu", precision, str(threads), "1", "8"],
                          env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def median_of(results, path):
    values = []
    for r in results:
        v = r
        for key in path:
            v = v[key]
        values.append(v)
    return statistics.median(values)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", action="append", required=True, metavar="LABEL=DIR")
    ap.add_argument("--work", default="/tmp/taconite-numerics")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--isa", action="append", help="repeatable; default native, AVX512_CORE, AVX2")
    ap.add_argument("--models", default="ir18,ir101")
    ap.add_argument("--configs", default="after:f32,after:bf16,after:auto,before:f32,before:auto")
    ap.add_argument("--budget", type=float, default=1.0, help="BENCH_BUDGET_S per batch size")
    ap.add_argument("--raw", help="append every result as a JSON line to this file")
    ap.add_argument("--report", metavar="RAW", help="print the tables of an earlier run's --raw file; run nothing")
    args = ap.parse_args()

    builds = dict(spec.split("=", 1) for spec in args.build)
    isas = args.isa or ["native", "AVX512_CORE", "AVX2"]
    models = args.models.split(",")
    configs = [tuple(c.split(":")) for c in args.configs.split(",")]
    configs = [c for c in configs if c[0] in builds]
    os.makedirs(args.work, exist_ok=True)
    first = builds[next(iter(builds))]
    for model in models if not args.report else []:
        bundle = os.path.join(args.work, model)
        if not os.path.exists(os.path.join(bundle, "manifest.txt")):
            subprocess.run([os.path.join(first, "tools", "taconite-mkbundle"), "--model", model, "--out", bundle, "--seed", "1"],
                           check=True, stdout=subprocess.DEVNULL)

    if args.report:
        results = {}
        for line in open(args.report):
            r = json.loads(line)
            results.setdefault((r["isa"], r["model"], r["build"], r["requested"]), []).append(r)
        print(f"from {args.report}")
        report(results, isas, models, configs)
        return

    load_start = open("/proc/loadavg").read().split()[:3]
    results = {}  # (isa, model, build, precision) -> [result per round]
    raw = open(args.raw, "a") if args.raw else None
    for rnd in range(args.rounds):
        for isa in isas:
            for model in models:
                order = configs if rnd % 2 == 0 else list(reversed(configs))
                for build, precision in order:
                    r = run(builds[build], os.path.join(args.work, model), precision, args.threads, isa, args.budget)
                    r.update({"isa": isa, "model": model, "build": build, "requested": precision, "round": rnd})
                    results.setdefault((isa, model, build, precision), []).append(r)
                    if raw:
                        raw.write(json.dumps(r) + "\n")
                    print(f"round {rnd} {isa} {model} {build}:{precision}: "
                          + (r["error"] if "error" in r else f"{r['precision']} {r['batches']['1']['median_ms']} ms"),
                          file=sys.stderr)
    load_end = open("/proc/loadavg").read().split()[:3]

    print(f"threads {args.threads}, {args.rounds} interleaved rounds (median of rounds), load average "
          f"{' '.join(load_start)} at the start, {' '.join(load_end)} at the end")
    report(results, isas, models, configs)


def report(results, isas, models, configs):
    for isa in isas:
        print(f"\nONEDNN_MAX_CPU_ISA={isa}\n")
        print("| model | build:precision | runs | batch 1 ms (CPU ms) | batch 8: faces/s (CPU ms per face) | load s (CPU s) | "
              "peak RSS MiB | cosine vs fp32 | auto / fastest: CPU (wall) |")
        print("|---|---|---|---|---|---|---|---|---|")
        for model in models:
            b1, b1_cpu = {}, {}
            for build, precision in configs:
                rs = [r for r in results[(isa, model, build, precision)] if "error" not in r]
                if rs:
                    b1[(build, precision)] = median_of(rs, ["batches", "1", "median_ms"])
                    b1_cpu[(build, precision)] = median_of(rs, ["batches", "1", "cpu_ms"])
            for build, precision in configs:
                all_rs = results[(isa, model, build, precision)]
                rs = [r for r in all_rs if "error" not in r]
                if not rs:
                    print(f"| {model} | {build}:{precision} | - | unavailable: {all_rs[0]['error'][:80]} | | | | | |")
                    continue
                ran = "/".join(sorted({r["precision"] for r in rs}))
                versus = ""
                if precision == "auto" and (build, "bf16") in configs:  # else the build's own numerics are not all here
                    peers = [k for k in ((build, "f32"), (build, "bf16")) if k in b1]
                    if peers:
                        cpu = b1_cpu[(build, precision)] / min(b1_cpu[k] for k in peers)
                        wall = b1[(build, precision)] / min(b1[k] for k in peers)
                        versus = f"{cpu:.2f} ({wall:.2f})"
                print(f"| {model} | {build}:{precision} | {ran} | {median_of(rs, ['batches', '1', 'median_ms']):.1f} "
                      f"({median_of(rs, ['batches', '1', 'cpu_ms']):.1f}) | {median_of(rs, ['batches', '8', 'faces_per_s']):.1f} "
                      f"({median_of(rs, ['batches', '8', 'cpu_ms']) / 8:.1f}) | "
                      f"{median_of(rs, ['load_s']):.2f} ({median_of(rs, ['load_cpu_s']):.2f}) | "
                      f"{median_of(rs, ['peak_rss_mib']):.0f} | {median_of(rs, ['cosine_fp32']):.6f} | {versus} |")
        for model in models:
            for build, precision in configs:
                reasons = [r.get("backend_reason", "") for r in results[(isa, model, build, precision)] if "auto:" in r.get("backend_reason", "")]
                for reason in reasons:
                    print(f"- {model} {build}:{precision}: {reason[reason.index('auto:'):]}")


if __name__ == "__main__":
    main()
