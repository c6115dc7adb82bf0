#!/usr/bin/python3
"""Prints the demo's summary from taconitepublish's JSON lines (schema taconite-faces/1).

Usage: summarize_faces.py FILE.jsonl --started T [--reuse "HOW EMBEDDINGS ARE REUSED"]
Frames are the documents (the demo sets publish-empty=true, so every frame has one); faces are
the faces with an embedding (status computed or cached). T is when the pipeline started (Unix
time, e.g. bash's $EPOCHREALTIME): the wall time runs from then to now.
"""
import argparse
import json
import sys
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path")
    parser.add_argument("--started", type=float, required=True, help="Unix time the pipeline started")
    parser.add_argument("--reuse", default="reinfer-interval=5", help="taconiteadaface's reuse settings, for the summary")
    args = parser.parse_args()
    streams, frames, faces, aligned, reused = set(), 0, 0, 0, 0
    tracks = {}  # (stream, track id) -> faces seen with it
    backends = set()
    with open(args.path, encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            streams.add(doc["stream"])
            frames += 1
            if doc["backend"]:
                backends.add(doc["backend"])
            for face in doc["faces"]:
                if face["status"] not in ("computed", "cached"):
                    continue  # found but not embedded
                faces += 1
                aligned += bool(face["aligned"])
                reused += face["status"] == "cached"
                if face["track_id"] is not None:
                    key = (doc["stream"], face["track_id"])
                    tracks[key] = tracks.get(key, 0) + 1
    elapsed = max(time.time() - args.started, 1e-9)
    print(f"summary: {len(streams)} stream(s), {frames} frames, {faces} faces ({faces - reused} embedded, {reused} "
          f"reused) in {elapsed:.2f} s ({faces / elapsed:.1f} faces/s, {frames / elapsed:.1f} frames/s), "
          f"{1000 * elapsed / max(frames, 1):.1f} ms/frame through the whole pipeline incl. start-up "
          f"(backend {', '.join(sorted(backends)) or 'none'})")
    if faces:
        longest = max(tracks.values(), default=0)
        print(f"summary: {aligned / faces:.0%} of faces aligned, {len(tracks)} distinct track(s) (the longest "
              f"holds {longest / faces:.0%} of the faces), {reused} embeddings reused with {args.reuse}")
    return 0 if faces > 0 else 4


if __name__ == "__main__":
    sys.exit(main())
