#!/bin/sh
# The cpu backend benchmark: IR-18, IR-50 and IR-101 test bundles (identical weights and input for
# every engine), each engine in its own process, then the table of docs/performance.md. IR-50 is an
# AdaFace net.py checkpoint with random calibrated weights (tests/import/models.py) through
# taconite-import. MODELS="ir18 ir50 ir101" (the default) picks the models.
#   bench/run_cpu_bench.sh [BUILD_DIR] [THREADS] [WORK_DIR]
# BUILD_DIR defaults to build/, THREADS to every core, WORK_DIR to /tmp/taconite-bench.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
threads=${2:-$(nproc)}
work=${3:-/tmp/taconite-bench}
python=/usr/bin/python3   # Debian's python3-torch lives there
mkdir -p "$work"
ninja -C "$build" tools/taconite-mkbundle bench/taconite-bench bench/opencv-dnn-bench >/dev/null
results=$work/results.jsonl
: > "$results"
echo "{\"machine\": \"$(lscpu | sed -n 's/^Model name: *//p')\", \"threads\": $threads, \"load_average\": \"$(cut -d' ' -f1-3 /proc/loadavg)\", \"onednn\": \"$(dpkg-query -W -f '${Version}' libdnnl2 2>/dev/null)\"}" >> "$results"
"$build/bench/taconite-bench" --peak "$threads" >> "$results"
# `auto` computes in bf16 only where the CPU has AVX512-BF16 / AMX; elsewhere it is the f32 run.
precisions=f32
grep -q '"native_bf16": true' "$results" && precisions="auto f32"
for model in ${MODELS:-ir18 ir50 ir101}; do
  bundle=$work/$model
  if [ "$model" = ir50 ] && [ ! -f "$bundle/manifest.txt" ]; then
    TACONITE_IMPORT_PYTHON=$here/../tools/import "$python" "$here/../tests/import/make_test_model.py" adaface-ir50 \
      "$work/ir50.ckpt"
    "$build/tools/taconite-import" --from adaface-ckpt "$work/ir50.ckpt" --out "$bundle" --force >&2
  fi
  [ -f "$bundle/manifest.txt" ] || "$build/tools/taconite-mkbundle" --model "$model" --out "$bundle" --seed 1 >&2
  echo "== $model" >&2
  for precision in $precisions; do
    "$build/bench/taconite-bench" "$bundle" cpu "$precision" "$threads" 1 8 32 >> "$results"
  done
  BENCH_BUDGET_S=1 "$build/bench/taconite-bench" "$bundle" cpu-reference f32 "$threads" 1 >> "$results"
  "$python" "$here/torch_bench.py" "$bundle" "$threads" 1 8 32 \
    --onnx "$work/$model" --face "$work/$model.face.f32" --ref "$work/$model.ref.f32" >> "$results" 2>/dev/null
  "$build/bench/opencv-dnn-bench" "$work/$model" "$work/$model.face.f32" "$work/$model.ref.f32" "$threads" 1 8 32 \
    | sed "s|^{|{\"bundle\": \"$bundle\", |" >> "$results"
done
"$python" "$here/report.py" "$results"
