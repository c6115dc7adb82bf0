#!/bin/sh
# Which ONNX form of the network ONNX Runtime runs fastest (docs/performance.md, "ONNX Runtime's
# form of the network"): the bundle's affine (x*scale + shift per channel) exported by
# bench/torch_bench.py as a BatchNormalization, a Mul + Add, or a depthwise 1x1 Conv (the form
# OpenCV DNN needs), each run by bench/ort_bench.mjs at batch 1 with its idle threads spinning
# (ONNX Runtime's default) and not; ROUNDS interleaved rounds, medians.
#   bench/ort_forms.sh [BUILD_DIR] [THREADS] [WORK_DIR]     MODELS (default "ir18 ir101"), ROUNDS (5)
# WORK_DIR (default /tmp/taconite-bench) is shared with run_cpu_bench.sh: bundles and the npm install are reused.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
threads=${2:-$(nproc)}
work=${3:-/tmp/taconite-bench}
python=/usr/bin/python3
out=$work/ort-forms.jsonl
mkdir -p "$work"
ninja -C "$build" tools/taconite-mkbundle >/dev/null
node "$here/ort_bench.mjs" --install --ort-dir "$work/onnxruntime" > "$out" || { cat "$out"; exit 1; }
for model in ${MODELS:-ir18 ir101}; do
  [ -f "$work/$model/manifest.txt" ] || "$build/tools/taconite-mkbundle" --model "$model" --out "$work/$model" --seed 1 >&2
  for form in batchnorm muladd depthwise; do
    [ -f "$work/$model.$form.b1.onnx" ] || "$python" "$here/torch_bench.py" "$work/$model" "$threads" 1 --budget 0.01 \
      --ort-onnx "$work/$model.$form" --ort-affine "$form" --face "$work/$model.face.f32" --ref "$work/$model.ref.f32" \
      >/dev/null 2>&1
  done
done
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
round=1
while [ "$round" -le "${ROUNDS:-5}" ]; do
  for model in ${MODELS:-ir18 ir101}; do
    for form in batchnorm muladd depthwise; do
      for spin in "" --no-spin; do
        node "$here/ort_bench.mjs" --ort-dir "$work/onnxruntime" --threads "$threads" $spin --prefix "$work/$model.$form" \
          --label "$model $form" --face "$work/$model.face.f32" --ref "$work/$model.ref.f32" 1 >> "$out"
      done
    done
  done
  round=$((round + 1))
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg); raw lines: $out"
"$python" - "$out" <<'EOF'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "batches" in r:
        key = (r["model"], "spinning" if r["options"]["allow_spinning"] else "no spin")
        runs.setdefault(key, []).append(r["batches"]["1"])
print("| model, affine as | threads | batch 1 ms: median (range) | CPU ms: median (range) | rounds |")
print("|---|---|---|---|---|")
for (model, spin), b in runs.items():
    ms, cpu = [x["median_ms"] for x in b], [x["cpu_ms"] for x in b]
    print(f"| {model} | {spin} | {statistics.median(ms):.1f} ({min(ms):.1f}–{max(ms):.1f}) | "
          f"{statistics.median(cpu):.1f} ({min(cpu):.1f}–{max(cpu):.1f}) | {len(b)} |")
EOF
