#!/usr/bin/env bash
# Starts mosquitto on a free loopback port (127.0.0.1 only, a scratch config) with one subscriber
# on every topic, runs taconite-publish-bench against it, and stops both.
#   bench/publish/run_publish_bench.sh [BUILD_DIR] [bench options: --frames N --faces F --rounds R]
set -euo pipefail
build="${1:-build}"
shift || true
dir="$(mktemp -d)"
port="$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
printf 'listener %s 127.0.0.1\nallow_anonymous true\nuser %s\n' "$port" "$(id -un)" > "$dir/mosquitto.conf"
mosquitto_bin="$(command -v mosquitto || echo /usr/sbin/mosquitto)"
"$mosquitto_bin" -c "$dir/mosquitto.conf" 2> "$dir/mosquitto.log" &
broker=$!
sleep 0.5
mosquitto_sub -h 127.0.0.1 -p "$port" -t '#' > /dev/null &
subscriber=$!
trap 'kill $subscriber $broker 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
"$build/bench/publish/taconite-publish-bench" --port "$port" "$@"
