#!/usr/bin/env bash
# The build without any optional external dependency (MQTT, PostgreSQL, FAISS, dlib; docs/install.md):
# configures build-min (or BUILD_DIR) with all four disabled, builds it, checks that the plugin
# registers only the elements that need none of them and that taconitepublish's method=mqtt refuses
# saying why, and runs the suites that are built there.
#   scripts/check_minimal_build.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build-min}"
if [ ! -d "$build" ]; then
  meson setup "$build" -Dwerror=true -Dbuildtype=debugoptimized \
    -Dmqtt=disabled -Dpostgresql=disabled -Dfaiss=disabled -Ddlib=disabled
fi
nice -n 5 ninja -C "$build" -j2

plugin="$build/gst/plugin/libgsttaconite.so"
export GST_REGISTRY_1_0="$PWD/$build/registry-minimal.bin"
features="$(gst-inspect-1.0 "$plugin" | sed -n 's/^ *\(taconite[a-z]*\): .*/\1/p' | sort | tr '\n' ' ')"
expected="taconiteadaface taconitedetect taconiteoverlay taconitepublish "
if [ "$features" != "$expected" ]; then
  echo "check_minimal_build: the plugin registers '$features', expected '$expected'" >&2
  exit 1
fi
if out="$(GST_PLUGIN_PATH_1_0="$build/gst/plugin" gst-launch-1.0 -q fakesrc num-buffers=1 ! \
    taconitepublish method=mqtt ! fakesink 2>&1)"; then
  echo "check_minimal_build: method=mqtt started in a build without MQTT" >&2
  exit 1
fi
if ! grep -q "built without MQTT support" <<< "$out"; then
  echo "check_minimal_build: method=mqtt failed without saying why: $out" >&2
  exit 1
fi
echo "plugin: $features; method=mqtt refuses: built without MQTT support"
OMP_WAIT_POLICY=passive meson test -C "$build" --print-errorlogs --num-processes 2 \
  --suite unit --suite json --suite vision --suite layout --suite docs
