#!/usr/bin/python3
"""Embeds pre-cropped face images with taconiteadaface and prints each face's embedding.

Each image runs through: decodebin -> (optional videocrop) -> videoscale to 112x112 RGB ->
imagefreeze (one buffer) -> taconiteadaface input-mode=crops post-messages=true -> fakesink.
The embedding is read from the element's bus message (python3-gst-1.0); see docs/gstreamer.md.

Usage: embed_face_crops.py --bundle DIR [--backend NAME] IMAGE[:left,top,width,height] ...
"""
import argparse
import math
import sys

import gi

gi.require_version("Gst", "1.0")
from gi.repository import GLib, Gst  # noqa: E402

from taconite_messages import embedding_from_face, image_size  # noqa: E402


def pipeline_for(image, box, bundle, backend):
    crop = ""
    if box:
        # videocrop takes margins: turn the face box into left/top/right/bottom.
        left, top, width, height = box
        image_width, image_height = image_size(image)
        crop = (f"videocrop left={left} top={top} right={image_width - left - width} "
                f"bottom={image_height - top - height} ! ")
    return (
        f'filesrc location="{image}" ! decodebin ! videoconvert ! {crop}videoscale ! '
        "video/x-raw,format=RGB,width=112,height=112,pixel-aspect-ratio=1/1 ! imagefreeze num-buffers=1 ! "
        f'taconiteadaface name=embedder bundle="{bundle}" backend={backend} input-mode=crops '
        "post-messages=true ! fakesink"
    )


def embed(image, box, bundle, backend):
    """Runs one image through the element; returns (norm, embedding) of its face."""
    pipeline = Gst.parse_launch(pipeline_for(image, box, bundle, backend))
    result = None
    bus = pipeline.get_bus()
    pipeline.set_state(Gst.State.PLAYING)
    while True:
        msg = bus.timed_pop_filtered(Gst.CLOCK_TIME_NONE, Gst.MessageType.ELEMENT | Gst.MessageType.ERROR
                                     | Gst.MessageType.EOS)
        if msg.type == Gst.MessageType.ERROR:
            err, debug = msg.parse_error()
            pipeline.set_state(Gst.State.NULL)
            raise RuntimeError(f"{image}: {err.message} ({debug})")
        if msg.type == Gst.MessageType.EOS:
            break
        s = msg.get_structure()
        if s.get_name() == "taconiteadaface":
            for face in s.get_value("faces"):  # a Gst.ValueList of "face" structures
                result = (face.get_value("norm"), embedding_from_face(face))
    pipeline.set_state(Gst.State.NULL)
    return result


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    return dot / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


def parse_image(arg):
    if ":" in arg and arg.rsplit(":", 1)[1].count(",") == 3:
        path, box = arg.rsplit(":", 1)
        return path, tuple(int(v) for v in box.split(","))
    return arg, None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bundle", required=True, help="AdaFace IR bundle directory")
    parser.add_argument("--backend", default="auto", help="auto, cpu, cpu-reference, npu-direct, npu-xrt")
    parser.add_argument("images", nargs="+", help="IMAGE or IMAGE:left,top,width,height (a face box to cut out)")
    args = parser.parse_args()
    Gst.init(None)

    results = []
    for arg in args.images:
        path, box = parse_image(arg)
        norm, embedding = embed(path, box, args.bundle, args.backend)
        results.append((path, embedding))
        head = " ".join(f"{v:+.4f}" for v in embedding[:4])
        print(f"{path}{'' if not box else ' box=' + ','.join(map(str, box))}: dim={len(embedding)} "
              f"norm={norm:.3f} embedding=[{head} ...]")
    if len(results) > 1:
        print("cosine similarity:")
        for i, (name_a, a) in enumerate(results):
            row = " ".join(f"{cosine(a, b):+.3f}" for _, b in results)
            print(f"  [{i}] {row}  {name_a}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (RuntimeError, GLib.Error) as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(1)
