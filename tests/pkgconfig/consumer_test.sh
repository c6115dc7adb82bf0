#!/bin/sh
# Installs the library's runtime and development files into a scratch DESTDIR and builds a tiny
# consumer with nothing but `pkg-config --cflags --libs taconite-adaface` and plain g++ (no -std
# flag): the .pc file must carry what the public headers need (C++20 for std::span).
# Usage: consumer_test.sh <build-dir> <consumer.cpp>
set -eu
build=$1
source=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
meson install -C "$build" --no-rebuild --quiet --destdir "$scratch/root" --tags devel,runtime >"$scratch/install.log" 2>&1 ||
  { cat "$scratch/install.log"; exit 1; }
pcdir=$(dirname "$(find "$scratch/root" -name taconite-adaface.pc | head -n 1)")
export PKG_CONFIG_SYSROOT_DIR="$scratch/root" PKG_CONFIG_LIBDIR="$pcdir"
cflags=$(pkg-config --cflags taconite-adaface)
libs=$(pkg-config --libs taconite-adaface)
echo "cflags: $cflags"
echo "libs: $libs"
# shellcheck disable=SC2086 # the flags are words
g++ $cflags "$source" -o "$scratch/consumer" $libs
libdir=$(pkg-config --libs-only-L taconite-adaface | sed 's/^ *-L//; s/ *$//')
LD_LIBRARY_PATH="$libdir" "$scratch/consumer"
