#!/usr/bin/python3
"""A real clip of real people through the recommended chain (issue 30, deliverable 5).

Usage: real_clip_test.py PIPELINES_DIR TACONITE_GALLERY REALFACES_DIR YUNET WORK_DIR

../shared/realfaces' short_hamilton_clip.mp4 (640x360, 29.97 fps: Lin-Manuel Miranda, then Barack
Obama in profile at about frames 215-265) runs through pipelines/publish-video-faces.sh with the
real 128-d MobileFaceNet embedder: taconitedetect (YuNet) -> taconitetrack -> taconiteadaface
reinfer-mode=best -> taconiteidentify -> taconitepublish messages=tracks.

Both people are enrolled from their photos (taconite-gallery enroll --detector); the threshold is
the model description's. The track events must name Lin-Manuel Miranda and Barack Obama, no one
else, Lin-Manuel Miranda only on tracks before the cut to the audience (frame 211), Barack Obama
only on tracks after it, and no track may end pending. (The clip has no per-face ground truth:
a stranger named in the right part of the clip would pass; real_unknowns_test.py checks strangers.)

Exits 77 (skipped, saying why) without ../shared/realfaces or the YuNet model.
"""
import json
import os
import sys

from realfaces_model import fresh_work_with_model, run

FPS = 30000 / 1001
CUT_S = 211 / FPS  # the cut from the stage (Lin-Manuel Miranda) to the audience (Barack Obama)


def ends(path):
    with open(path, encoding="utf-8") as f:
        events = [json.loads(line) for line in f if line.strip()]
    return [e for e in events if e.get("event") == "end"]


def main(pipelines, cli, realfaces, yunet, work):
    model = fresh_work_with_model(realfaces, yunet, work)
    photos = os.path.join(realfaces, "photos")
    video = os.path.join(realfaces, "video", "short_hamilton_clip.mp4")
    gallery = os.path.join(work, "people.db")
    run(cli, "create", gallery, "--model", model)
    for person in ("lin_manuel_miranda", "barack_obama"):
        run(cli, "enroll", gallery, "--model", model, "--detector", yunet, "--name", person, "--largest",
            os.path.join(photos, person))
    tracks = os.path.join(work, "tracks.jsonl")
    run(os.path.join(pipelines, "publish-video-faces.sh"), "--model", model, "--detector", yunet, "--gallery", gallery,
        "--output", os.path.join(work, "faces.jsonl"), "--tracks", tracks, video)
    known = ends(tracks)
    assert known, f"{tracks}: no track ended"
    pending = [e["track_id"] for e in known if e["label_state"] == "pending"]
    assert not pending, f"tracks {pending} ended pending"
    named = {e["label"] for e in known if e["label_state"] == "known"}
    assert named == {"lin_manuel_miranda", "barack_obama"}, f"named {named}: {known}"
    obama = [e for e in known if e["label"] == "barack_obama"]
    assert all(e["first_pts_ns"] / 1e9 >= CUT_S for e in obama), f"Obama named before his part: {obama}"
    lin = [e for e in known if e["label"] == "lin_manuel_miranda"]
    assert all(e["last_pts_ns"] / 1e9 < CUT_S for e in lin), f"a track after the cut named Lin-Manuel Miranda: {lin}"
    print(f"named {sorted(named)}: {len(lin)} + {len(obama)} of {len(known)} tracks, none pending")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
