#!/usr/bin/python3
"""pipelines/live-camera.sh end to end against a real RTSP server on 127.0.0.1 serving the demo video
(the astronaut, panned and zoomed, 4 s; tests/camera/rtsp_server.py --video): the video's end is the
camera going away, so in 11 s the camera is lost and back at least once. Asserts the script exits 0,
prints the camera's lost and back messages, and its JSON lines hold faces before and after the
outage and a track event `end` with reason camera-lost followed by a new track (a new uid).

Usage: live_camera_test.py PIPELINES_DIR WORK_DIR [YUNET.onnx]
The YuNet model is used when the file exists, else the stock facedetect front end. Exits 77
(skipped) without python3-skimage (the demo video) or gst-rtsp-server's typelib.
"""
import json
import os
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main(pipelines, work, yunet=""):
    os.makedirs(work, exist_ok=True)
    video = os.path.join(work, "demo-4s.avi")
    if not os.path.exists(video):
        made = subprocess.run([sys.executable, os.path.join(pipelines, "make_demo_video.py"), video, "--seconds", "4"],
                              capture_output=True, text=True, timeout=120)
        if made.returncode != 0:
            print(f"skipped: the demo video could not be made: {made.stderr.strip()[-300:]}")
            sys.exit(77)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, os.path.join(HERE, "rtsp_server.py"), str(port), "--video", video,
                               "--size", "480x480"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()  # "ready PORT" once it listens (or nothing if it exits)
        if not line.startswith("ready"):
            server.wait(timeout=10)
            if server.returncode == 77:
                print("skipped: " + server.stderr.read().strip())
                sys.exit(77)
            sys.exit(f"FAIL: the RTSP server did not start: {server.stderr.read().strip()}")
        output = os.path.join(work, "live-camera.jsonl")
        if os.path.exists(output):
            os.remove(output)
        args = [os.path.join(pipelines, "live-camera.sh"), "--uri", f"rtsp://127.0.0.1:{port}/cam", "--stream",
                "door1", "--seconds", "11", "--retry-interval", "1", "--output", output]
        if yunet and os.path.exists(yunet):
            args += ["--detector", yunet]
        started = time.monotonic()
        run = subprocess.run(args, capture_output=True, text=True, timeout=120)
        print(run.stdout[-3000:], run.stderr[-2000:], sep="\n")
        if run.returncode != 0:
            sys.exit(f"FAIL: live-camera.sh exited {run.returncode}")
        if "state=(string)lost" not in run.stdout or "state=(string)back" not in run.stdout:
            sys.exit("FAIL: the camera's lost and back messages were not printed")
        lines = [json.loads(line) for line in open(output, encoding="utf-8")]
        events = [d for d in lines if d["schema"] == "taconite-tracks/1"]
        faces = [d for d in lines if d["schema"] == "taconite-faces/1" and d["faces"]]
        lost_at = next((i for i, e in enumerate(events) if e["event"] == "end" and e["reason"] == "camera-lost"), None)
        if lost_at is None:
            sys.exit(f"FAIL: no track ended camera-lost: {[(e['event'], e.get('reason')) for e in events]}")
        ended = events[lost_at]
        after = [e for e in events[lost_at + 1:] if e["event"] == "new"]
        if not after or after[0]["uid"] == ended["uid"]:
            sys.exit("FAIL: no new track after the camera came back")
        before = [d for d in faces if d["pts_ns"] <= ended["pts_ns"]]
        later = [d for d in faces if d["pts_ns"] > ended["pts_ns"]]
        if not before or not later:
            sys.exit(f"FAIL: faces before ({len(before)}) and after ({len(later)}) the outage expected")
        print(f"ok: {len(faces)} frames with faces in {time.monotonic() - started:.1f} s, track {ended['uid']} ended "
              f"camera-lost, a new track after it ({len(events)} track events)")
    finally:
        server.kill()
        server.wait(timeout=10)


if __name__ == "__main__":
    main(*sys.argv[1:4])
