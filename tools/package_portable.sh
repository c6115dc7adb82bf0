#!/bin/sh
# Assembles the portable directory of npu-xrt.md §10 / §7:
#   <outdir>/<binary>           with run path $ORIGIN/lib
#   <outdir>/<binary>.sh        launcher setting XILINX_XRT to <outdir> (needed by XRT 2.15-2.23; ignored by >= 2.25)
#   <outdir>/lib/               libtaconite-adaface.so.* and, when the program uses XRT, libxrt_coreutil.so.2,
#                               libxrt_core.so.2 and libxrt_driver_xdna.so.2 copied as regular files
#   <outdir>/bundle/            the model bundle, when given
# The XRT libraries come from $XRT_ROOT/lib (default /opt/xilinx/xrt/lib); all three must be from one
# matching XRT + plug-in build. A direct-only program (npu-direct, no XRT) needs none of them.
# Not shippable: the amdxdna driver and firmware, /dev/accel/accel0 permissions, the memlock limit,
# glibc/libstdc++/libuuid.
#
# usage: package_portable.sh <binary> <outdir> [bundle_dir]
#   TACONITE_PACKAGE_XRT=1   copy the XRT libraries even if the program does not link libxrt_coreutil
set -eu

die() { echo "package_portable: $*" >&2; exit 1; }

[ $# -ge 2 ] && [ $# -le 3 ] || die "usage: package_portable.sh <binary> <outdir> [bundle_dir]"
binary=$1
outdir=$2
bundle=${3:-}
xrt_libdir=${XRT_ROOT:-/opt/xilinx/xrt}/lib

[ -f "$binary" ] && [ -x "$binary" ] || die "$binary is not an executable file"
command -v readelf >/dev/null || die "readelf (binutils) is needed"
[ -z "$bundle" ] || [ -f "$bundle/manifest.txt" ] || die "$bundle is not a bundle directory (no manifest.txt)"

# The loader must find lib/ next to the binary without LD_LIBRARY_PATH.
runpath=$(readelf -d "$binary" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p')
case ":$runpath:" in
  *':$ORIGIN/lib:'*) ;;
  *) die "$binary has run path '$runpath' without \$ORIGIN/lib; link it with -Wl,-rpath,'\$ORIGIN/lib' (meson: build_rpath/install_rpath) or run: patchelf --add-rpath '\$ORIGIN/lib' $binary" ;;
esac

mkdir -p "$outdir/lib"
name=$(basename "$binary")
cp "$binary" "$outdir/$name"

# libtaconite-adaface (when the program links it dynamically), resolved where the loader finds it now.
uses_xrt=${TACONITE_PACKAGE_XRT:-0}
libs=$(ldd "$binary" 2>/dev/null | sed -n 's/^[[:space:]]*\(libtaconite-adaface[^ ]*\) => \([^ ]*\).*/\1 \2/p')
if [ -n "$libs" ]; then
  echo "$libs" | while read -r soname path; do
    [ -f "$path" ] || die "cannot resolve $soname (found '$path')"
    cp "$path" "$outdir/lib/$soname"  # plain cp follows symlinks: a regular file under the soname
  done
fi
for object in "$binary" $(echo "$libs" | awk '{print $2}'); do
  if readelf -d "$object" | grep -q 'NEEDED.*\[libxrt_coreutil'; then uses_xrt=1; fi
done

if [ "$uses_xrt" = 1 ]; then
  for lib in libxrt_coreutil.so.2 libxrt_core.so.2 libxrt_driver_xdna.so.2; do
    [ -e "$xrt_libdir/$lib" ] || die "$xrt_libdir/$lib not found (set XRT_ROOT to an XRT >= 2.15 install with the amdxdna plug-in)"
    cp "$xrt_libdir/$lib" "$outdir/lib/$lib"  # exact .so.2 names: the plug-in scan matches libxrt_driver_*.so.2
  done
fi

cat > "$outdir/$name.sh" <<LAUNCHER
#!/bin/sh
# XRT 2.15-2.23 find their root through XILINX_XRT; >= 2.25 ignore it and use lib/ next to the binary.
here=\$(cd "\$(dirname "\$0")" && pwd)
XILINX_XRT=\$here exec "\$here/$name" "\$@"
LAUNCHER
chmod +x "$outdir/$name.sh"

if [ -n "$bundle" ]; then
  rm -rf "$outdir/bundle"
  cp -r "$bundle" "$outdir/bundle"
fi

echo "packaged $name into $outdir: lib/ = $(ls "$outdir/lib" | tr '\n' ' ')$([ -n "$bundle" ] && echo "; bundle/")"
