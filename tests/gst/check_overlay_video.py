#!/usr/bin/python3
"""Checks the video pipelines/publish-video-faces.sh --video-out writes (taconiteoverlay, H.264 in MP4).

Usage: check_overlay_video.py VIDEO.mp4 FACES.jsonl
Decodes the file with real GStreamer elements (qtdemux, h264parse, avdec_h264, videoconvert) and,
frame by frame with the JSON documents of the same run (publish-empty=true: one per frame, in
order), checks that every face's box is drawn: the pixels along its top and left edges (the box
edges are drawn inside the box, 2 pixels wide) are white, the colour of a face with no identity
(no taconiteidentify in that pipeline; docs/gstreamer.md's palette), on at least 5 frames.
"""
import json
import sys

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

WHITE_MIN = 170  # every channel of a white edge pixel after H.264 (4:2:0) at the script's bitrate
EDGE_SHARE = 0.8  # of the pixels along an edge


def decoded_frames(path):
    """The video's frames as (width, height, RGB bytes), in order."""
    Gst.init(None)
    pipeline = Gst.parse_launch(
        f'filesrc location="{path}" ! qtdemux ! h264parse ! avdec_h264 ! videoconvert ! '
        "video/x-raw,format=RGB ! appsink name=out sync=false")
    sink = pipeline.get_by_name("out")
    pipeline.set_state(Gst.State.PLAYING)
    frames = []
    while True:
        sample = sink.emit("pull-sample")
        if sample is None:
            break
        caps = sample.get_caps().get_structure(0)
        width, height = caps.get_value("width"), caps.get_value("height")
        buffer = sample.get_buffer()
        ok, info = buffer.map(Gst.MapFlags.READ)
        assert ok, "could not map a decoded frame"
        stride = len(info.data) // height  # RGB rows are 4-byte aligned
        frames.append((width, height, stride, bytes(info.data)))
        buffer.unmap(info)
    bus_error = pipeline.get_bus().pop_filtered(Gst.MessageType.ERROR)
    pipeline.set_state(Gst.State.NULL)
    assert bus_error is None, f"decoding {path}: {bus_error.parse_error()[0].message}"
    return frames


def white_share(frame, points):
    width, height, stride, data = frame
    inside = [(x, y) for x, y in points if 0 <= x < width and 0 <= y < height]
    white = sum(1 for x, y in inside if min(data[y * stride + 3 * x:y * stride + 3 * x + 3]) >= WHITE_MIN)
    return white / len(inside) if inside else 0.0


def main(video, jsonl):
    frames = decoded_frames(video)
    with open(jsonl, encoding="utf-8") as f:
        documents = [json.loads(line) for line in f]
    assert len(frames) == len(documents), f"{len(frames)} frames in {video}, {len(documents)} documents in {jsonl}"
    checked = 0
    for number, (frame, doc) in enumerate(zip(frames, documents)):
        for face in doc["faces"]:
            x, y, w, h = face["box"]
            top = [(x + i, y) for i in range(2, w - 2)]
            left = [(x, y + i) for i in range(2, h - 2)]
            for name, edge in (("top", top), ("left", left)):
                share = white_share(frame, edge)
                assert share >= EDGE_SHARE, (f"frame {number}: box {face['box']} {name} edge: only {share:.0%} of "
                                             f"its pixels are white")
            checked += 1
    assert checked >= 5, f"only {checked} boxes checked: the pipeline found too few faces"
    print(f"{video}: {len(frames)} frames, {checked} drawn boxes checked")


if __name__ == "__main__":
    main(*sys.argv[1:3])
