"""The documented Python path, run from an installed prefix (see installed_python_test.sh).

The typed ROI reads (GstTaconite.roi_get_*) on ROIs built with GstVideo: track id, identity and its
label state, landmarks, the ROI's embedding; and every setter of the face contract with its getter
(face_contract_check.py).

videotestsrc ! taconiteadaface (crops mode) ! <converters> ! appsink: the GstTaconite typelib reads
every face's embedding meta after videoconvert, videoscale, both, and a capsfilter that resizes,
and the floats equal the ones the element posted in its message for the same frame. Exits non-zero
with a reason on the first failure.
"""
import array
import math
import os
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GIRepository", "2.0")
gi.require_version("GstTaconite", "1.0")
gi.require_version("GstVideo", "1.0")
from gi.repository import GIRepository, Gst, GstTaconite, GstVideo  # noqa: E402

from face_contract_check import check_face_contract  # noqa: E402  (beside this script)

FRAMES = 2
CONVERTERS = {
    "videoconvert": "videoconvert ! video/x-raw,format=I420",
    "videoscale": "videoscale ! video/x-raw,width=224,height=224",
    "videoconvert ! videoscale": "videoconvert ! videoscale ! video/x-raw,format=NV12,width=56,height=40",
    "capsfilter resize": "videoscale ! capsfilter caps=video/x-raw,width=80,height=60",
}


def fail(reason):
    print("FAIL: " + reason)
    sys.exit(1)


def check_installed():
    """The typelib and the plugin must come from the installed tree."""
    root = os.environ["TACONITE_INSTALLED_ROOT"]
    typelib = GIRepository.Repository.get_default().get_typelib_path("GstTaconite")
    if not typelib.startswith(root):
        fail(f"GstTaconite typelib {typelib} is not under the installed root {root}")
    factory = Gst.ElementFactory.find("taconiteadaface")
    if factory is None:
        fail("taconiteadaface not found through GST_PLUGIN_PATH " + os.environ.get("GST_PLUGIN_PATH", ""))
    plugin = factory.get_plugin().get_filename()
    if not plugin.startswith(root):
        fail(f"plugin {plugin} is not under the installed root {root}")


def check_loaded_libraries():
    """After a pipeline ran: the libraries in this process come from the installed tree too."""
    root = os.environ["TACONITE_INSTALLED_ROOT"]
    with open("/proc/self/maps") as maps:
        mapped = {line.split()[-1] for line in maps if "libgsttaconite" in line or "libtaconite-adaface" in line}
    for name in ("libgsttaconitemeta-1.0.so", "libgsttaconite.so", "libtaconite-adaface.so"):
        paths = {path for path in mapped if os.path.basename(path).startswith(name)}
        if not paths or not all(path.startswith(root) for path in paths):
            fail(f"{name} loaded from {sorted(paths)}, not from {root}")


def run(bundle, converter):
    pipeline = Gst.parse_launch(
        f"videotestsrc num-buffers={FRAMES} pattern=ball ! video/x-raw,format=RGB,width=112,height=112 ! "
        f"taconiteadaface bundle={bundle} backend=cpu-reference input-mode=crops post-messages=true ! "
        f"{converter} ! appsink name=out sync=false")
    sink = pipeline.get_by_name("out")
    pipeline.set_state(Gst.State.PLAYING)
    metas = []
    while True:
        sample = sink.emit("pull-sample")
        if sample is None:
            break
        buffer = sample.get_buffer()
        faces = GstTaconite.buffer_get_taconite_embedding_metas(buffer)
        size = sample.get_caps().get_structure(0)
        metas.append([(m.roi_id, m.model, m.backend, m.precision, m.norm, m.status, list(m.get_embedding()),
                       size.get_value("width")) for m in faces])
    posted = []
    bus = pipeline.get_bus()
    while True:
        msg = bus.pop_filtered(Gst.MessageType.ELEMENT | Gst.MessageType.ERROR)
        if msg is None:
            break
        if msg.type == Gst.MessageType.ERROR:
            fail(f"{converter}: {msg.parse_error()}")
        s = msg.get_structure()
        if s.get_name() == "taconiteadaface":
            values = array.array("f")
            values.frombytes(s.get_value("faces")[0].get_value("embedding").get_data())
            posted.append(list(values))
    pipeline.set_state(Gst.State.NULL)
    return metas, posted


