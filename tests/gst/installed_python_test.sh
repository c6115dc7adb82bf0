#!/bin/sh
# Installs the build into a scratch DESTDIR inside the build directory and runs the Python reader test
# against the installed files only: the plugin through GST_PLUGIN_PATH, the libraries through
# LD_LIBRARY_PATH, the GstTaconite typelib through GI_TYPELIB_PATH, a private registry.
#   installed_python_test.sh BUILD_DIR PREFIX LIBDIR PYTHON TEST_SCRIPT BUNDLE
set -eu
build=$1 prefix=$2 libdir=$3 python=$4 script=$5 bundle=$6
dest="$build/tests/gst/installed-destdir"
rm -rf "$dest"
meson install -C "$build" --no-rebuild --quiet --destdir "$dest" >/dev/null
case "$libdir" in /*) lib="$dest$libdir" ;; *) lib="$dest$prefix/$libdir" ;; esac
GST_PLUGIN_PATH="$lib/gstreamer-1.0" LD_LIBRARY_PATH="$lib" GI_TYPELIB_PATH="$lib/girepository-1.0" \
  GST_REGISTRY_1_0="$dest/registry.bin" TACONITE_INSTALLED_ROOT="$dest" \
  exec "$python" "$script" "$bundle"
