#!/usr/bin/python3
"""Checks taconitepublish messages=tracks output: taconite-tracks/1 events.

Usage: check_track_events.py EVENTS.jsonl SCHEMA.json [--frames FACES.jsonl]

Every line must be standard JSON (NaN and Infinity refused) valid against the schema
(docs/tracks-message.schema.json, jsonschema). Per track (its `uid`: one stream and one track id)
the events come in order: one `new` first, `update`s, one `end` last (the file was written up to
EOS, so every track ended); `epoch_s` (and an end's `first_epoch_s` / `last_epoch_s`) is the
instant of its ISO time; an `end` is never `pending` and says `identified` whenever it has a
label_state; a best face's file is named by the uid. With --frames (taconite-faces/1 documents of the same frames, publish-empty=true): the
track holding the most faces of a stream (the demo's astronaut) has exactly one `new` and one
`end`, its `frames` is the number of frames that carry its id and its `dwell_s` is the PTS span
of those frames within one frame interval, and the faces' `track_uid` (taconitetrack's) is the
events' `uid`.
"""
import argparse
import datetime
import json
import os
import re
import sys

import jsonschema


def refuse_constant(name):
    raise ValueError(f"{name} is not JSON (a non-finite number must be null)")


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            yield f"{path}:{number}", json.loads(line, parse_constant=refuse_constant)


def epoch_of(utc):
    """Seconds since 1970 of an ISO `utc` member, exactly to the microsecond."""
    moment = datetime.datetime.strptime(utc, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    return moment.timestamp()


def check_epochs(where, event):
    """epoch_s (and an end's first_epoch_s / last_epoch_s) name the same instant as the ISO times."""
    pairs = [("utc", "epoch_s")]
    if event["event"] == "end":
        pairs += [("first_utc", "first_epoch_s"), ("last_utc", "last_epoch_s")]
    for iso, epoch in pairs:
        assert epoch in event, f"{where}: no {epoch}"
        assert abs(event[epoch] - epoch_of(event[iso])) < 1e-6, \
            f"{where}: {epoch} {event[epoch]} is not {iso} {event[iso]}"


def check_events(path, schema_path):
    with open(schema_path, encoding="utf-8") as f:
        validator = jsonschema.Draft202012Validator(json.load(f))
    by_uid = {}
    for where, event in read_lines(path):
        errors = sorted(validator.iter_errors(event), key=str)
        assert not errors, f"{where}: {errors[0].message} at {list(errors[0].absolute_path)}"
        assert "uid" in event, f"{where}: no uid"
        check_epochs(where, event)
        by_uid.setdefault(event["uid"], []).append((where, event))
    assert by_uid, f"{path}: no track events"
    tracks = {}  # (stream, track id) -> events of every track that had that id
    for uid, events in by_uid.items():
        kinds = [e["event"] for _, e in events]
        first = events[0][1]
        assert kinds[0] == "new" and kinds[-1] == "end" and kinds.count("new") == 1 and kinds.count("end") == 1, \
            f"track {uid}: events {' '.join(kinds)}"
        assert {(e["stream"], e["track_id"]) for _, e in events} == {(first["stream"], first["track_id"])}, \
            f"track {uid}: more than one stream or track id"
        stream_part = re.sub(r"[^A-Za-z0-9._-]", "_", first["stream"])
        stream_part = "_" + stream_part if not stream_part or stream_part[0] == "." else stream_part
        for where, e in events:
            if e["event"] == "end":
                assert e["last_pts_ns"] is None or e["first_pts_ns"] <= e["last_pts_ns"], where
                assert e["label_state"] != "pending", f"{where}: a track ended pending"
                assert (e.get("identified") is None) == (e["label_state"] is None), \
                    f"{where}: identified {e.get('identified')} with label_state {e['label_state']}"
            if e["best_face"] and "path" in e["best_face"]:
                name = os.path.basename(e["best_face"]["path"])
                assert name == f"{stream_part}-{uid}.jpg", f"{where}: best face {name} is not named by the uid"
        tracks.setdefault((first["stream"], first["track_id"]), []).extend(events)
    return tracks


def check_against_frames(tracks, frames_path):
    seen = {}  # (stream, track) -> PTS of the frames carrying it
    uids = {}  # (stream, track) -> the track_uid values of its faces
    interval = {}
    last_pts = {}
    for _, doc in read_lines(frames_path):
        stream = doc["stream"]
        if doc["pts_ns"] is not None and stream in last_pts:
            interval[stream] = min(interval.get(stream, 1 << 62), doc["pts_ns"] - last_pts[stream])
        last_pts[stream] = doc["pts_ns"]
        for face in doc["faces"]:
            if face["track_id"] is not None:
                seen.setdefault((stream, face["track_id"]), set()).add(doc["pts_ns"])
            if face.get("track_uid") is not None:  # taconitetrack's uid: the track events' uid
                uids.setdefault((stream, face["track_id"]), set()).add(face["track_uid"])
    for stream in {s for s, _ in seen}:
        key = max((k for k in seen if k[0] == stream), key=lambda k: len(seen[k]))
        events = [e for _, e in tracks.get(key, [])]
        kinds = [e["event"] for e in events]
        assert kinds.count("new") == 1 and kinds.count("end") == 1, \
            f"{stream} track {key[1]} ({len(seen[key])} frames): events {' '.join(kinds)}"
        end = events[-1]
        span = (max(seen[key]) - min(seen[key])) / 1e9
        frame_s = interval[stream] / 1e9
        assert abs(end["dwell_s"] - span) <= frame_s, \
            f"{stream} track {key[1]}: dwell_s {end['dwell_s']} but its frames span {span} s (frame {frame_s} s)"
        assert end["frames"] == len(seen[key]), \
            f"{stream} track {key[1]}: frames {end['frames']}, {len(seen[key])} seen"
        if key in uids:
            assert uids[key] == {end["uid"]}, f"{stream} track {key[1]}: faces' track_uid {uids[key]}, events' {end['uid']}"
        print(f"{stream}: track {key[1]}: new + {kinds.count('update')} update + end, dwell {end['dwell_s']:.3f} s "
              f"over {end['frames']} frames (span {span:.3f} s)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("events")
    parser.add_argument("schema")
    parser.add_argument("--frames")
    args = parser.parse_args()
    tracks = check_events(args.events, args.schema)
    if args.frames:
        check_against_frames(tracks, args.frames)
    print(f"{args.events}: {sum(len(v) for v in tracks.values())} events of {len(tracks)} tracks valid")


if __name__ == "__main__":
    sys.exit(main())
