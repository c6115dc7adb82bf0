#!/bin/sh
# gst/examples/read_embeddings.c compiled and run against the build tree, without installing, as
# docs/install.md says: pkg-config reads BUILD_DIR/meson-uninstalled (gsttaconitemeta-1.0's source
# headers and built library), LD_LIBRARY_PATH finds the library, GST_PLUGIN_PATH the plugin. The
# program must print an embedding line for each of its 3 frames, with the library from the build tree.
#   build_tree_c_reader_test.sh BUILD_DIR CC EXAMPLE_SOURCE BUNDLE
set -eu
build=$1 cc=$2 source=$3 bundle=$4
out="$build/tests/gst/build-tree-c-reader"
rm -rf "$out"
mkdir -p "$out"
flags=$(PKG_CONFIG_PATH="$build/meson-uninstalled" pkg-config --cflags --libs gstreamer-1.0 gstreamer-video-1.0 \
  gsttaconitemeta-1.0)
case "$flags" in *"-L$build/gst/meta"*) ;; *) echo "FAIL: pkg-config did not point into $build/gst/meta: $flags"; exit 1 ;; esac
# shellcheck disable=SC2086
"$cc" -std=c11 -Wall -Wextra -Werror "$source" $flags -o "$out/read_embeddings"
export LD_LIBRARY_PATH="$build/gst/meta" GST_PLUGIN_PATH="$build/gst/plugin" GST_REGISTRY_1_0="$out/registry.bin"
ldd "$out/read_embeddings" | grep -q "libgsttaconitemeta-1.0.so.* => $build/gst/meta/" ||
  { echo "FAIL: libgsttaconitemeta-1.0 is not resolved from $build/gst/meta:"; ldd "$out/read_embeddings"; exit 1; }
"$out/read_embeddings" "$bundle" cpu-reference > "$out/lines.txt"
cat "$out/lines.txt"
[ "$(grep -c 'model=.* dim=512 norm=' "$out/lines.txt")" -eq 3 ] || { echo "FAIL: not 3 embedding lines"; exit 1; }
echo "ok: read_embeddings built with $build/meson-uninstalled and run from the build tree"
