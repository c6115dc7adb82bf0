#!/usr/bin/python3
"""Unknown faces of real people, kept by the recommended chain and clustered (issue 30, deliverable 5).

Usage: real_unknowns_test.py TACONITE_GALLERY REALFACES_DIR YUNET WORK_DIR

A slideshow of real photos (4 photos each of 6 people of ../shared/realfaces, each photo shown for
15 frames, then 35 black frames so every track ends before the next photo) runs through taconitedetect
(YuNet) -> taconitetrack -> taconiteadaface (the real 128-d MobileFaceNet, reinfer-mode=best) ->
taconiteidentify keep-unknowns=true (only a seventh person enrolled) -> taconitepublish
messages=tracks. Each photo's track ends unknown and its best face is kept; `taconite-gallery
unknowns` then clusters the kept faces: no cluster may hold two people, and each person's photos
must join into at most two clusters (measured: 24 faces, 6 clusters, one per person). The person of each kept face is known from its track's
first frame.

Exits 77 (skipped, saying why) without ../shared/realfaces or the YuNet model.
"""
import json
import os
import sqlite3
import sys

from realfaces_model import fresh_work_with_model, run

PEOPLE = ["ben_affleck", "elon_musk", "elton_john", "jerry_seinfeld", "mindy_kaling", "scarlett_johansson"]
PHOTOS_EACH = 4
SHOWN, GAP = 15, 35  # frames per photo (taconitetrack confirms a track after min-hits); black frames after it (max-age 30)
FPS = 10


def to_frame(source, target):
    """The photo letterboxed into a 640x480 JPEG."""
    run("gst-launch-1.0", "-q", "filesrc", f"location={source}", "!", "decodebin", "!", "videoconvert", "!",
        "videoscale", "add-borders=true", "!", "video/x-raw,width=640,height=480,pixel-aspect-ratio=1/1", "!",
        "jpegenc", "!", "filesink", f"location={target}")


def slideshow(realfaces, frames_dir):
    """Writes the frames; returns the person shown in each photo slot."""
    os.makedirs(frames_dir)
    black = os.path.join(frames_dir, "black.jpg")
    run("gst-launch-1.0", "-q", "videotestsrc", "pattern=black", "num-buffers=1", "!",
        "video/x-raw,width=640,height=480", "!", "jpegenc", "!", "filesink", f"location={black}")
    slots, index = [], 0
    for person in PEOPLE:
        folder = os.path.join(realfaces, "photos", person)
        for n, name in enumerate(sorted(os.listdir(folder))[:PHOTOS_EACH]):
            photo = os.path.join(frames_dir, f"{person}-{n}.jpg")
            to_frame(os.path.join(folder, name), photo)
            for source in [photo] * SHOWN + [black] * GAP:
                os.symlink(source, os.path.join(frames_dir, f"{index:05d}.jpg"))
                index += 1
            slots.append(person)
    return slots, index


def main(cli, realfaces, yunet, work):
    model = fresh_work_with_model(realfaces, yunet, work)
    gallery = os.path.join(work, "strangers.db")
    run(cli, "create", gallery, "--model", model)
    run(cli, "enroll", gallery, "--model", model, "--detector", yunet, "--name", "matt_damon", "--largest",
        os.path.join(realfaces, "photos", "matt_damon"))

    frames = os.path.join(work, "frames")
    slots, count = slideshow(realfaces, frames)
    tracks = os.path.join(work, "tracks.jsonl")
    run("gst-launch-1.0", "-q", "multifilesrc", f"location={frames}/%05d.jpg", f"stop-index={count - 1}",
        f"caps=image/jpeg,framerate={FPS}/1", "!", "jpegdec", "!", "videoconvert", "!",
        "taconitedetect", f"model={yunet}", "interval=3", "!", "taconitetrack", "!",
        "taconiteadaface", f"model={model}", "input-mode=rois", "reinfer-mode=best", "!",
        "taconiteidentify", f"gallery={gallery}", f"model={model}", "keep-unknowns=true", "!",
        "taconitepublish", "messages=tracks", "method=file", f"location={tracks}", "!", "fakesink", "sync=false")

    with open(tracks, encoding="utf-8") as f:
        ends = [e for e in map(json.loads, f) if e["event"] == "end"]
    assert ends, "no track ended"
    assert all(e["label_state"] == "unknown" for e in ends), f"a stranger was named: {ends}"
    person_of_track = {}
    for e in ends:
        slot = round(e["first_pts_ns"] * FPS / 1e9) // (SHOWN + GAP)
        assert e["track_id"] not in person_of_track, f"track id {e['track_id']} reused"
        person_of_track[e["track_id"]] = slots[slot]
    db = sqlite3.connect(gallery)
    track_of_face = dict(db.execute("SELECT id, track_id FROM unknown_faces"))
    db.close()
    kept_people = {person_of_track[t] for t in track_of_face.values()}
    assert len(track_of_face) >= len(slots) * 3 // 4, f"only {len(track_of_face)} of {len(slots)} photos kept"
    assert kept_people == set(PEOPLE), f"kept faces of {kept_people} only"

    out = run(cli, "unknowns", gallery, "--json").stdout
    clusters = [json.loads(line) for line in out.splitlines() if line.strip()]
    for c in clusters:
        people = {person_of_track[track_of_face[face]] for face in c["faces"]}
        assert len(people) == 1, f"cluster {c['key']} mixes {sorted(people)}"
    assert sum(c["size"] for c in clusters) == len(track_of_face)
    # Single linkage at the default 0.5 joins a person's photos; at most one photo set split in two each.
    for person in PEOPLE:
        theirs = [c["key"] for c in clusters if person_of_track[track_of_face[c["faces"][0]]] == person]
        assert len(theirs) <= 2, f"{person}'s faces are split over {len(theirs)} clusters: {theirs}"
    print(f"{len(track_of_face)} unknown faces of {len(kept_people)} people kept, in {len(clusters)} clusters, none mixed")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
