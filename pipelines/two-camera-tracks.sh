#!/usr/bin/env bash
# Two cameras, one pipeline, track events over MQTT: each camera (the demo's synthetic camera, a
# video made by make_demo_video.py, read twice as door1 and door2) -> a face detector ->
# taconitetrack -> taconiteadaface [-> taconiteidentify] -> taconitepublish messages=tracks
# method=mqtt, so a broker receives per-track events (taconite-tracks/1, docs/tracks-message.md)
# on taconite/door1/tracks and taconite/door2/tracks. pipelines/track_events_consumer.py prints them.
#
# Usage: pipelines/two-camera-tracks.sh [--model DIR|FILE.onnx] [--backend NAME] [--seconds S]
#                                       [--host HOST] [--port PORT] [--best-faces DIR]
#                                       [--detector YUNET.onnx] [--gallery G [--threshold T]]
#
# --model (alias --bundle): a bundle directory or an ONNX face embedder with its description beside
# it (docs/models.md); without it a synthetic IR-tiny test bundle is written (meaningless identities). With
# --best-faces each track's best face is a JPEG in DIR (door1-<track uid>.jpg, ...). As in ./demo.sh:
# --detector finds faces with taconitedetect (YuNet, on one frame in 3, best-shot embedding), else
# facedetect (Haar) -> taconitelandmarks (dlib); --gallery names the faces from G (made with
# taconite-gallery create for the same model; taconiteidentify, --threshold its threshold,
# default the model's), so each end event carries the name and confidence. Only track events leave
# the pipeline, so faces taconitetrack has not confirmed yet are not embedded (untracked=never).
# BUILD_DIR (default: build) is the meson build directory holding the plugin and tools.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
bundle=""
backend=auto
seconds=4
host=localhost
port=1883
best_faces=""
detector=""
gallery=""
threshold=""
while [ $# -gt 0 ]; do
  case "$1" in
    --model|--bundle) bundle="$2"; shift 2 ;;
    --backend) backend="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --host) host="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --best-faces) best_faces="$2"; shift 2 ;;
    --detector) detector="$2"; shift 2 ;;
    --gallery) gallery="$2"; shift 2 ;;
    --threshold) threshold="$2"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done

# shellcheck source=pipelines/common.sh
. "$here/common.sh"
bundle="$(bundle_or_test_bundle "$bundle")"
video="${TMPDIR:-/tmp}/taconite-synthetic-camera-${seconds}s.avi"
[ -f "$video" ] || /usr/bin/python3 "$here/make_demo_video.py" "$video" --seconds "$seconds"

choose_front_end "$detector"
pipeline=()
for camera in door1 door2; do
  faces=()
  [ -z "$best_faces" ] || faces=(best-face=path best-face-dir="$best_faces")
  identify=()
  if [ -n "$gallery" ]; then
    identify=(taconiteidentify gallery="$gallery" model="$bundle" stream="$camera")
    [ -z "$threshold" ] || identify+=(threshold="$threshold")
    identify+=(!)
  fi
  pipeline+=(filesrc location="$video" ! decodebin ! videoconvert ! "${front[@]}" !
    taconitetrack ! taconiteadaface model="$bundle" backend="$backend" input-mode=rois reinfer-mode="$reinfer_mode" \
      untracked=never !
    "${identify[@]}"
    taconitepublish messages=tracks method=mqtt host="$host" port="$port" stream="$camera" "${faces[@]}" !
    fakesink sync=false)
done
echo "gst-launch-1.0 ${pipeline[*]}" >&2
# facedetect's OpenCV logs that its optional nose/mouth/eye cascades are missing, as the element
# is created (before any property could name other files): not needed here.
gst-launch-1.0 -q "${pipeline[@]}" 2> >(grep -v 'haarcascade_mcs_' >&2)
