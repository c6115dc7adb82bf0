#!/usr/bin/env bash
# The main job: install what is missing, build, write a test bundle unless one is given, then run
# pipeline (a) as one gst-launch-1.0 command -- faces in video -> a face detector -> taconitetrack ->
# taconiteadaface -> taconitepublish method=file location=out/faces.jsonl -- on the CPU (backend
# auto: an NPU when one opens, else the fast CPU backend) and print a short summary. The detector is
# taconitedetect (YuNet DNN, 5 landmarks) with --detector MODEL.onnx (docs/models.md says where to
# get it), else the slow stock fallback facedetect (Haar) -> taconitelandmarks (dlib).
#   ./demo.sh [VIDEO] [--model DIR|FILE.onnx [--model-proc FILE.json]] [--backend NAME]
#             [--detector YUNET.onnx] [--output FILE.mp4] [--gallery G [--threshold T] [--keep-unknowns]]
# --model (alias --bundle) is an IRON bundle directory or an ONNX face embedder described by a
# taconite-embedder/1 file (beside it as FILE.json, or --model-proc; docs/models.md).
# Without VIDEO the video is made from a real photo Debian ships (a frozen image seen through a
# panning, zooming window, out/synthetic-camera-4s.avi). The frames go to out/faces.jsonl, the
# per-track events (new / update / end with dwell and best face) to out/tracks.jsonl and each
# track's best face to out/best-faces/; with --output the video with every face drawn on it
# (taconiteoverlay) goes to FILE.mp4 (H.264). With --gallery the faces are named from G (a gallery
# made with build/tools/gallery/taconite-gallery create for the same model; --threshold sets
# taconiteidentify's, default the model's description threshold, else 0.4); --keep-unknowns keeps each
# track that ends unknown in G for review (taconite-gallery unknowns / name: docs/gstreamer.md,
# "Keeping unknown faces").
set -euo pipefail
cd "$(dirname "$0")"
bundle=""
backend=auto
detector=""
video_out=""
gallery_args=()
model_args=()
video=()
while [ $# -gt 0 ]; do
  case "$1" in
    --model|--bundle) bundle="$2"; shift 2 ;;
    --model-proc) model_args+=(--model-proc "$2"); shift 2 ;;
    --backend) backend="$2"; shift 2 ;;
    --detector) detector="$2"; shift 2 ;;
    --output) video_out="$2"; shift 2 ;;
    --gallery) gallery_args+=(--gallery "$2"); shift 2 ;;
    --threshold) gallery_args+=(--threshold "$2"); shift 2 ;;
    --keep-unknowns) gallery_args+=(--keep-unknowns); shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *)
      # Compatibility: a bundle directory as the only argument.
      if [ -f "$1/manifest.txt" ]; then bundle="$1"; else video+=("$1"); fi
      shift ;;
  esac
done

scripts/install-deps.sh
build="${BUILD_DIR:-build}"
[ -f "$build/build.ninja" ] || meson setup "$build" -Dbuildtype=release
# What the main job needs, the CLIs the README uses (build/tools/run_ir18, taconite-gallery) and,
# when introspection is configured, the GstTaconite typelib of the Python reader (docs/install.md).
typelib=()
if ninja -C "$build" -t query gst/meta/GstTaconite-1.0.typelib >/dev/null 2>&1; then
  typelib=(gst/meta/GstTaconite-1.0.typelib)
fi
ninja -C "$build" tools/taconite-mkbundle gst/plugin/libgsttaconite.so tools/run_ir18 tools/run_ir101 \
  tools/gallery/taconite-gallery ${typelib[@]+"${typelib[@]}"}

if [ -z "$bundle" ]; then
  bundle=out/ir18-test-bundle
  if [ ! -f "$bundle/manifest.txt" ]; then
    echo "No bundle given: writing a test bundle (seeded, calibrated random weights) to $bundle"
    "$build/tools/taconite-mkbundle" --model ir18 --out "$bundle"
  fi
  cat <<'NOTE'
NOTE: this bundle has synthetic weights. The faces are real and really found, cropped and run
through IR-18, but the embeddings are MEANINGLESS as identities (same person != similar vectors).
For real identities use a bundle with real weights (docs/models.md: the prebuilt NPU2 bundles, or
taconite-import on an AdaFace checkpoint / IR-family ONNX model) and run
  ./demo.sh [VIDEO] --bundle /path/to/adaface-ir18-bundle
NOTE
fi

mkdir -p out
if [ -n "$detector" ]; then
  front="taconitedetect (YuNet $detector)"
  detector_args=(--detector "$detector")
else
  front="facedetect -> taconitelandmarks (the slow stock fallback: Haar + dlib; ./demo.sh --detector YUNET.onnx for the DNN front end, docs/models.md)"
  detector_args=()
fi
video_args=()
if [ -n "$video_out" ]; then
  mkdir -p "$(dirname "$video_out")"
  video_args=(--video-out "$video_out")
fi
echo "Running pipeline (a): ${video[*]:-synthetic video from astronaut.png} -> $front -> taconitetrack -> taconiteadaface -> taconitepublish (backend $backend)"
BUILD_DIR="$build" pipelines/publish-video-faces.sh --model "$bundle" ${model_args[@]+"${model_args[@]}"} \
  --backend "$backend" \
  --output out/faces.jsonl --tracks out/tracks.jsonl --best-faces out/best-faces \
  ${detector_args[@]+"${detector_args[@]}"} ${video_args[@]+"${video_args[@]}"} \
  ${gallery_args[@]+"${gallery_args[@]}"} \
  ${video[@]+"${video[@]:0:1}"}
echo "$(wc -l < out/faces.jsonl) frames written to out/faces.jsonl (one JSON document per frame, schema" \
  "taconite-faces/1 in docs/faces-message.md: stream, frame, PTS, running time, UTC time, and per face box," \
  "track id, landmarks, aligned, status, norm, the embedding; with --gallery label and label_state)"
echo "$(wc -l < out/tracks.jsonl) track events written to out/tracks.jsonl (schema taconite-tracks/1 in" \
  "docs/tracks-message.md: new, update, end with first/last time, dwell_s and the best face in out/best-faces/)"
# With a gallery, the names the track events ended with.
[ ${#gallery_args[@]} -eq 0 ] || /usr/bin/python3 pipelines/who_was_seen.py out/tracks.jsonl
if [ -n "$video_out" ]; then
  echo "The video with each face's box, landmarks and track id drawn on it: $video_out (H.264 in MP4;" \
    "colours by identity state in docs/gstreamer.md, taconiteoverlay)"
fi
