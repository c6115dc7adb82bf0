#!/bin/sh
# The cpu backend benchmark: IR-18, IR-50 and IR-101 test bundles (identical weights and input for
# every engine), each engine in its own process, then the table of docs/performance.md. IR-50 is an
# AdaFace net.py checkpoint with random calibrated weights (tests/import/models.py) through
# taconite-import. The peers: PyTorch, OpenCV DNN and ONNX Runtime (onnxruntime-node, installed here
# into WORK_DIR/onnxruntime by bench/ort_bench.mjs; skipped, saying why, when that cannot be done).
# Then the real ONNX embedders of ../shared/realfaces (REALFACES=DIR; skipped, saying why, when
# absent) on this runtime's opencv-dnn backend beside ONNX Runtime on the same file and input face.
#   bench/run_cpu_bench.sh [BUILD_DIR] [THREADS] [WORK_DIR]
# BUILD_DIR defaults to build/, THREADS to every core, WORK_DIR to /tmp/taconite-bench.
# MODELS="ir18 ir50 ir101" (the default) picks the models; ROUNDS=N (default 1) runs every engine N
# times in turn (report.py takes medians, and the median of each round's ratios); REAL=0 leaves out
# the real embedders. Raw JSON lines: WORK_DIR/results.jsonl.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
threads=${2:-$(nproc)}
work=${3:-/tmp/taconite-bench}
python=/usr/bin/python3   # Debian's python3-torch lives there
realfaces=${REALFACES:-$here/../../shared/realfaces}
yunet=${YUNET:-$here/../../shared/models/face_detection_yunet_2023mar.onnx}
# PyTorch is both a peer and the exporter of the ONNX files OpenCV DNN and ONNX Runtime run.
"$python" -c "import torch" 2>/dev/null || { echo "$python cannot import torch: apt-get install python3-torch" >&2; exit 1; }
mkdir -p "$work"
ninja -C "$build" tools/taconite-mkbundle bench/taconite-bench bench/opencv-dnn-bench >/dev/null
results=$work/results.jsonl
: > "$results"
skip() {  # skip PEER WHAT REASON: a line report.py lists under the table (REASON without quotes)
  echo "{\"backend\": \"$1\", \"model\": \"$2\", \"skipped\": \"$3\"}" >> "$results"
  echo "skipped: $1 on $2: $3" >&2
}

# ONNX Runtime: installed (npm, before any timing) or skipped with the reason.
ort=yes
if ! command -v node >/dev/null; then
  skip onnxruntime "every model" "no node on PATH (Debian: apt-get install nodejs npm)"
  ort=no
elif ! node "$here/ort_bench.mjs" --install --ort-dir "$work/onnxruntime" >> "$results"; then
  ort=no
fi
# The same waiting policy as the OpenMP engines: with OMP_WAIT_POLICY=passive ONNX Runtime's idle
# pool threads do not spin either (they do by default; on a busy machine spinning cost it 1.5-1.8x).
ort_spin=
[ "${OMP_WAIT_POLICY:-}" = passive ] && ort_spin=--no-spin
ort_bench() { [ "$ort" = no ] || node "$here/ort_bench.mjs" --ort-dir "$work/onnxruntime" --threads "$threads" $ort_spin \
  "$@" >> "$results" || echo "ort_bench.mjs failed (its line in $results says why)" >&2; }

# The real embedders need the realfaces data, YuNet (to align the input face) and real-embedder-bench
# (built with dlib and OpenCV's dnn module).
real=${REAL:-1}
if [ "$real" = 1 ]; then
  if [ ! -d "$realfaces/models" ] || [ ! -f "$yunet" ]; then
    skip "taconite opencv-dnn" "the real embedders" "no $realfaces/models or no $yunet (set REALFACES, YUNET)"
    real=0
  elif ! ninja -C "$build" bench/realfaces/real-embedder-bench >/dev/null 2>&1; then
    skip "taconite opencv-dnn" "the real embedders" "$build has no bench/realfaces/real-embedder-bench (needs dlib, OpenCV dnn)"
    real=0
  else
    "$build/bench/realfaces/real-embedder-bench" face --realfaces "$realfaces" --yunet "$yunet" \
      --scratch "$work/real-models" --out-dir "$work/real" --threads "$threads"
  fi
