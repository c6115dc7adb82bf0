#!/usr/bin/python3
"""Best-shot vs every-Nth embedding on a real clip of real people (not a test).

Usage: bench/gst/real_clip_modes.py [--build DIR] [--realfaces DIR] [--yunet FILE] [--rounds N] [--json FILE]

../shared/realfaces' short_hamilton_clip.mp4 (640x360, 29.97 fps, 275 frames: Lin-Manuel Miranda,
then Barack Obama after the cut at frame 211) runs through the recommended chain with the real 128-d
MobileFaceNet embedder, both people enrolled from their photos with `taconite-gallery enroll
--detector`: taconitedetect (YuNet, interval 3) -> taconitetrack -> taconiteadaface (MODE) ->
taconiteidentify -> taconitepublish (frames and track events). Per mode it reports the tracks, how
they ended (known / unknown), the names given and how many are wrong (a name is right on a track of
that person's side of the cut), the time from a named track's first frame to its name (PTS; every
track is decided on its first embedding, mostly on its first frame), the embeddings computed, and
the wall time of the run (median of --rounds). Prints a markdown table and, with --json, one JSON
line per mode.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = "mobilefacenet_foamliu_opset10.onnx"
DESCRIPTION = {"format": "taconite-embedder/1", "name": "mobilefacenet-foamliu",
               "input": {"name": "input0", "width": 112, "height": 112, "channel_order": "RGB",
                         "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]},
               "output": {"name": "output0", "dim": 128}, "threshold": 0.32}  # docs/models.md
FPS = 30000 / 1001
CUT_S = 211 / FPS  # the cut from the stage (Lin-Manuel Miranda) to the audience (Barack Obama)
MODES = [("best-shot (reinfer-mode=best)", ["--reinfer-mode", "best"]),
         ("every 5th frame (reinfer-interval=5)", ["--reinfer-mode", "interval", "--reinfer-interval", "5"]),
         ("every frame (reinfer-interval=1)", ["--reinfer-mode", "interval", "--reinfer-interval", "1"])]


def run(*args, env=None):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=1800, env=env)
    if r.returncode != 0:
        sys.exit(f"{' '.join(map(str, args))} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return r


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def right_name(end):
    """A name is right on a track of that person's side of the cut (the clip has no per-face truth)."""
    if end["label"] == "lin_manuel_miranda":
        return end["last_pts_ns"] / 1e9 < CUT_S
    return end["label"] == "barack_obama" and end["first_pts_ns"] / 1e9 >= CUT_S


def summarise(events, frames):
    tracks = {}
    for e in events:
        t = tracks.setdefault(e["uid"], {"first": None, "named": None, "end": None})
        if e["event"] == "new":
            t["first"] = e["pts_ns"]
        if t["named"] is None and e["label_state"] == "known":
            t["named"] = e["pts_ns"]
        if e["event"] == "end":
            t["end"] = e
    ends = [t["end"] for t in tracks.values() if t["end"]]
    named = [e for e in ends if e["label_state"] == "known"]
    wrong = [e for e in named if not right_name(e)]
    # Tracks are decided on their first embedding, mostly their first frame: what waits is the name.
    waits = [(t["named"] - t["first"]) / 1e9 for t in tracks.values() if t["named"] is not None and t["first"] is not None]
    computed = sum(1 for d in frames for face in d.get("faces", []) if face.get("status") == "computed")
    return {"tracks": len(ends), "known": len(named), "unknown": sum(e["label_state"] == "unknown" for e in ends),
            "pending": sum(e["label_state"] == "pending" for e in ends),
            "names": sorted({e["label"] for e in named}), "wrong": len(wrong),
            "naming_s_median": statistics.median(waits) if waits else None,
            "naming_s_max": max(waits) if waits else None, "embeddings": computed,
            "faces": sum(len(d.get("faces", [])) for d in frames)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--realfaces", default=os.path.join(ROOT, "..", "shared", "realfaces"))
    p.add_argument("--yunet", default=os.path.join(ROOT, "..", "shared", "models", "face_detection_yunet_2023mar.onnx"))
    p.add_argument("--threshold", type=float, help="taconiteidentify's threshold (default: the model's)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--json")
    a = p.parse_args()
    if not os.path.isdir(a.realfaces):
        sys.exit(f"no {a.realfaces}: this bench needs ../shared/realfaces")
    cli = os.path.join(a.build, "tools", "gallery", "taconite-gallery")
    work = tempfile.mkdtemp(prefix="taconite-clip-modes-")
    try:
        model = os.path.join(work, MODEL)
        os.symlink(os.path.join(os.path.abspath(a.realfaces), "models", MODEL), model)
        with open(model[:-len(".onnx")] + ".json", "w", encoding="utf-8") as f:
            json.dump(DESCRIPTION, f)
        gallery = os.path.join(work, "people.db")
        run(cli, "create", gallery, "--model", model)
        for person in ("lin_manuel_miranda", "barack_obama"):
            run(cli, "enroll", gallery, "--model", model, "--detector", a.yunet, "--name", person, "--largest",
                os.path.join(a.realfaces, "photos", person))
        video = os.path.join(a.realfaces, "video", "short_hamilton_clip.mp4")
        env = dict(os.environ, BUILD_DIR=a.build, OMP_WAIT_POLICY="passive")
        threshold = ["--threshold", str(a.threshold)] if a.threshold is not None else []
        rows = []
        for name, args in MODES:
            walls = []
            for _ in range(a.rounds):
                faces, tracks = os.path.join(work, "faces.jsonl"), os.path.join(work, "tracks.jsonl")
                started = time.monotonic()
                run(os.path.join(ROOT, "pipelines", "publish-video-faces.sh"), "--model", model, "--detector", a.yunet,
                    "--gallery", gallery, *threshold, "--output", faces, "--tracks", tracks, *args, video, env=env)
                walls.append(time.monotonic() - started)
            row = {"mode": name, **summarise(read_jsonl(tracks), read_jsonl(faces)), "wall_s": statistics.median(walls)}
            rows.append(row)
        print("| mode | tracks | known / unknown / pending | names | wrong | s to a name (median / max) | embeddings / faces | wall s |")
        print("|---|---|---|---|---|---|---|---|")
        for r in rows:
            med = "-" if r["naming_s_median"] is None else f"{r['naming_s_median']:.2f} / {r['naming_s_max']:.2f}"
            print(f"| {r['mode']} | {r['tracks']} | {r['known']} / {r['unknown']} / {r['pending']} | {', '.join(r['names'])} "
                  f"| {r['wrong']} | {med} | {r['embeddings']} / {r['faces']} | {r['wall_s']:.1f} |")
        if a.json:
            with open(a.json, "w", encoding="utf-8") as f:
                for r in rows:
                    f.write(json.dumps(r) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
