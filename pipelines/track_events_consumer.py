#!/usr/bin/python3
"""Prints who was seen, from taconitepublish's track events (schema taconite-tracks/1,
docs/tracks-message.md) on an MQTT broker: one line per ended track,

    camera, time, name, confidence, dwell

(time: when the track was first seen, UTC; name: the decided label, "unknown" when decided
unknown (also a track no embedding of which was judged), "-" without taconiteidentify; dwell in seconds).

Usage: track_events_consumer.py [--host HOST] [--port PORT] [--topic TOPIC] [--count N]
                                [--timeout S]

--topic defaults to taconite/+/tracks (every camera with the default tracks-topic). With --count
it exits after N end events, with --timeout after S seconds without a message (status 1 when it
then saw fewer than --count). Needs python3-paho-mqtt (Debian).
"""
import argparse
import json
import sys
import time

import paho.mqtt.client as mqtt

SCHEMA = "taconite-tracks/1"


def name_of(event):
    state = event.get("label_state")
    if event.get("label") is not None:
        return event["label"]
    return state if state else "-"


def line_of(event):
    confidence = event.get("confidence")
    dwell = event.get("dwell_s")
    return ", ".join([event["stream"], event["first_utc"], name_of(event),
                      "-" if confidence is None else f"{confidence:.2f}",
                      "-" if dwell is None else f"{dwell:.1f}s"])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="localhost")
    parser.add_argument("--port", type=int, default=1883)
    parser.add_argument("--topic", default="taconite/+/tracks")
    parser.add_argument("--count", type=int, default=0, help="exit after this many end events (0: never)")
    parser.add_argument("--timeout", type=float, default=0, help="exit after this many seconds without a message")
    args = parser.parse_args()

    state = {"ended": 0, "last": time.monotonic()}

    def on_connect(client, userdata, flags, rc):
        if rc != 0:
            sys.exit(f"the broker {args.host}:{args.port} refused the connection (code {rc})")
        client.subscribe(args.topic, qos=1)

    def on_subscribe(client, userdata, mid, granted_qos):
        print(f"subscribed to {args.topic} on {args.host}:{args.port}", file=sys.stderr, flush=True)

    def on_message(client, userdata, message):
        state["last"] = time.monotonic()
        try:
            event = json.loads(message.payload)
        except ValueError as error:
            print(f"{message.topic}: not JSON ({error}); ignored", file=sys.stderr)
            return
        if not isinstance(event, dict) or event.get("schema") != SCHEMA:
            return  # another schema (taconite-faces/1, a newer version): not ours to read
        if event.get("event") != "end":
            return
        print(line_of(event), flush=True)
        state["ended"] += 1

    client = mqtt.Client()
    client.on_connect = on_connect
    client.on_message = on_message
    client.on_subscribe = on_subscribe
    client.connect(args.host, args.port)
    client.loop_start()
    try:
        while not (args.count and state["ended"] >= args.count):
            if args.timeout and time.monotonic() - state["last"] > args.timeout:
                break
            time.sleep(0.05)
    except KeyboardInterrupt:
        pass
    finally:
        client.loop_stop()
        client.disconnect()
    return 1 if args.count and state["ended"] < args.count else 0


if __name__ == "__main__":
    sys.exit(main())
