#!/bin/sh
# Issue 33's reconnection targets with a real RTSP server on 127.0.0.1 (gst-rtsp-server, JPEG or H.264):
# the server killed and started again N times (default 20) under one taconitecamera ! taconitetrack
# pipeline; per restart the seconds from the server listening again to the next frame (target: within
# retry-interval + 2 s = 3 s), the outage, the process's RSS and threads (targets: 20 restarts add at
# most 5 MB RSS and no thread). The checks are camera_servers_test.py's (it fails on a missed target but
# RSS, which it reports). Run from the source root after a build:
#   bench/camera/camera_restarts.sh [BUILD_DIR] [RESTARTS] [jpeg|h264] ["CAMERA PROPERTIES"]
set -eu
build=${1:-build-test}
restarts=${2:-20}
codec=${3:-jpeg}
camera=${4:-}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; codec $codec; $camera"
GST_REGISTRY_1_0="$build/tests/camera/registry-bench.bin" GST_DEBUG='taconite*:1' \
  exec /usr/bin/python3 "$(dirname "$0")/../../tests/camera/camera_servers_test.py" "$build/gst/plugin" \
  --only restarts --restarts "$restarts" --codec "$codec" --camera "$camera" --report