fi

echo "{\"machine\": \"$(lscpu | sed -n 's/^Model name: *//p')\", \"isa\": \"$(grep -o -w -E 'avx512f|avx512_bf16|avx512_vnni|avx_vnni|amx_tile|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ' | sed 's/ $//')\", \"threads\": $threads, \"load_average\": \"$(cut -d' ' -f1-3 /proc/loadavg)\", \"onednn\": \"$(dpkg-query -W -f '${Version}' libdnnl2 2>/dev/null)\", \"omp_wait_policy\": \"${OMP_WAIT_POLICY:-}\"}" >> "$results"
"$build/bench/taconite-bench" --peak "$threads" >> "$results"
# `auto` times f32, bf16 and (AVX-512) f32's Winograd variant at load and keeps the fastest; f32 is
# direct convs. int8 (never picked by `auto`: it keeps ~0.996-0.999 of f32 on real faces).
precisions="auto f32 int8"
for model in ${MODELS:-ir18 ir50 ir101}; do
  bundle=$work/$model
  if [ "$model" = ir50 ] && [ ! -f "$bundle/manifest.txt" ]; then
    TACONITE_IMPORT_PYTHON=$here/../tools/import "$python" "$here/../tests/import/make_test_model.py" adaface-ir50 \
      "$work/ir50.ckpt"
    "$build/tools/taconite-import" --from adaface-ckpt "$work/ir50.ckpt" --out "$bundle" --force >&2
  fi
  [ -f "$bundle/manifest.txt" ] || "$build/tools/taconite-mkbundle" --model "$model" --out "$bundle" --seed 1 >&2
done

round=1
while [ "$round" -le "${ROUNDS:-1}" ]; do
  echo "{\"round\": $round}" >> "$results"
  for model in ${MODELS:-ir18 ir50 ir101}; do
    bundle=$work/$model
    echo "== round $round: $model" >&2
    for precision in $precisions; do
      "$build/bench/taconite-bench" "$bundle" cpu "$precision" "$threads" 1 8 32 >> "$results"
    done
    BENCH_BUDGET_S=1 "$build/bench/taconite-bench" "$bundle" cpu-reference f32 "$threads" 1 >> "$results"
    # The ONNX files (written in round 1): for OpenCV DNN with the affine as a depthwise conv (all
    # 4.6 imports), for ONNX Runtime as a BatchNormalization (as an exported batch norm is; the three
    # forms ran within the noise of each other there, docs/performance.md).
    export_onnx=
    [ "$round" = 1 ] && export_onnx="--onnx $work/$model --ort-onnx $work/$model.ort --ort-affine batchnorm"
    "$python" "$here/torch_bench.py" "$bundle" "$threads" 1 8 32 $export_onnx \
      --face "$work/$model.face.f32" --ref "$work/$model.ref.f32" >> "$results" 2>/dev/null
    "$build/bench/opencv-dnn-bench" "$work/$model" "$work/$model.face.f32" "$work/$model.ref.f32" "$threads" 1 8 32 \
      | sed "s|^{|{\"bundle\": \"$bundle\", |" >> "$results"
    ort_bench --prefix "$work/$model.ort" --bundle "$bundle" --face "$work/$model.face.f32" --ref "$work/$model.ref.f32" \
      1 8 32
  done
  if [ "$real" = 1 ]; then
    for embedder in foamliu-128 faceplugin-512; do
      echo "== round $round: $embedder" >&2
      "$build/bench/realfaces/real-embedder-bench" time --realfaces "$realfaces" --embedder "$embedder" \
        --face "$work/real/$embedder.face.f32" --ref-out "$work/real/$embedder.ref.f32" --scratch "$work/real-models" \
        --threads "$threads" 1 8 >> "$results"
      ort_bench --model "$work/real/$embedder.onnx" --label "$embedder" \
        --face "$work/real/$embedder.face.f32" --ref "$work/real/$embedder.ref.f32" 1 8
    done
  fi
  round=$((round + 1))
done
echo "{\"load_average_end\": \"$(cut -d' ' -f1-3 /proc/loadavg)\"}" >> "$results"
"$python" "$here/report.py" "$results"
