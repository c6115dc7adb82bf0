#!/usr/bin/env bash
# A live camera through the fast front end, kept running when the camera goes away:
#   taconitecamera (reconnects with backoff, hands on the newest frame) -> videoconvert ->
#   taconitedetect (YuNet, one frame in 3) -> taconitetrack ->
#   taconiteadaface reinfer-mode=best max-queued=1 max-embeddings=1 async-tracks=true (the newest frame, one new
#   face at a time, tracked faces embedded in the background: a frame never waits for the engine) ->
#   [taconiteidentify] -> taconitepublish messages=both (faces and track events, JSON lines)
# While it runs, the camera's outages are printed as they happen (taconite-camera messages: lost
# with the reason, back with the outage); each open track's end event then says camera-lost.
#
# Usage: pipelines/live-camera.sh --uri URI --detector YUNET.onnx [--stream NAME]
#            [--credentials FILE] [--model DIR|FILE.onnx] [--gallery G] [--output FILE.jsonl]
#            [--seconds S] [--latency MS] [--protocols tcp|udp|auto] [--retry-interval S] [--timeout S]
#
# URI: rtsp://, rtsps://, http(s)://, v4l2:///dev/videoN or file:// (docs/cameras.md); a password
# goes in --credentials FILE (user name line, password line, chmod 600), never in the uri.
# --detector is OpenCV Zoo's face_detection_yunet_2023mar.onnx (docs/models.md); without it the
# slow stock fallback facedetect -> taconitelandmarks runs. --model as in publish-video-faces.sh
# (default: a synthetic IR-tiny test bundle, meaningless identities). --seconds stops the run
# after S seconds with an EOS (every open track then ends "eos"); without it, Ctrl-C does.
# Output: FILE.jsonl (default faces.jsonl) holds the faces documents and the track events.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
uri=""
stream=door1
credentials=""
bundle=""
detector=""
gallery=""
output=faces.jsonl
seconds=""
camera=(latency=200 protocols=tcp retry-interval=2 timeout=5)
while [ $# -gt 0 ]; do
  case "$1" in
    --uri) uri="$2"; shift 2 ;;
    --stream) stream="$2"; shift 2 ;;
    --credentials) credentials="$2"; shift 2 ;;
    --model|--bundle) bundle="$2"; shift 2 ;;
    --detector) detector="$2"; shift 2 ;;
    --gallery) gallery="$2"; shift 2 ;;
    --output) output="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --latency) camera[0]="latency=$2"; shift 2 ;;
    --protocols) camera[1]="protocols=$2"; shift 2 ;;
    --retry-interval) camera[2]="retry-interval=$2"; shift 2 ;;
    --timeout) camera[3]="timeout=$2"; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done
[ -n "$uri" ] || { echo "--uri URI is needed (--help)" >&2; exit 2; }

# shellcheck source=pipelines/common.sh
. "$here/common.sh"
bundle="$(bundle_or_test_bundle "$bundle")"
source=(taconitecamera uri="$uri" stream="$stream" "${camera[@]}")
[ -z "$credentials" ] || source+=(credentials-file="$credentials")
choose_front_end "$detector"
identify=()
[ -z "$gallery" ] || identify=(taconiteidentify gallery="$gallery" model="$bundle" stream="$stream" !)
pipeline=("${source[@]}" ! videoconvert ! "${front[@]}" ! taconitetrack !
  taconiteadaface model="$bundle" input-mode=rois reinfer-mode="$reinfer_mode" max-queued=1 max-embeddings=1 async-tracks=true !
  "${identify[@]}"
  taconitepublish method=file location="$output" stream="$stream" messages=both ! fakesink sync=false)
echo "gst-launch-1.0 -e ${pipeline[*]}" >&2
run=(gst-launch-1.0 -e -m "${pipeline[@]}")
# -e: an interrupt (Ctrl-C, or --seconds' SIGINT) sends EOS, so the open tracks end and the file is
# complete. Of gst-launch's output, the camera's messages, warnings and errors are shown.
if [ -n "$seconds" ]; then run=(timeout -s INT -k 20 "$seconds" "${run[@]}"); fi
set +e +o pipefail
"${run[@]}" 2> >(grep -v -e 'haarcascade_mcs_' >&2) |
  grep --line-buffered -e 'taconite-camera,' -e '^WARNING' -e '^ERROR' -e '^INFO' -e 'Camera '
status=${PIPESTATUS[0]}
set -e -o pipefail
# timeout's exit 124 after its SIGINT is the planned end of a --seconds run.
if [ -n "$seconds" ] && [ "$status" -eq 124 ]; then status=0; fi
echo "faces and track events: $output" >&2
exit "$status"