def check_roi_accessors():
    """GstTaconite's typed ROI reads on hand-built ROIs, as an application's probe would use them."""
    buffer = Gst.Buffer.new_allocate(None, 64, None)
    params = [
        "object_id, id=(gint64)1099511627776",
        "identity, label_state=(string)known, label=(string)alice, label_id=(int)3, confidence=(double)0.75",
        "landmarks, x=<(double)11, (double)12, (double)13, (double)14, (double)15>, "
        "y=<(double)21, (double)22, (double)23, (double)24, (double)25>",
    ]
    roi = GstVideo.buffer_add_video_region_of_interest_meta(buffer, "face", 10, 20, 40, 50)
    roi.id = 7
    for text in params:
        roi.add_param(Gst.Structure.new_from_string(text))
    pending = GstVideo.buffer_add_video_region_of_interest_meta(buffer, "face", 60, 20, 40, 50)
    pending.id = 8
    pending.add_param(Gst.Structure.new_from_string("identity, label_state=(string)pending"))
    GstTaconite.buffer_add_taconite_embedding_meta(buffer, 7, [1.0, 0.0, 0.0, 0.0], 2.5, "IR-18", "cpu", True)

    rois = GstTaconite.buffer_get_taconite_rois(buffer)
    if [r.id for r in rois] != [7, 8]:
        fail(f"buffer_get_taconite_rois gave ids {[r.id for r in rois]}, expected [7, 8]")
    read = (GstTaconite.roi_get_track_id(roi), GstTaconite.roi_get_label(roi), GstTaconite.roi_get_label_id(roi),
            GstTaconite.roi_get_confidence(roi), GstTaconite.roi_get_label_state(roi))
    expected = ((True, 1 << 40), "alice", (True, 3), (True, 0.75), GstTaconite.LabelState.KNOWN)
    if read != expected:
        fail(f"typed reads of a known face gave {read}, expected {expected}")
    if (GstTaconite.roi_get_label_state(pending) != GstTaconite.LabelState.PENDING
            or GstTaconite.roi_get_label(pending) is not None or GstTaconite.roi_get_track_id(pending)[0]):
        fail("a pending face reads as decided or tracked")
    if GstTaconite.LabelState.to_string(GstTaconite.LabelState.UNKNOWN) != "unknown":
        fail("LabelState.to_string(UNKNOWN) is not 'unknown'")
    ok, x, y = GstTaconite.roi_get_landmarks(roi)
    if not ok or list(x) != [11.0, 12.0, 13.0, 14.0, 15.0] or list(y) != [21.0, 22.0, 23.0, 24.0, 25.0]:
        fail(f"landmarks read as {ok}, {x}, {y}")
    meta = GstTaconite.roi_get_embedding_meta(buffer, roi)
    if meta is None or list(meta.get_embedding()) != [1.0, 0.0, 0.0, 0.0]:
        fail("the ROI's embedding meta was not found by its id")
    if GstTaconite.roi_get_embedding_meta(buffer, pending) is not None:
        fail("a ROI without an embedding got one")
    print("ok: typed ROI reads through GstTaconite")


def check_face_writers():
    """The face contract's setters and new getters (face_contract_check.py) through the installed typelib."""
    failures = check_face_contract(Gst, GstVideo, GstTaconite)
    if failures:
        fail("; ".join(failures))
    print("ok: the face contract's setters and getters through GstTaconite")


def main():
    Gst.init(None)
    check_installed()
    check_roi_accessors()
    check_face_writers()
    bundle = sys.argv[1]
    for name, converter in CONVERTERS.items():
        metas, posted = run(bundle, converter)
        if len(metas) != FRAMES or len(posted) != FRAMES:
            fail(f"{name}: {len(metas)} buffers and {len(posted)} messages, expected {FRAMES} of each")
        for frame, (faces, message) in enumerate(zip(metas, posted)):
            if len(faces) != 1:
                fail(f"{name}: frame {frame} carries {len(faces)} embedding metas after the converter, expected 1")
            roi_id, model, backend, precision, norm, status, embedding, width = faces[0]
            if (roi_id != -1 or backend != "cpu-reference" or precision != "bf16-exact" or not model
                    or status != GstTaconite.EmbeddingStatus.COMPUTED):
                fail(f"{name}: frame {frame}: roi_id={roi_id} model={model!r} backend={backend!r} "
                     f"precision={precision!r} status={status}")
            if len(embedding) != 512 or abs(math.sqrt(sum(v * v for v in embedding)) - 1.0) > 1e-4 or norm <= 0:
                fail(f"{name}: frame {frame}: {len(embedding)} values, not a unit 512-vector (norm {norm})")
            if embedding != message:
                fail(f"{name}: frame {frame}: the meta's embedding differs from the element's message")
        check_loaded_libraries()
        print(f"ok: {name}: {FRAMES} frames, output width {metas[0][0][6]}, embedding meta read through GstTaconite")


if __name__ == "__main__":
    main()
