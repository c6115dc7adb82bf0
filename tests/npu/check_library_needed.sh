#!/bin/sh
# Checks with `readelf -d` that a library NEEDs only the C/C++ runtime (glibc, libstdc++,
# libgcc_s, libm, libgomp for OpenMP) plus the libraries given as extra arguments (the
# optional backends this build enabled). A direct-only build passes no extras: npu-direct
# itself adds no dependency.
# usage: check_library_needed.sh <library.so> [allowed-soname-prefix...]
set -eu
lib=$1
shift
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ -n "$needed" ] || { echo "no NEEDED entries in $lib (not a shared library?)"; exit 1; }
status=0
for soname in $needed; do
  case $soname in
    libc.so.*|libm.so.*|libstdc++.so.*|libgcc_s.so.*|libgomp.so.*|ld-linux-x86-64.so.*) continue ;;
  esac
  allowed=no
  for extra in "$@"; do
    case $soname in "$extra"*) allowed=yes ;; esac
  done
  if [ $allowed = no ]; then
    echo "unexpected NEEDED entry: $soname"
    status=1
  fi
done
echo "NEEDED of $(basename "$lib"): $(echo $needed)"
exit $status
