#!/usr/bin/env bash
# The main job: install what is missing, build, write a test bundle unless one is given, and run it
# on the default backend (the CPU on a machine without an NPU).
#   ./demo.sh [BUNDLE_DIR]
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh
build=build
[ -f "$build/build.ninja" ] || meson setup "$build" -Dbuildtype=release
ninja -C "$build"

bundle="${1:-}"
if [ -z "$bundle" ]; then
  bundle=out/ir18-test-bundle
  if [ ! -f "$bundle/manifest.txt" ]; then
    echo "No bundle given: writing a test bundle (seeded, calibrated random weights) to $bundle"
    "$build/tools/taconite-mkbundle" --model ir18 --out "$bundle"
  fi
  echo "NOTE: synthetic weights give realistic numerics but meaningless identities."
fi
"$build/tools/run_ir18" "$bundle" "${NREPS:-5}"
