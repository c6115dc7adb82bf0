#!/usr/bin/python3
"""Finds faces in video with facedetect, aligns and tracks them, embeds them, writes JSON lines.

Pipeline per camera (stream):
  SOURCE -> videoconvert -> facedetect display=false -> taconitelandmarks -> taconitetrack
         -> taconiteadaface input-mode=rois reinfer-interval=R post-messages=true -> fakesink
SOURCE is a video file (decodebin) or, by default, a video built inside the pipeline from a photo
Debian ships (imagefreeze + a crop window that moves and zooms every frame, so the face box moves).
All cameras of one process share one engine per (bundle, backend).

One JSON object per embedded face on stdout (or --output):
  {"stream": "cam0", "frame": 12, "running_time_ns": 1200000000, "box": [x, y, w, h],
   "roi_id": 0, "track_id": 1, "landmarks": [[x, y] x 5], "aligned": true, "status": "computed",
   "norm": 21.7, "embedding": [512 floats]}
track_id is null until taconitetrack confirmed the face (min-hits frames); landmarks is null when
dlib found none. status "cached": the track's embedding was reused (reinfer-interval).
A summary (frames, faces, faces/s, aligned share, tracks, reused embeddings, element latency) goes
to stderr.

Usage: faces_to_jsonl.py --bundle DIR [--backend NAME] [--cameras N] [--seconds S] [--output FILE]
                         [--reinfer-interval R] [VIDEO ...]
"""
import argparse
import json
import sys
import time

import gi

gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402

from taconite_messages import embedding_from_face, image_size  # noqa: E402

PHOTOS = [
    "/usr/lib/python3/dist-packages/skimage/data/astronaut.png",   # 512x512, face ~97x97 at (175,64)
    "/usr/share/doc/opencv-doc/examples/data/messi5.jpg",         # 548x342, face ~38x38 at (226,94)
]
FPS = 10
# Face boxes need only facedetect's "profile" cascade (opencv-data); it logs that its optional
# nose/mouth/eye-pair cascades are missing, which does not matter here.
FACEDETECT = "facedetect display=false"


def photo_source(index, photo, seconds):
    """A synthetic camera: the photo frozen, seen through a crop window that pans and zooms."""
    return (f'filesrc location="{photo}" ! decodebin ! videoconvert ! video/x-raw,format=I420 ! '
            f"imagefreeze num-buffers={int(seconds * FPS)} ! video/x-raw,framerate={FPS}/1 ! "
            f"videobox name=window{index} ! videoscale ! video/x-raw,width=480,height=480,pixel-aspect-ratio=1/1")


def file_source(path):
    return f'filesrc location="{path}" ! decodebin ! videoconvert ! videoscale'


def landmarks_of(face):
    """The 5 alignment points a face's ROI carried, as [[x, y], ...] in frame pixels, or None."""
    if not face.has_field("landmarks"):
        return None
    flat = list(face.get_value("landmarks"))
    return [[round(flat[i], 2), round(flat[i + 1], 2)] for i in range(0, len(flat), 2)]


def camera_branch(index, source, args):
    batching = f" batch-size={args.batch_size}" if args.batch_size != 1 else ""
    # No converter between facedetect and taconiteadaface: a converting videoconvert would drop the
    # ROI params (landmarks, track ids) that the elements in between write (docs/gstreamer.md).
    return (f"{source} ! videoconvert ! {FACEDETECT} ! taconitelandmarks ! taconitetrack ! "
            f'taconiteadaface name=cam{index} bundle="{args.bundle}" backend={args.backend} input-mode=rois '
            f"reinfer-interval={args.reinfer_interval} post-messages=true{batching} ! fakesink sync=false")


class MovingWindow:
    """Moves a videobox crop window each frame: a pan of up to 15 % and a zoom of up to 25 %."""

    def __init__(self, videobox, width, height, frames):
        self.box, self.width, self.height, self.frames = videobox, width, height, max(frames, 1)
        self.pad = videobox.get_static_pad("sink")
        self.pad.add_probe(Gst.PadProbeType.BUFFER, self.on_buffer)

    def on_buffer(self, pad, info):
        buffer = info.get_buffer()
        frame = buffer.pts // (Gst.SECOND // FPS) if buffer.pts != Gst.CLOCK_TIME_NONE else 0
        t = min(frame / self.frames, 1.0)
        keep = 1.0 - 0.25 * t  # the window shrinks: the face grows
        w, h = int(self.width * keep), int(self.height * keep)
        left = int((self.width - w) * (0.5 + 0.5 * (t - 0.5)))
        top = int((self.height - h) * (0.5 - 0.3 * (t - 0.5)))
        self.box.set_property("left", left)
        self.box.set_property("right", self.width - w - left)
        self.box.set_property("top", top)
        self.box.set_property("bottom", self.height - h - top)
        return Gst.PadProbeReturn.OK


