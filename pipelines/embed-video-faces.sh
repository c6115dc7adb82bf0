#!/usr/bin/env bash
# Pipeline (a): faces in video -> facedetect -> taconiteadaface -> JSON lines (one per face).
# Pipeline (b): the same with --cameras N: N synthetic cameras in one pipeline sharing one engine.
#
# Usage: pipelines/embed-video-faces.sh [--bundle DIR] [--backend NAME] [--cameras N] [--seconds S]
#                                       [--batch-size N] [--output FILE.jsonl] [VIDEO ...]
#
# Without VIDEO the input is built inside the pipeline from photos Debian ships (python3-skimage's
# astronaut.png; opencv-doc's messi5.jpg for a second camera): imagefreeze plus a crop window that
# pans and zooms every frame, so the face box moves. Each VIDEO file (decodebin; gstreamer1.0-libav
# for common codecs) is one camera instead. Without --bundle a synthetic IR-tiny test bundle is
# written with taconite-mkbundle: its identities are meaningless; pass a real exported bundle.
# Each line: {"stream","frame","running_time_ns","box":[x,y,w,h],"roi_id","aligned","norm","embedding":[512]}.
# A summary (frames, faces, faces/s, latency) goes to stderr. BUILD_DIR (default: build) is the
# meson build directory holding the plugin and tools.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
build="${BUILD_DIR:-$root/build}"
args=()
bundle=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) bundle="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) args+=("$1"); shift ;;
  esac
done

plugin_dir="$build/gst/plugin"
if [ ! -f "$plugin_dir/libgsttaconite.so" ]; then
  echo "error: $plugin_dir/libgsttaconite.so not found; build first (meson setup $build && ninja -C $build)" >&2
  exit 1
fi
export GST_PLUGIN_PATH="$plugin_dir${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"
if [ ! -f /usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml ]; then
  echo "error: facedetect's face cascade is missing (apt-get install opencv-data)" >&2
  exit 1
fi

if [ -z "$bundle" ]; then
  bundle="${TMPDIR:-/tmp}/taconite-ir-tiny-bundle"
  if [ ! -f "$bundle/manifest.txt" ]; then
    echo "writing a synthetic IR-tiny test bundle to $bundle (meaningless identities)" >&2
    "$build/tools/taconite-mkbundle" --model ir-tiny --out "$bundle" --force >&2
  fi
fi

# facedetect's OpenCV logs that its optional nose/mouth/eye cascades are missing: not needed here.
exec /usr/bin/python3 "$here/faces_to_jsonl.py" --bundle "$bundle" ${args[@]+"${args[@]}"} \
  2> >(grep -v 'haarcascade_mcs_' >&2)
