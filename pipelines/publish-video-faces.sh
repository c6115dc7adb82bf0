#!/usr/bin/env bash
# Pipeline (a) as one gst-launch-1.0 command: faces in video -> a face detector -> taconitetrack ->
# taconiteadaface -> taconitepublish method=file (JSON lines, schema taconite-faces/1,
# docs/faces-message.md), then a summary from the file. The detector is taconitedetect (YuNet, with
# its own 5 landmarks) with --detector MODEL.onnx; without it, the slow stock fallback: facedetect
# (Haar) -> taconitelandmarks (dlib). With the detector it runs the real-time settings: YuNet on one
# frame in 3 (taconitetrack predicts the boxes in between) and best-shot embedding per track.
#
# Usage: pipelines/publish-video-faces.sh [--model DIR|FILE.onnx [--model-proc FILE.json]]
#                                         [--backend NAME] [--seconds S]
#                                         [--reinfer-interval R] [--output FILE.jsonl]
#                                         [--detector YUNET.onnx] [--detect-interval N]
#                                         [--reinfer-mode interval|best] [--tracks EVENTS.jsonl]
#                                         [--best-faces DIR] [--video-out FILE.mp4]
#                                         [--gallery G [--threshold T] [--keep-unknowns]] [VIDEO]
#
# Without VIDEO the synthetic camera (python3-skimage's astronaut, panned and zoomed) is first
# written to a video file with pipelines/make_demo_video.py. Every frame gets a line
# (publish-empty=true), each face its embedding (embedding=array). --model (alias --bundle) is a
# bundle directory or an ONNX face embedder (docs/models.md; --model-proc its description when not
# beside it); without it a synthetic IR-tiny test bundle is written (meaningless identities). BUILD_DIR (default: build) is
# the meson build directory holding the plugin and tools. --detect-interval (default 3) and
# --reinfer-mode (default best with --detector, else interval) are taconitedetect's interval and
# taconiteadaface's reinfer-mode. With --tracks a second taconitepublish (messages=tracks) writes
# the track events (schema taconite-tracks/1, docs/tracks-message.md) to EVENTS.jsonl, with each
# track's best face as a JPEG in DIR with --best-faces.
# --gallery names the faces: taconiteidentify (gallery=G, a gallery made with taconite-gallery create)
# after taconiteadaface, so each face's document carries its label and label_state; --threshold is
# its threshold (default: the model's, from its description, else 0.4; `taconite-gallery calibrate`
# measures one for your gallery). --keep-unknowns also keeps the best face
# of each track that ends unknown in G (keep-unknowns=true), for review with `taconite-gallery
# unknowns G` and `taconite-gallery name G KEY NAME` (README, "Recognising people").
# --video-out also writes the video with every face drawn on it (taconiteoverlay: box, landmarks,
# track id; H.264 in MP4, openh264enc from gstreamer1.0-plugins-bad).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
bundle=""
backend=auto
seconds=4
reinfer=5
output=faces.jsonl
detector=""
detect_interval=3
reinfer_mode=""
tracks=""
best_faces=""
video_out=""
gallery=""
keep_unknowns=false
threshold=""
model_proc=""
video=""
while [ $# -gt 0 ]; do
  case "$1" in
    --model|--bundle) bundle="$2"; shift 2 ;;
    --model-proc) model_proc="$2"; shift 2 ;;
    --backend) backend="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --reinfer-interval) reinfer="$2"; shift 2 ;;
    --output) output="$2"; shift 2 ;;
    --detector) detector="$2"; shift 2 ;;
    --detect-interval) detect_interval="$2"; shift 2 ;;
    --reinfer-mode) reinfer_mode="$2"; shift 2 ;;
    --tracks) tracks="$2"; shift 2 ;;
    --best-faces) best_faces="$2"; shift 2 ;;
    --video-out) video_out="$2"; shift 2 ;;
    --gallery) gallery="$2"; shift 2 ;;
    --threshold) threshold="$2"; shift 2 ;;
    --keep-unknowns) keep_unknowns=true; shift ;;
    -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
    *) video="$1"; shift ;;
  esac
done

# shellcheck source=pipelines/common.sh
. "$here/common.sh"
bundle="$(bundle_or_test_bundle "$bundle")"
if [ -z "$video" ]; then
  video="$(dirname "$output")/synthetic-camera-${seconds}s.avi"
  [ -f "$video" ] || /usr/bin/python3 "$here/make_demo_video.py" "$video" --seconds "$seconds"
fi

if [ -n "$detector" ]; then
  front=(taconitedetect model="$detector" interval="$detect_interval")
  reinfer_mode="${reinfer_mode:-best}"
else
  front=(facedetect display=false ! taconitelandmarks)
  reinfer_mode="${reinfer_mode:-interval}"
fi
if [ "$keep_unknowns" = true ] && [ -z "$gallery" ]; then
  echo "--keep-unknowns needs --gallery G (the gallery the unknown faces are kept in)" >&2
  exit 2
fi
# The model's description, for taconiteadaface and taconiteidentify (its threshold), when given.
model_args=(model="$bundle")
[ -z "$model_proc" ] || model_args+=(model-proc="$model_proc")
identify=()
if [ -n "$gallery" ]; then
  identify=(taconiteidentify gallery="$gallery" "${model_args[@]}" stream=cam0 keep-unknowns="$keep_unknowns")
  [ -z "$threshold" ] || identify+=(threshold="$threshold")
  identify+=(!)
fi
events=()
if [ -n "$tracks" ]; then
  events=(taconitepublish messages=tracks method=file location="$tracks" stream=cam0)
  [ -z "$best_faces" ] || events+=(best-face=path best-face-dir="$best_faces")
  events+=(!)
fi
pipeline=(filesrc location="$video" ! decodebin ! videoconvert ! "${front[@]}" !
  taconitetrack ! taconiteadaface "${model_args[@]}" backend="$backend" input-mode=rois \
    reinfer-mode="$reinfer_mode" reinfer-interval="$reinfer" !
  "${identify[@]}"
  taconitepublish method=file location="$output" stream=cam0 embedding=array publish-empty=true !
  "${events[@]}")
if [ -n "$video_out" ]; then
  # A bitrate high enough that the drawn 2-pixel lines survive the encoding.
  pipeline+=(taconiteoverlay ! videoconvert ! openh264enc bitrate=4000000 ! h264parse ! mp4mux !
    filesink location="$video_out" sync=false)
else
  pipeline+=(fakesink sync=false)
fi
echo "gst-launch-1.0 ${pipeline[*]}" >&2
started=$EPOCHREALTIME
# facedetect's OpenCV logs that its optional nose/mouth/eye cascades are missing, as the element
# is created (before any property could name other files): not needed here;
# OpenH264 logs cmInitParaError when drained at EOS, with every frame already written, whatever
# its settings (README).
gst-launch-1.0 -q "${pipeline[@]}" 2> >(grep -v -e 'haarcascade_mcs_' -e 'EncodeFrame(), cmInitParaError' >&2)
/usr/bin/python3 "$here/summarize_faces.py" "$output" --started "$started" \
  --reuse "reinfer-mode=$reinfer_mode$([ "$reinfer_mode" = interval ] && echo " reinfer-interval=$reinfer")" >&2
