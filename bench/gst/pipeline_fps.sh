#!/usr/bin/env bash
# Pipeline (a)'s frames/s with and without taconitelandmarks + taconitetrack (not a test).
#
# Usage: bench/gst/pipeline_fps.sh [BUILD_DIR] [BUNDLE] [ROUNDS]
#
# The source is pipeline (a)'s: python3-skimage's astronaut photo frozen into 480x480 I420 video
# (no moving window here: that needs the Python driver). Three pipelines, each timed at 30 and 150
# frames so start-up (plugin scan, model and bundle loads) cancels out:
#   stock      facedetect -> taconiteadaface                 (unaligned, every frame embedded)
#   aligned    facedetect -> taconitelandmarks -> taconitetrack -> taconiteadaface reinfer-interval=0
#   reuse      the same with reinfer-interval=5 (the demo's setting: 4 of 5 frames reuse the track's embedding)
# frames/s = 120 / (t150 - t30), median of ROUNDS (default 3). Without BUNDLE an IR-18 test bundle
# is written. Prints one JSON line.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
rounds="${3:-3}"
export GST_PLUGIN_PATH="$build/gst/plugin"
bundle="${2:-}"
if [ -z "$bundle" ]; then
  bundle="${TMPDIR:-/tmp}/taconite-bench-ir18"
  [ -f "$bundle/manifest.txt" ] || "$build/tools/taconite-mkbundle" --model ir18 --out "$bundle" --force >&2
fi
photo="$(/usr/bin/python3 -c 'import skimage, os; print(os.path.join(os.path.dirname(skimage.__file__), "data", "astronaut.png"))')"

source_of() {
  echo "filesrc location=$photo ! decodebin ! videoconvert ! video/x-raw,format=I420 ! imagefreeze num-buffers=$1 !" \
    "video/x-raw,framerate=30/1 ! videoscale ! video/x-raw,width=480,height=480 ! videoconvert"
}
adaface="taconiteadaface bundle=$bundle backend=cpu input-mode=rois"
declare -A middle=(
  [stock]="facedetect display=false ! $adaface"
  [aligned]="facedetect display=false ! taconitelandmarks ! taconitetrack ! $adaface reinfer-interval=0"
  [reuse]="facedetect display=false ! taconitelandmarks ! taconitetrack ! $adaface reinfer-interval=5"
)

seconds_for() {  # FRAMES PIPELINE_NAME
  local start end
  start=$(date +%s.%N)
  # shellcheck disable=SC2086  # the pipeline description is split into gst-launch arguments on purpose
  gst-launch-1.0 -q $(source_of "$1") ! ${middle[$2]} ! fakesink sync=false 2>/dev/null >/dev/null
  end=$(date +%s.%N)
  awk "BEGIN { print $end - $start }"
}

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

printf '{'
separator=""
for name in stock aligned reuse; do
  fps=$(for _ in $(seq "$rounds"); do
    short=$(seconds_for 30 "$name")
    long=$(seconds_for 150 "$name")
    awk "BEGIN { print 120 / ($long - $short) }"
  done | median)
  printf '%s"%s_fps": %.2f' "$separator" "$name" "$fps"
  separator=", "
done
printf ', "bundle": "%s", "rounds": %s}\n' "$bundle" "$rounds"
