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
args=()
bundle=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) bundle="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) args+=("$1"); shift ;;
  esac
done

# shellcheck source=pipelines/common.sh
. "$here/common.sh"
if [ ! -f /usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml ]; then
  echo "error: facedetect's face cascade is missing (apt-get install opencv-data)" >&2
  exit 1
fi

bundle="$(bundle_or_test_bundle "$bundle")"

# facedetect's OpenCV logs that its optional nose/mouth/eye cascades are missing, as the element
# is created (before any property could name other files): not needed here.
exec /usr/bin/python3 "$here/faces_to_jsonl.py" --bundle "$bundle" ${args[@]+"${args[@]}"} \
  2> >(grep -v 'haarcascade_mcs_' >&2)
