#!/usr/bin/python3
"""Formats bench/run_cpu_bench.sh's JSON lines as the markdown table of docs/performance.md.

usage: report.py RESULTS.jsonl
Every engine's batch-1 latency is divided by PyTorch's and by ONNX Runtime's for the same model in
the same run (wall time, and process CPU time in brackets). A model is a run line's "model", else
its bundle directory's name. A line {"round": N} starts round N (run_cpu_bench.sh's ROUNDS): an
engine measured in several rounds gets the median of each figure over its rounds, its latency's
range, and the median of its per-round ratios (each round's engines ran one after the other, so a
round's ratio compares runs under the same machine load). Lines with "skipped" or "failed" (a peer
that could not run) are listed under the table with their reason.
"""
import json
import os
import statistics
import sys

MACS = {"ir18": 2.60e9, "ir50": 6.30e9, "ir101": 12.08e9}  # per 112x112 face (spec section 9; IR-50 counted on net.py)
PEERS = ("pytorch", "onnxruntime")  # the ratio columns, in table order


def model_of(run):
    return run.get("model") or os.path.basename(run["bundle"].rstrip("/"))


def weight_bytes(run):
    """The model's weight bytes: the run's own "weight_bytes" (an ONNX file), else the bundle's tensors
    without ref.* (NaN when the bundle is gone, e.g. old results)."""
    if "weight_bytes" in run:
        return run["weight_bytes"]
    index = os.path.join(run["bundle"], "tensors.txt")
    if not os.path.exists(index):
        return float("nan")
    total = 0
    for line in open(index):
        fields = line.split()
        if len(fields) == 5 and not fields[0].startswith("ref."):
            total += int(fields[4])
    return total


def ratio(run, peer):
    """`run`'s batch-1 latency over `peer`'s: (wall, CPU); None where either lacks the figure."""
    if peer is None:
        return None, None
    mine, theirs = run["batches"].get("1", {}), peer["batches"].get("1", {})
    wall = mine["median_ms"] / theirs["median_ms"] if "median_ms" in mine and theirs.get("median_ms") else None
    cpu = mine["cpu_ms"] / theirs["cpu_ms"] if mine.get("cpu_ms") and theirs.get("cpu_ms") else None
    return wall, cpu


def round_ratios(runs, peers):
    """The median over rounds of ratio(run, the same round's peer) among `runs` (one engine's rounds) and
    `peers` (the peer's rounds): (wall, CPU), None where no round has both."""
    by_round = {p["_round"]: p for p in peers}
    pairs = [ratio(r, by_round.get(r["_round"])) for r in runs]
    walls = [w for w, _ in pairs if w is not None]
    cpus = [c for _, c in pairs if c is not None]
    return (statistics.median(walls) if walls else None, statistics.median(cpus) if cpus else None)


def merged(runs):
    """One engine's rounds as one run: the median of every figure over the rounds (the lowest cosine),
    with "rounds" and the batch-1 latency's "range"."""
    if len(runs) == 1:
        return runs[0]
    first = runs[0]
    out = dict(first, rounds=len(runs))
    for key in ("load_s", "load_cpu_s", "peak_rss_mib", "rss_batch1_mib"):
        if all(key in r for r in runs):
            out[key] = statistics.median(r[key] for r in runs)
    if all("cosine_fp32" in r for r in runs):
        out["cosine_fp32"] = min(r["cosine_fp32"] for r in runs)
    out["batches"] = {}
    for batch in first["batches"]:
        figures = [r["batches"][batch] for r in runs if batch in r["batches"]]
        out["batches"][batch] = {key: statistics.median(f[key] for f in figures)
                                 for key in ("median_ms", "faces_per_s", "cpu_ms") if all(key in f for f in figures)}
    if "1" in first["batches"]:
        ms = [r["batches"]["1"]["median_ms"] for r in runs if "1" in r["batches"]]
        out["range"] = (min(ms), max(ms))
    return out


def ratio_cell(wall, cpu):
    if wall is None:
        return "-"
    return f"{wall:.2f}" + (f" ({cpu:.2f})" if cpu is not None else "")


def engine_name(run):
    if "engine" in run:
        return run["engine"]
    backend = run["backend"]
    if backend == "pytorch":
        return "pytorch fp32 eager"
    if backend == "onnxruntime":
        spins = run.get("options", {}).get("allow_spinning", True)
        return f"onnxruntime {run.get('onnxruntime', '')}".rstrip() + ("" if spins else " (no spin)")
    if backend == "opencv-dnn":
        return backend
    requested = run.get("requested", run["precision"])  # `auto` names what it resolved to
    winograd = "auto: f32-winograd" in run.get("backend_reason", "")  # f32 on Winograd convs
    return f"{backend} {run['precision']}" + ("-winograd" if winograd else "") + (
        f" ({requested})" if requested != run["precision"] else "")


def cosine_cell(run):
    if run.get("reference"):
        return "(the reference)"
    return f"{run['cosine_fp32']:.5f}"


