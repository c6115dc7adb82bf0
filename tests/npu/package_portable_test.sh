#!/bin/sh
# tools/package_portable.sh: layout, regular-file copies under the .so.2 names, the launcher, the
# bundle, refusal of a binary without $ORIGIN/lib, and that the packaged program runs from its
# directory with no LD_LIBRARY_PATH.
# usage: package_portable_test.sh <package_portable.sh> <probe-with-origin-rpath> <probe-without-rpath>
set -eu
script=$1 probe=$2 plain=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# A fake XRT install whose .so.2 names are symlinks, as in a real one.
mkdir -p "$work/xrt/lib" "$work/bundle"
for lib in libxrt_coreutil libxrt_core libxrt_driver_xdna; do
  echo "$lib payload" > "$work/xrt/lib/$lib.so.2.25.0"
  ln -s "$lib.so.2.25.0" "$work/xrt/lib/$lib.so.2"
done
echo "param model ir18" > "$work/bundle/manifest.txt"

XRT_ROOT=$work/xrt TACONITE_PACKAGE_XRT=1 "$script" "$probe" "$work/out" "$work/bundle"
name=$(basename "$probe")
[ -x "$work/out/$name" ] || fail "binary not copied"
[ -x "$work/out/$name.sh" ] || fail "launcher missing"
[ -f "$work/out/bundle/manifest.txt" ] || fail "bundle not copied"
for lib in libxrt_coreutil.so.2 libxrt_core.so.2 libxrt_driver_xdna.so.2; do
  [ -f "$work/out/lib/$lib" ] && [ ! -L "$work/out/lib/$lib" ] || fail "lib/$lib is not a regular file"
done
grep -q "libxrt_driver_xdna payload" "$work/out/lib/libxrt_driver_xdna.so.2" || fail "wrong plug-in content"
ls "$work/out/lib" | grep -q '^libtaconite-adaface\.so\.' || fail "libtaconite-adaface not shipped"

# The packaged program finds libtaconite-adaface in lib/ by itself.
env -u LD_LIBRARY_PATH "$work/out/$name" | grep -q '^cpu-reference$' || fail "packaged binary does not run"
env -u LD_LIBRARY_PATH "$work/out/$name.sh" | grep -q '^cpu-reference$' || fail "launcher does not run"

# Missing XRT libraries and a binary without $ORIGIN/lib are refused with a reason.
rm "$work/xrt/lib/libxrt_driver_xdna.so.2"
if XRT_ROOT=$work/xrt TACONITE_PACKAGE_XRT=1 "$script" "$probe" "$work/out2" 2>"$work/err"; then fail "accepted a missing plug-in"; fi
grep -q "libxrt_driver_xdna.so.2 not found" "$work/err" || fail "unclear missing-plug-in error: $(cat "$work/err")"
if "$script" "$plain" "$work/out3" 2>"$work/err"; then fail "accepted a binary without \$ORIGIN/lib"; fi
grep -q 'without \$ORIGIN/lib' "$work/err" || fail "unclear rpath error: $(cat "$work/err")"
echo "package_portable: all checks passed"
