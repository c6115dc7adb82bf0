"""Helpers shared by the example pipelines: reading taconiteadaface's messages and sizing images.

Plain python3-gst-1.0; the scripts beside this file import it.
"""
import array
import sys

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402


def embedding_from_face(face):
    """A `face` structure's embedding: GBytes of little-endian float32, as an array('f')."""
    values = array.array("f")
    values.frombytes(face.get_value("embedding").get_data())
    if sys.byteorder != "little":
        values.byteswap()
    return values


def image_size(path):
    """Width and height of a decoded image (prerolls a tiny pipeline)."""
    pipeline = Gst.parse_launch(f'filesrc location="{path}" ! decodebin ! fakesink name=sink')
    pipeline.set_state(Gst.State.PAUSED)
    if pipeline.get_state(Gst.CLOCK_TIME_NONE)[0] == Gst.StateChangeReturn.FAILURE:
        pipeline.set_state(Gst.State.NULL)
        raise RuntimeError(f"{path}: cannot decode")
    caps = pipeline.get_by_name("sink").get_static_pad("sink").get_current_caps().get_structure(0)
    pipeline.set_state(Gst.State.NULL)
    return caps.get_value("width"), caps.get_value("height")
