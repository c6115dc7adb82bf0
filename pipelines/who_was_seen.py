#!/usr/bin/python3
"""Prints who was seen, from taconitepublish's track events in a JSON-lines file (schema
taconite-tracks/1, docs/tracks-message.md): each name with the tracks that ended with it, and
how many ended unknown.

Usage: who_was_seen.py EVENTS.jsonl
"""
import collections
import json
import sys


def main(path):
    ended = collections.Counter()
    with open(path, encoding="utf-8") as f:
        for line in f:
            event = json.loads(line)
            if event.get("event") == "end":
                ended[event.get("label") if event.get("label_state") == "known" else "(unknown)"] += 1
    names = [f"{name} ({count} track{'s' if count > 1 else ''})" for name, count in ended.most_common()
             if name != "(unknown)"]
    print(f"who was seen: {', '.join(names) or 'nobody known'}; {ended['(unknown)']} track(s) ended unknown")


if __name__ == "__main__":
    main(*sys.argv[1:])
