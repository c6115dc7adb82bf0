#!/usr/bin/python3
"""pipelines/track_events_consumer.py's lines: "camera, time, name, confidence, dwell" for a known,
an unknown, a still-pending and an unidentified track (no broker needed).

Usage: track_events_consumer_test.py PIPELINES_DIR
"""
import sys

sys.path.insert(0, sys.argv[1])
import track_events_consumer as consumer  # noqa: E402

END = {"schema": "taconite-tracks/1", "event": "end", "stream": "door1", "track_id": 3,
       "first_utc": "2026-12-01T12:27:04.879027Z", "dwell_s": 1.25, "label_state": None, "label": None,
       "label_id": None, "confidence": None}
cases = [
    (dict(END, label_state="known", label="astronaut", label_id=1, confidence=0.834),
     "door1, 2026-12-01T12:27:04.879027Z, astronaut, 0.83, 1.2s"),
    (dict(END, label_state="unknown", label="unknown", label_id=-1, confidence=0.31),
     "door1, 2026-12-01T12:27:04.879027Z, unknown, 0.31, 1.2s"),
    (dict(END, label_state="unknown"), "door1, 2026-12-01T12:27:04.879027Z, unknown, -, 1.2s"),
    (dict(END, label_state="pending"), "door1, 2026-12-01T12:27:04.879027Z, pending, -, 1.2s"),
    (dict(END, dwell_s=None), "door1, 2026-12-01T12:27:04.879027Z, -, -, -"),
]
for event, expected in cases:
    line = consumer.line_of(event)
    assert line == expected, f"{event}: {line!r}, expected {expected!r}"
print(f"{len(cases)} lines as expected")
