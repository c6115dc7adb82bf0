#!/usr/bin/env bash
# Embeds pre-cropped face images with the taconiteadaface element and prints each embedding and
# the cosine similarity between them.
#
# Usage: pipelines/embed-face-crops.sh [--bundle DIR] [--backend NAME] [IMAGE[:left,top,width,height] ...]
#
# Without images it cuts two faces out of photos Debian ships (python3-skimage's astronaut.png,
# opencv-doc's messi5.jpg) with videocrop inside the pipeline. Without --bundle it writes a
# synthetic IR-tiny test bundle with taconite-mkbundle: its identities are meaningless (random
# weights); pass a real exported bundle for real embeddings.
# BUILD_DIR (default: build) is the meson build directory holding the plugin and tools.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
bundle=""
backend="auto"
images=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) bundle="$2"; shift 2 ;;
    --backend) backend="$2"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) images+=("$1"); shift ;;
  esac
done

# shellcheck source=pipelines/common.sh
. "$here/common.sh"

bundle="$(bundle_or_test_bundle "$bundle")"

if [ ${#images[@]} -eq 0 ]; then
  astronaut=/usr/lib/python3/dist-packages/skimage/data/astronaut.png
  messi=/usr/share/doc/opencv-doc/examples/data/messi5.jpg
  for f in "$astronaut" "$messi"; do
    [ -f "$f" ] || { echo "error: $f missing (apt-get install python3-skimage opencv-doc)" >&2; exit 1; }
  done
  # Face boxes (left,top,width,height) in those photos.
  images=("$astronaut:164,50,120,120" "$messi:214,82,46,46" "$astronaut:172,58,104,104")
fi

exec /usr/bin/python3 "$here/embed_face_crops.py" --bundle "$bundle" --backend "$backend" "${images[@]}"
