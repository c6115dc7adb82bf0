#!/bin/sh
# The real-face bench (docs/performance.md, "Real faces"): both real ONNX embedders of
# ../shared/realfaces on its photos through YuNet or dlib alignment, and their ms per face beside the
# IR-18 test bundle on the `cpu` backend (taconite-mkbundle --seed 1, as bench/run_cpu_bench.sh).
#   bench/realfaces/run_realfaces_bench.sh [BUILD_DIR] [THREADS] [WORK_DIR]
# BUILD_DIR defaults to build/, THREADS to 2, WORK_DIR to /tmp/taconite-realfaces-bench; REALFACES
# and YUNET name the data (default ../shared/realfaces and ../shared/models/face_detection_yunet_2023mar.onnx).
# Writes WORK_DIR/realfaces.json and WORK_DIR/realfaces-scores.png. Run with OMP_WAIT_POLICY=passive.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../..
build=${1:-$root/build}
threads=${2:-2}
work=${3:-/tmp/taconite-realfaces-bench}
realfaces=${REALFACES:-$root/../shared/realfaces}
yunet=${YUNET:-$root/../shared/models/face_detection_yunet_2023mar.onnx}
[ -d "$realfaces/photos" ] || { echo "no real faces at $realfaces (set REALFACES)" >&2; exit 1; }
[ -f "$yunet" ] || { echo "no YuNet model at $yunet (set YUNET)" >&2; exit 1; }
mkdir -p "$work"
ninja -C "$build" tools/taconite-mkbundle bench/realfaces/realfaces-bench >/dev/null
[ -f "$work/ir18/manifest.txt" ] || "$build/tools/taconite-mkbundle" --model ir18 --out "$work/ir18" --seed 1 >&2
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
"$build/bench/realfaces/realfaces-bench" --realfaces "$realfaces" --yunet "$yunet" --ir18 "$work/ir18" \
  --threads "$threads" --json "$work/realfaces.json" --plot "$work/realfaces-scores.png" --scratch "$work/models"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
