#!/bin/sh
# Issue 33's "memcheck over the restarts": gst-launch-1.0 taconitecamera ! taconitetrack ! fakesink under
# valgrind memcheck while a real RTSP server on 127.0.0.1 (tests/camera/rtsp_server.py) is killed and started
# again RESTARTS times; then Ctrl-C (EOS) ends the pipeline. Prints the lost/back messages counted from
# gst-launch's -m output, memcheck's error summary and leak summary; exits 1 on a memcheck error or a definite
# leak (tests/gst/gst.supp: GLib's and GStreamer's known one-time allocations; restarts.supp: the dynamic
# loader's). GIO's proxy resolver is the dummy one: libproxy (the default) throws and catches a C++ exception
# per connection, which libunwind unwinds in ways memcheck reports as invalid reads of the stack (not ours).
# Takes ~1 min per 4 restarts.
# Run from the source root after a build:
#   bench/camera/camera_restarts_valgrind.sh [BUILD_DIR] [RESTARTS] [jpeg|h264]
set -eu
build=${1:-build-test}
restarts=${2:-20}
codec=${3:-jpeg}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
server_pid=""
trap 'kill -9 $server_pid 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

start_server() {
  : > "$work/server.out"
  /usr/bin/python3 "$root/tests/camera/rtsp_server.py" "$port" --codec "$codec" > "$work/server.out" 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do grep -q '^ready' "$work/server.out" && return 0; sleep 0.1; done
  echo "the RTSP server did not start: $(cat "$work/server.out")" >&2
  exit 2
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; codec $codec; $restarts restarts"
start_server
export GST_PLUGIN_PATH="$root/$build/gst/plugin" GST_REGISTRY_1_0="$work/registry.bin" GST_DEBUG='taconite*:1'
export G_SLICE=always-malloc G_DEBUG=gc-friendly GIO_USE_PROXY_RESOLVER=dummy
gst-inspect-1.0 taconitecamera > /dev/null  # the registry, scanned outside valgrind
valgrind --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite --num-callers=30 \
  --suppressions="$root/tests/gst/gst.supp" --suppressions="$here/restarts.supp" --log-file="$work/memcheck.log" \
  gst-launch-1.0 -m -e taconitecamera stream=door1 uri="rtsp://127.0.0.1:$port/cam" retry-interval=1 timeout=15 ! \
  taconitetrack ! fakesink sync=false > "$work/launch.out" 2>&1 &
launch_pid=$!
sleep 30  # valgrind's start, then frames
for i in $(seq "$restarts"); do
  kill -9 "$server_pid"; wait "$server_pid" 2>/dev/null || true
  sleep 3
  start_server
  sleep 10
  echo "restart $i: lost $(grep -c 'state=(string)lost' "$work/launch.out" || true)," \
       "back $(grep -c 'state=(string)back' "$work/launch.out" || true)"
done
kill -INT "$launch_pid"
wait "$launch_pid" || true
lost=$(grep -c 'state=(string)lost' "$work/launch.out" || true)
back=$(grep -c 'state=(string)back' "$work/launch.out" || true)
echo "taconite-camera messages: $lost lost, $back back ($restarts restarts)"
grep -E 'ERROR SUMMARY|definitely lost|indirectly lost|possibly lost' "$work/memcheck.log" | sed 's/^==[0-9]*== //'
if ! grep -q 'ERROR SUMMARY: 0 errors' "$work/memcheck.log"; then
  cp "$work/memcheck.log" /tmp/camera-restarts-memcheck.log
  echo "memcheck found errors: /tmp/camera-restarts-memcheck.log" >&2
  exit 1
fi
[ "$lost" -eq "$restarts" ] && [ "$back" -eq "$restarts" ] || { echo "expected $restarts lost/back pairs" >&2; exit 1; }
