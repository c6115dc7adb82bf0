# Sourced by the pipeline scripts: finds the built plugin and, when the caller gave no bundle,
# writes a synthetic IR-tiny test bundle. Expects $root; sets $build and GST_PLUGIN_PATH.
build="${BUILD_DIR:-$root/build}"
plugin_dir="$build/gst/plugin"
if [ ! -f "$plugin_dir/libgsttaconite.so" ]; then
  echo "error: $plugin_dir/libgsttaconite.so not found; build first (meson setup $build && ninja -C $build)" >&2
  exit 1
fi
export GST_PLUGIN_PATH="$plugin_dir${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}"

# Prints the bundle to use: $1 when given, else a synthetic IR-tiny one (meaningless identities).
bundle_or_test_bundle() {
  if [ -n "$1" ]; then echo "$1"; return; fi
  local test_bundle="${TMPDIR:-/tmp}/taconite-ir-tiny-bundle"
  if [ ! -f "$test_bundle/manifest.txt" ]; then
    echo "writing a synthetic IR-tiny test bundle to $test_bundle (meaningless identities)" >&2
    "$build/tools/taconite-mkbundle" --model ir-tiny --out "$test_bundle" --force >&2
  fi
  echo "$test_bundle"
}

# Sets `front` (the face front end, as gst-launch words) and `reinfer_mode` (taconiteadaface's):
# with a YuNet model ($1), taconitedetect on one frame in ${2:-3} and best-shot embedding; without
# one, the stock facedetect -> taconitelandmarks and interval re-embedding.
choose_front_end() {
  if [ -n "$1" ]; then
    front=(taconitedetect model="$1" interval="${2:-3}")
    reinfer_mode=best
  else
    front=(facedetect display=false ! taconitelandmarks)
    reinfer_mode=interval
  fi
}
