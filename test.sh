#!/usr/bin/env bash
# The test command: installs missing Debian packages, builds with warnings as errors, runs every suite.
#   ./test.sh [meson test arguments, e.g. --suite unit]
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh
build=build-test
[ -f "$build/build.ninja" ] || meson setup "$build" -Dwerror=true -Dbuildtype=debugoptimized
ninja -C "$build"
# libgomp's busy-waiting threads would steal the 2 cores from parallel tests.
export OMP_WAIT_POLICY=passive
set +e
meson test -C "$build" --print-errorlogs --num-processes 2 "$@" 2>&1 | tee "$build/test-summary.txt"
status=${PIPESTATUS[0]}
set -e
count() { awk -v key="$1:" '$1 == key { print $2 }' "$build/test-summary.txt" | tail -n 1; }
echo "meson: $(count Ok) passed, $(( $(count Fail) + $(count Timeout) )) failed, $(count Skipped) skipped"
exit "$status"
