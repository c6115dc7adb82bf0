#!/usr/bin/python3
"""Writes the synthetic camera of the demo as a video file (MJPEG in AVI), so a plain gst-launch-1.0
pipeline can read it: a photo Debian ships (python3-skimage's astronaut) frozen and seen through a
crop window that pans and zooms every frame (faces_to_jsonl.MovingWindow), 480x480 at 10 fps.

Usage: make_demo_video.py OUTPUT.avi [--seconds S]
"""
import argparse
import sys

import gi

gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402

from faces_to_jsonl import PHOTOS, FPS, MovingWindow, photo_source  # noqa: E402
from taconite_messages import image_size  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", help="the AVI file to write")
    parser.add_argument("--seconds", type=float, default=4.0, help="length of the video")
    args = parser.parse_args()
    Gst.init(None)
    photo = PHOTOS[0]
    if not GLib.file_test(photo, GLib.FileTest.EXISTS):
        raise RuntimeError(f"{photo} missing (apt-get install python3-skimage)")
    pipeline = Gst.parse_launch(f"{photo_source(0, photo, args.seconds)} ! videoconvert ! jpegenc quality=90 ! "
                                f'avimux ! filesink location="{args.output}"')
    width, height = image_size(photo)
    MovingWindow(pipeline.get_by_name("window0"), width, height, int(args.seconds * FPS))
    pipeline.set_state(Gst.State.PLAYING)
    msg = pipeline.get_bus().timed_pop_filtered(Gst.CLOCK_TIME_NONE, Gst.MessageType.ERROR | Gst.MessageType.EOS)
    pipeline.set_state(Gst.State.NULL)
    if msg.type == Gst.MessageType.ERROR:
        err, debug = msg.parse_error()
        raise RuntimeError(f"{msg.src.get_name()}: {err.message} ({debug})")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (RuntimeError, GLib.Error) as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(1)
