#!/usr/bin/python3
"""Formats bench/run_cpu_bench.sh's JSON lines as the markdown table of docs/performance.md."""
import json
import os
import sys

MACS = {"ir18": 2.60e9, "ir50": 6.30e9, "ir101": 12.08e9}  # per 112x112 face (spec section 9; IR-50 counted on net.py)


def weight_bytes(bundle):
    """Bytes of the bundle's tensors without ref.* (NaN when the bundle is gone, e.g. old results)."""
    index = os.path.join(bundle, "tensors.txt")
    if not os.path.exists(index):
        return float("nan")
    total = 0
    for line in open(index):
        fields = line.split()
        if len(fields) == 5 and not fields[0].startswith("ref."):
            total += int(fields[4])
    return total


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    machine = rows[0]
    peak = next(r for r in rows if "peak_gflops" in r)
    runs = [r for r in rows if "batches" in r]
    print(f"Machine: {machine['machine']}, {machine['threads']} threads, load average at start "
          f"{machine['load_average']}, oneDNN {machine['onednn']}")
    print(f"Measured peak: {peak['peak_gflops']} GFLOP/s f32 ({peak['impl']}, 3x3 conv 128->128 at 56x56, batch 8); "
          f"native bf16: {'yes' if peak['native_bf16'] else 'no (bf16 rows not run)'}")
    print()
    print("| model | engine | load s (CPU s) | peak RSS MiB (x weights): all batches; through batch 1 | batch 1 ms "
          "(CPU ms) | x PyTorch wall (CPU) | batch 8 faces/s | batch 32 faces/s | GFLOP/s @8 (% peak) | cosine vs fp32 ref |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for model in MACS:
        model_runs = [r for r in runs if os.path.basename(r["bundle"].rstrip("/")) == model]
        if not model_runs:
            continue
        weights_mib = weight_bytes(model_runs[0]["bundle"]) / 2**20
        torch_run = next((r for r in model_runs if r["backend"] == "pytorch"), None)
        torch_ms = torch_run["batches"]["1"]["median_ms"] if torch_run else None
        torch_cpu = torch_run["batches"]["1"].get("cpu_ms") if torch_run else None
        for r in model_runs:
            b = r["batches"]
            engine = r["backend"] + ("" if r["backend"] in ("pytorch", "opencv-dnn") else f" {r['precision']}")
            if r["backend"] == "pytorch":
                engine += " fp32 eager"
            ms = b["1"]["median_ms"]
            cpu_ms = b["1"].get("cpu_ms")
            ratio = f"{ms / torch_ms:.2f}" if torch_ms else "-"
            if torch_cpu and cpu_ms:
                ratio += f" ({cpu_ms / torch_cpu:.2f})"
            latency = f"{ms:.1f}" + (f" ({cpu_ms:.0f})" if cpu_ms else "")
            load = f"{r['load_s']:.2f}" + (f" ({r['load_cpu_s']:.2f})" if "load_cpu_s" in r else "")
            b8 = b.get("8", {}).get("faces_per_s")
            b32 = b.get("32", {}).get("faces_per_s")
            gflops = 2 * MACS[model] * b8 / 1e9 if b8 else None
            gf = f"{gflops:.0f} ({100 * gflops / peak['peak_gflops']:.0f} %)" if gflops else "-"
            rss = f"{r['peak_rss_mib']:.0f} ({r['peak_rss_mib'] / weights_mib:.1f}x)"
            if "rss_batch1_mib" in r:
                rss += f"; batch 1: {r['rss_batch1_mib']:.0f} ({r['rss_batch1_mib'] / weights_mib:.1f}x)"
            print(f"| {model} | {engine} | {load} | {rss} | {latency} | {ratio} | "
                  f"{b8 if b8 else '-'} | {b32 if b32 else '-'} | {gf} | {r['cosine_fp32']:.5f} |")
    print()
    print("Weights (bundle tensors without ref.*): " + ", ".join(
        f"{m} {weight_bytes(next(r['bundle'] for r in runs if os.path.basename(r['bundle'].rstrip('/')) == m)) / 2**20:.0f} MiB"
        for m in MACS if any(os.path.basename(r['bundle'].rstrip('/')) == m for r in runs)))


if __name__ == "__main__":
    main()
