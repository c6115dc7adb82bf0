#!/usr/bin/env bash
# The test command: installs missing Debian packages, builds with warnings as errors, runs every suite.
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh
build=build-test
[ -f "$build/build.ninja" ] || meson setup "$build" -Dwerror=true -Dbuildtype=debugoptimized
ninja -C "$build"
meson test -C "$build" --print-errorlogs --num-processes 2 "$@"