def run(args, out):
    videos = args.videos
    cameras = len(videos) if videos else args.cameras
    branches, windows = [], []
    for i in range(cameras):
        if videos:
            branches.append(camera_branch(i, file_source(videos[i]), args))
        else:
            photo = PHOTOS[i % len(PHOTOS)]
            branches.append(camera_branch(i, photo_source(i, photo, args.seconds), args))
            windows.append((i, photo))
    pipeline = Gst.parse_launch(" ".join(branches))
    for i, photo in windows:
        w, h = image_size(photo)
        MovingWindow(pipeline.get_by_name(f"window{i}"), w, h, int(args.seconds * FPS))

    frames = {f"cam{i}": 0 for i in range(cameras)}
    backend = args.backend
    faces = aligned = reused = 0
    tracks = {}  # (stream, track id) -> faces seen with it
    bus = pipeline.get_bus()
    started = time.monotonic()
    pipeline.set_state(Gst.State.PLAYING)
    try:
        while True:
            msg = bus.timed_pop_filtered(Gst.CLOCK_TIME_NONE, Gst.MessageType.ELEMENT | Gst.MessageType.ERROR
                                         | Gst.MessageType.EOS)
            if msg.type == Gst.MessageType.ERROR:
                err, debug = msg.parse_error()
                raise RuntimeError(f"{msg.src.get_name()}: {err.message} ({debug})")
            if msg.type == Gst.MessageType.EOS:
                break
            s = msg.get_structure()
            if s is None or s.get_name() != "taconiteadaface":
                continue
            stream = msg.src.get_name()
            backend = s.get_value("backend") or backend
            frame = frames[stream]
            frames[stream] += 1
            for face in s.get_value("faces"):
                values = embedding_from_face(face)
                if len(values) == 0:
                    continue  # not embedded (skipped under load)
                faces += 1
                aligned += bool(face.get_value("aligned"))
                reused += face.get_value("status") == "cached"
                track_id = face.get_value("track-id") if face.has_field("track-id") else None
                if track_id is not None:
                    tracks[(stream, track_id)] = tracks.get((stream, track_id), 0) + 1
                out.write(json.dumps({
                    "stream": stream, "frame": frame, "running_time_ns": s.get_value("running-time"),
                    "box": [face.get_value(k) for k in ("x", "y", "width", "height")],
                    "roi_id": face.get_value("roi-id"), "track_id": track_id, "landmarks": landmarks_of(face),
                    "aligned": bool(face.get_value("aligned")), "status": face.get_value("status"),
                    "norm": round(face.get_value("norm"), 6),
                    "embedding": [round(v, 7) for v in values]}) + "\n")
        elapsed = time.monotonic() - started
        latencies = [pipeline.get_by_name(f"cam{i}").get_property("mean-latency-ms") for i in range(cameras)]
    finally:
        pipeline.set_state(Gst.State.NULL)
    total_frames = sum(frames.values())
    print(f"summary: {cameras} stream(s), {total_frames} frames, {faces} faces ({faces - reused} embedded, {reused} reused) in {elapsed:.2f} s "
          f"({faces / elapsed:.1f} faces/s, {total_frames / elapsed:.1f} frames/s), element latency "
          f"{sum(latencies) / len(latencies):.1f} ms/frame (backend {backend})", file=sys.stderr)
    if faces:
        longest = max(tracks.values(), default=0)
        print(f"summary: {aligned / faces:.0%} of faces aligned, {len(tracks)} distinct track(s) (the longest "
              f"holds {longest / faces:.0%} of the faces), {reused} embeddings reused with reinfer-interval="
              f"{args.reinfer_interval}", file=sys.stderr)
    return 0 if faces > 0 else 4


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bundle", required=True, help="AdaFace IR bundle directory")
    parser.add_argument("--backend", default="auto", help="auto, cpu, cpu-reference, npu-direct, npu-xrt")
    parser.add_argument("--cameras", type=int, default=1, help="synthetic cameras when no VIDEO is given")
    parser.add_argument("--seconds", type=float, default=4.0, help="length of the synthetic video")
    parser.add_argument("--batch-size", type=int, default=1, help="faces per engine call across cameras")
    parser.add_argument("--reinfer-interval", type=int, default=5,
                        help="frames between two embeddings of one tracked face (1: embed every frame)")
    parser.add_argument("--output", help="JSON-lines file (default: stdout)")
    parser.add_argument("videos", nargs="*", help="video files (one camera each) replacing the synthetic video")
    args = parser.parse_args()
    Gst.init(None)
    if not args.videos:
        for photo in PHOTOS[:args.cameras]:
            if not GLib.file_test(photo, GLib.FileTest.EXISTS):
                raise RuntimeError(f"{photo} missing (apt-get install python3-skimage opencv-doc)")
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            return run(args, out)
    return run(args, sys.stdout)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (RuntimeError, GLib.Error) as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(1)
