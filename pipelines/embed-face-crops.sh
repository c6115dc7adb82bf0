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
build="${BUILD_DIR:-$root/build}"
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

plugin_dir="$build/gst/plugin"
if [ ! -f "$plugin_dir/libgsttaconite.so" ]; then
  echo "error: $plugin_dir/libgsttaconite.so not found; build first (meson setup $build && ninja -C $build)" >&2
  exit 1
fi
export GST_PLUGIN_PATH="$plugin_dir${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"

if [ -z "$bundle" ]; then
  bundle="${TMPDIR:-/tmp}/taconite-ir-tiny-bundle"
  if [ ! -f "$bundle/manifest.txt" ]; then
    echo "writing a synthetic IR-tiny test bundle to $bundle (meaningless identities)" >&2
    "$build/tools/taconite-mkbundle" --model ir-tiny --out "$bundle" --force >&2
  fi
fi

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