def row(model, rounds, peers, peak_gflops):
    """The table row of one engine's runs (`rounds`), `peers` the peers' runs of the same model."""
    run = merged(rounds)
    b = run["batches"]
    ms = b["1"]["median_ms"]
    cpu_ms = b["1"].get("cpu_ms")
    latency = f"{ms:.1f}" + (f" ({cpu_ms:.0f})" if cpu_ms else "")
    if "range" in run:
        latency += f" [{run['rounds']} rounds: {run['range'][0]:.1f}–{run['range'][1]:.1f}]"
    load = f"{run['load_s']:.2f}" + (f" ({run['load_cpu_s']:.2f})" if "load_cpu_s" in run else "")
    b8 = b.get("8", {}).get("faces_per_s")
    b32 = b.get("32", {}).get("faces_per_s")
    gflops = 2 * MACS[model] * b8 / 1e9 if b8 and model in MACS else None
    gf = f"{gflops:.0f} ({100 * gflops / peak_gflops:.0f} %)" if gflops and peak_gflops else "-"
    if gflops and "-winograd" in engine_name(run):
        gf += " ²"
    weights_mib = weight_bytes(run) / 2**20
    rss = f"{run['peak_rss_mib']:.0f} ({run['peak_rss_mib'] / weights_mib:.1f}x)"
    if "rss_batch1_mib" in run:
        rss += f"; batch 1: {run['rss_batch1_mib']:.0f} ({run['rss_batch1_mib'] / weights_mib:.1f}x)"
    ratios = " | ".join(ratio_cell(*round_ratios(rounds, peers[p])) for p in PEERS)
    b8_cell = (f"{b8:.1f}" + (" ¹" if run.get("per_face_calls") else "")) if b8 else "-"
    return (f"| {model} | {engine_name(run)} | {load} | {rss} | {latency} | {ratios} | "
            f"{b8_cell} | {f'{b32:.1f}' if b32 else '-'} | {gf} | {cosine_cell(run)} |")


def report(rows):
    """The report's lines for the JSON objects of one run."""
    machine = next(r for r in rows if "machine" in r)
    peak = next((r for r in rows if "peak_gflops" in r), None)
    runs, round_number = [], 1
    for r in rows:
        if "round" in r and "batches" not in r:
            round_number = r["round"]
        elif "batches" in r:
            runs.append(dict(r, _round=round_number))
    missing = [r for r in rows if "skipped" in r or "failed" in r]
    end = next((r["load_average_end"] for r in rows if "load_average_end" in r), None)
    out = [f"Machine: {machine['machine']}" + (f" ({machine['isa']})" if machine.get("isa") else "")
           + f", {machine['threads']} threads, load average at start {machine['load_average']}"
           + (f", at end {end}" if end else "") + f", oneDNN {machine['onednn']}"]
    if peak:
        out.append(f"Measured peak: {peak['peak_gflops']} GFLOP/s f32 ({peak['impl']}, 3x3 conv 128->128 at 56x56, "
                   f"batch 8); native bf16: {'yes' if peak['native_bf16'] else 'no'}")
    out += ["", "| model | engine | load s (CPU s) | peak RSS MiB (x weights): all batches; through batch 1 | batch 1 ms "
            "(CPU ms) | x PyTorch wall (CPU) | x ONNX Runtime wall (CPU) | batch 8 faces/s | batch 32 faces/s | "
            "GFLOP/s @8 (% peak) | cosine vs fp32 ref |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    models = list(MACS) + [m for m in dict.fromkeys(model_of(r) for r in runs) if m not in MACS]
    for model in models:
        model_runs = [r for r in runs if model_of(r) == model]
        peers = {p: [r for r in model_runs if r["backend"] == p] for p in PEERS}
        engines = dict.fromkeys(engine_name(r) for r in model_runs)
        out += [row(model, [r for r in model_runs if engine_name(r) == e], peers, peak["peak_gflops"] if peak else None)
                for e in engines]
    out.append("")
    weights = [f"{m} {weight_bytes(next(r for r in runs if model_of(r) == m)) / 2**20:.1f} MiB"
               for m in models if any(model_of(r) == m for r in runs)]
    out.append("Weights (bundle tensors without ref.*; an ONNX file's size): " + ", ".join(weights))
    if any(r.get("per_face_calls") for r in runs):
        out.append("¹ the ONNX file's batch is fixed at 1: ONNX Runtime runs batch 8 as 8 one-face calls")
    if any("-winograd" in engine_name(r) for r in runs):
        out.append("² direct convolution's FLOPs per second: Winograd convs do fewer multiplications, so it can pass "
                   "the f32 peak; its batches run face by face")
    for r in missing:
        what = r.get("model") or (model_of(r) if "bundle" in r else "every model")
        out.append(f"Not measured: {r['backend']} on {what}: {r.get('skipped') or r.get('failed')}")
    return out


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    print("\n".join(report(rows)))


if __name__ == "__main__":
    main()
