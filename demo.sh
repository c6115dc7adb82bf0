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
#   ./demo.sh --app --detector YUNET.onnx [VIDEO] [--model M] [--gallery G] [--threshold T]
# --app runs the demo through taconite-run instead (docs/app.md): a config out/app-demo.yaml naming
# the video as camera "demo" (file://), run with --once; the track events go to out/app-events.jsonl.
set -euo pipefail
cd "$(dirname "$0")"
bundle=""
backend=auto
detector=""
video_out=""
gallery_args=()
model_args=()
video=()
app=0
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
    --app) app=1; shift ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
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
if [ "$app" = 1 ]; then
  # The same video through taconite-run: one camera from a config file, --once ends with the recording.
  [ -n "$detector" ] || { echo "--app needs --detector YUNET.onnx (taconite-run's chain; docs/models.md)" >&2; exit 2; }
  ninja -C "$build" app/run/taconite-run
  if [ ${#video[@]} -eq 0 ]; then
    video=(out/synthetic-camera-4s.avi)
    [ -f "${video[0]}" ] || /usr/bin/python3 pipelines/make_demo_video.py "${video[0]}" --seconds 4
  fi
  gallery="" threshold=""
  for ((i = 0; i < ${#gallery_args[@]}; i++)); do
    case "${gallery_args[$i]}" in
      --gallery) gallery="${gallery_args[$((i + 1))]}" ;;
      --threshold) threshold="${gallery_args[$((i + 1))]}" ;;
    esac
  done
  abs() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
  rm -f out/app-events.jsonl
  {
    echo "# Written by ./demo.sh --app: the demo video as one camera (docs/app.md)."
    echo "model: \"$(abs "$bundle")\""
    echo "detector: \"$(abs "$detector")\""
    echo "backend: $backend"
    [ -z "$gallery" ] || echo "gallery: \"$(abs "$gallery")\""
    [ -z "$threshold" ] || echo "threshold: $threshold"
    echo "storage: {events_file: app-events.jsonl}"
    echo "cameras:"
    echo "  demo: {uri: \"file://$(abs "${video[0]}")\", detect_interval: 3}"
  } > out/app-demo.yaml
  echo "Running the demo through taconite-run: $build/app/run/taconite-run --once out/app-demo.yaml"
  OMP_WAIT_POLICY=passive "$build/app/run/taconite-run" --once out/app-demo.yaml
  echo "$(wc -l < out/app-events.jsonl) track events written to out/app-events.jsonl (schema taconite-tracks/1," \
    "docs/tracks-message.md); the config: out/app-demo.yaml"
  [ -z "$gallery" ] || /usr/bin/python3 pipelines/who_was_seen.py out/app-events.jsonl
  exit 0
fi
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
