#!/usr/bin/python3
"""How many 720p25 H.264 cameras one box analyses in real time with recognition on (not a test).

Usage: bench/gst/cameras_per_box.py [--build DIR] [--configs NAME,...] [--models onnx,ir18]
                                    [--only stages,throughput,realtime] [--rounds N] [--max-cameras N]
                                    [--throughput-cameras N] [--json FILE]

Bench-only package (not needed by the tests): apt-get install gstreamer1.0-plugins-ugly (x264enc,
which writes High-profile H.264 as cameras send it); without it openh264enc (gstreamer1.0-plugins-bad,
in scripts/apt-packages.txt) writes Constrained Baseline, which decodes faster than a camera's stream.

The clip (made once into a cache directory, never committed): ../shared/realfaces' real clip
(short_hamilton_clip.mp4, 640x360, two real people) taken frame by frame at 25 fps (its first 250
frames: 10 s, motion at 0.83x), scaled to 1280x720 and encoded like a camera's stream (H.264 High,
3 Mbit/s, a key frame every 2 s, no B-frames); without ../shared/realfaces, the demo's synthetic
camera (pipelines/make_demo_video.py) letterboxed to 1280x720. Its five 2-s key-frame groups are put
in five rotated orders (no re-encoding), so cameras k and k+1 show different moments; camera k also
starts 120 ms * k / N later, so the cameras' detector frames (one in 3) do not all fall together.

Each camera, one pipeline each, all in this one process (so all share one engine per model):
  filesrc ! qtdemux ! h264parse [! identity sync=true] ! avdec_h264 ! CONVERT ! taconitedetect
  interval=3 ! taconitetrack ! taconiteadaface reinfer-mode=best ! taconiteidentify (a gallery enrolled
  from the real photos) ! taconitepublish messages=tracks ! fakesink
for each --models entry: `onnx`, the real MobileFaceNet embedder (opencv-dnn backend), and `ir18`, an
IR-18 test bundle (taconite-mkbundle) on the `cpu` backend. Each --configs entry (CONFIGS below: the
chain as documented, then each change) runs three measurements:

1. stages: CPU ms per camera-frame by stage (decode, convert/scale, detect, track, embed, identify,
   publish): one unpaced camera through the chain cut after each stage; process CPU (getrusage, all
   threads) of the 10-s clip minus that of its first 2 s, over the 200 frames between, so start-up
   cancels; a stage's figure is its pipeline's minus the one before; median of --rounds, interleaved.
2. throughput: --throughput-cameras unpaced cameras at once: wall time to analyse N x 10 s, and the
   real-time cameras it implies (N x 10 s / wall): an upper bound.
3. realtime: N cameras paced as cameras are (identity sync=true releases each encoded frame at its
   due time), for N from throughput's estimate up or down to the largest N (<= --max-cameras) at
   which every camera is real time: every frame analysed (none is dropped: the detector runs on one
   in 3, 25/3 fps, and taconiteadaface embeds as reinfer-mode=best decides; the embeddings computed
   are counted), its lag (wall time the frame leaves the chain - its due time) at most 0.5 s at the
   95th percentile, and not growing: the median lag of the last third of the frames at most 0.1 s
   above that of the first third (a camera short of 2 % of real time adds 0.2 s over the 10 s).

Prints markdown tables with the ISA and the load average at each figure; --json appends one JSON line
per measurement. Set OMP_WAIT_POLICY=passive on a shared machine (this script sets it for itself).
"""
import argparse
import collections
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from real_clip_modes import DESCRIPTION, MODEL  # noqa: E402  the real embedder and its description

FPS = 25
CLIP_FRAMES = 250  # 10 s
GOP = 50  # a key frame every 2 s
SHORT_FRAMES = GOP  # the short run: the clip's first key-frame group
DETECT_INTERVAL = 3
STAGGER_S = 0.12  # cameras' starts spread over this, so their detector frames differ
LAG_BOUND_S = 0.5
GROWTH_BOUND_S = 0.1
STAGES = ["decode", "convert/scale", "detect", "track", "embed", "identify", "publish"]

# The chain's settings: the chain as documented, then each change on top of the ones before it.
CHANGES = [
    # As README's recommended chain and pipelines/two-camera-tracks.sh had it.
    # (YuNet on OpenCV DNN, what taconitedetect ran before its runtime property.)
    ("documented", {"decoder": "", "convert": "videoconvert", "detect": "runtime=opencv", "adaface": ""}),
    # Faces taconitetrack has not confirmed carry no id: not embedded until they have one.
    ("untracked-never", {"adaface": "untracked=never"}),
    # avdec_h264 outputs I420, which every element takes: no converter (it passed I420 through).
    ("no-videoconvert", {"convert": ""}),
    # One decoder thread per camera (the default, 0, starts frame threads per core for each camera,
    # and frame threads hold frames back).
    ("decoder-1-thread", {"decoder": "max-threads=1"}),
    # YuNet on oneDNN (taconitedetect's default runtime where built): the same faces for less CPU.
    ("yunet-onednn", {"detect": "runtime=onednn"}),
    # At most one face to the engine per frame: a crowd arriving on several cameras at once is embedded over
    # several frames instead of holding them (the live chain's setting, taconite-run's too).
    ("max-embeddings-1", {"adaface": "untracked=never max-embeddings=1"}),
    # IR-18 on int8 convs (taconiteadaface precision=int8; the cpu backend only, not the default: cosine
    # ~0.996-0.999 to f32 on real faces, docs/backends.md#int8). Run it with --models ir18.
    ("int8", {"adaface": "untracked=never max-embeddings=1 precision=int8"}),
    # IR-18 on direct f32 convs (precision=f32): `auto`'s choice before it raced f32 on Winograd convs, where
    # bf16 is slow (run it with ONEDNN_MAX_CPU_ISA=AVX512_CORE_VNNI beside max-embeddings-1; --models ir18).
    ("f32-direct", {"adaface": "untracked=never max-embeddings=1 precision=f32"}),
    # Tracked faces embedded in the background (taconite-run's live cameras): frames never wait for the engine,
    # so its embeddings no longer add to a frame's lag; the same embeddings, reaching the track a frame or two later.
    ("async-tracks", {"adaface": "untracked=never max-embeddings=1 async-tracks=true"}),
    # YuNet on a smaller network input, for cameras whose faces are large: it finds fewer small faces.
    ("yunet-480x288", {"detect": "runtime=onednn input-width=480 input-height=288"}),
    ("yunet-320x192", {"detect": "runtime=onednn input-width=320 input-height=192"}),
]
RECOMMENDED = "yunet-onednn"  # every change that costs no recognition (YuNet on oneDNN is taconitedetect's default)
CONFIGS = {}
for _name, _change in CHANGES:
    CONFIGS[_name] = dict(list(CONFIGS.values())[-1] if CONFIGS else {}, **_change)


def environment_ready(build):
    """This process's environment for the build tree's plugin and typelib; re-executes itself once to set it
    (the dynamic loader and OpenMP read theirs at start)."""
    if os.environ.get("TACONITE_CAMERAS_BUILD") == build:
        return
    meta = os.path.join(build, "gst", "meta")
    before = lambda name: [os.environ[name]] if os.environ.get(name) else []  # noqa: E731
    os.execve(sys.executable, [sys.executable] + sys.argv, dict(
        os.environ, TACONITE_CAMERAS_BUILD=build, GST_PLUGIN_PATH=os.path.join(build, "gst", "plugin"),
        GI_TYPELIB_PATH=":".join([meta] + before("GI_TYPELIB_PATH")),
        LD_LIBRARY_PATH=":".join([meta] + before("LD_LIBRARY_PATH")), OMP_WAIT_POLICY="passive",
        OPENCV_LOG_LEVEL="ERROR"))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--realfaces", default=os.path.join(ROOT, "..", "shared", "realfaces"))
    p.add_argument("--yunet", default=os.path.join(ROOT, "..", "shared", "models", "face_detection_yunet_2023mar.onnx"))
    p.add_argument("--configs", default=f"{CHANGES[0][0]},{RECOMMENDED},{CHANGES[-1][0]}",
                   help="comma-separated, of (each with the changes before it): " + ", ".join(CONFIGS))
    p.add_argument("--models", default="onnx,ir18", help="onnx (the real MobileFaceNet), ir18 (test bundle, cpu)")
    p.add_argument("--only", default="stages,throughput,realtime")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--max-cameras", type=int, default=16)
    p.add_argument("--throughput-cameras", type=int, default=8)
    p.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "taconite-cameras-per-box"),
                   help="where the clips, bundle and galleries are kept between runs")
    p.add_argument("--json")
    a = p.parse_args()
    a.build = os.path.abspath(a.build)
    for name in a.configs.split(","):
        if name not in CONFIGS:
            p.error(f"unknown config {name!r}; known: {', '.join(CONFIGS)}")
    if not set(a.only.split(",")) <= {"stages", "throughput", "realtime"}:
        p.error("--only takes stages, throughput, realtime")
    if not 1 <= a.max_cameras <= 64 or not 1 <= a.throughput_cameras <= 64 or not 1 <= a.rounds <= 50:
        p.error("--max-cameras and --throughput-cameras must be within 1..64, --rounds within 1..50")
    return a


ARGS = parse_args()
environment_ready(ARGS.build)

import gi  # noqa: E402

gi.require_version("Gst", "1.0")
gi.require_version("GstTaconite", "1.0")
from gi.repository import Gst, GstTaconite  # noqa: E402


def run(*args):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(map(str, args))} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return r.stdout


def launch(description):
    """Runs a gst-launch description in this process to its end."""
    pipeline = Gst.parse_launch(description)
    pipeline.set_state(Gst.State.PLAYING)
    msg = pipeline.get_bus().timed_pop_filtered(Gst.CLOCK_TIME_NONE, Gst.MessageType.ERROR | Gst.MessageType.EOS)
    pipeline.set_state(Gst.State.NULL)
    if msg.type == Gst.MessageType.ERROR:
        err, debug = msg.parse_error()
        sys.exit(f"failed: {description}\n{err.message} ({debug})")


def load():
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def isa():
    """The first CPU's name, family and model, and its vector ISA, from /proc/cpuinfo."""
    first = open("/proc/cpuinfo", encoding="utf-8").read().split("\n\n")[0]
    fields = dict((k.strip(), v.strip()) for k, v in (line.split(":", 1) for line in first.splitlines() if ":" in line))
    flags = fields.get("flags", "").split()
    vector = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE"
    extras = [f for f in ("avx512_bf16", "avx512_vnni", "amx_tile") if f in flags]
    name = f"{fields.get('model name', '?')} (family {fields.get('cpu family', '?')} model {fields.get('model', '?')})"
    return f"{name}, {os.cpu_count()} cores, {vector}" + (f" ({', '.join(extras)})" if extras else "")


# ------------------------------------------------------------------------------------------------
# The clip


def encoder():
    if Gst.ElementFactory.find("x264enc"):
        return ("x264enc bitrate=3000 key-int-max=50 bframes=0 speed-preset=faster threads=1 "
                "option-string=scenecut=0 ! video/x-h264,profile=high"), "x264 High"
    return "openh264enc bitrate=3000000 gop-size=50 complexity=high", "OpenH264 Constrained Baseline"


def count_frames(clip):
    pipeline = Gst.parse_launch(f'filesrc location="{clip}" ! qtdemux ! fakesink name=sink')
    frames = []
    pipeline.get_by_name("sink").get_static_pad("sink").add_probe(
        Gst.PadProbeType.BUFFER, lambda pad, info: frames.append(1) or Gst.PadProbeReturn.OK)
    pipeline.set_state(Gst.State.PLAYING)
    pipeline.get_bus().timed_pop_filtered(Gst.CLOCK_TIME_NONE, Gst.MessageType.ERROR | Gst.MessageType.EOS)
    pipeline.set_state(Gst.State.NULL)
    return len(frames)


def make_clips(cache, realfaces):
    """The 10-s 720p25 clip's five rotations and its first 2 s; returns (rotations, short, source, codec)."""
    video = os.path.join(realfaces, "video", "short_hamilton_clip.mp4")
    source = "real clip" if os.path.isfile(video) else "synthetic camera"
    enc, codec = encoder()
    folder = os.path.join(cache, f"clips-{source.replace(' ', '-')}-{codec.split()[0]}")
    rotations = [os.path.join(folder, f"rotation{r}.mp4") for r in range(CLIP_FRAMES // GOP)]
    short = os.path.join(folder, "first-2s.mp4")
    complete = os.path.join(folder, "complete")  # written once every clip is checked
    if os.path.exists(complete):
        return rotations, short, source, codec
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    # CLIP_FRAMES frames at 25 fps through a raw file (rawvideoparse stamps them), then scaled to 720p.
    raw = os.path.join(folder, "frames.i420")
    if source == "real clip":  # its 29.97 fps frames taken one by one
        width, height, decoded = 640, 360, f'filesrc location="{video}" ! decodebin'
    else:
        synthetic = os.path.join(folder, "synthetic.avi")
        run("/usr/bin/python3", os.path.join(ROOT, "pipelines", "make_demo_video.py"), synthetic, "--seconds",
            CLIP_FRAMES // FPS + 1)
        width, height = 480, 480
        decoded = f'filesrc location="{synthetic}" ! decodebin ! videorate ! video/x-raw,framerate={FPS}/1'
    launch(f"{decoded} ! videoconvert ! videoscale ! video/x-raw,format=I420,width={width},height={height} ! "
           f'filesink location="{raw}"')
    frame_bytes = width * height * 3 // 2
    if os.path.getsize(raw) < CLIP_FRAMES * frame_bytes:
        sys.exit(f"{source}: fewer than {CLIP_FRAMES} frames")
    os.truncate(raw, CLIP_FRAMES * frame_bytes)
    frames = (f'filesrc location="{raw}" ! rawvideoparse width={width} height={height} format=i420 '
              f"framerate={FPS}/1 ! videoscale add-borders=true ! video/x-raw,width=1280,height=720")
    whole = os.path.join(folder, "whole.mp4")
    launch(f'{frames} ! videoconvert ! video/x-raw,format=I420 ! {enc} ! h264parse ! mp4mux ! '
           f'filesink location="{whole}"')
    for f in (raw, os.path.join(folder, "synthetic.avi")):
        if os.path.exists(f):
            os.remove(f)
    # Cut at the key frames (no re-encoding) and joined again in rotated orders.
    launch(f'filesrc location="{whole}" ! qtdemux ! h264parse ! splitmuxsink muxer=mp4mux '
           f'location="{folder}/piece%02d.mp4" max-size-time={GOP * Gst.SECOND // FPS}')
    pieces = sorted(f for f in os.listdir(folder) if f.startswith("piece"))
    if len(pieces) != len(rotations):
        sys.exit(f"the clip was cut into {len(pieces)} pieces, not {len(rotations)}: key frames not every {GOP} frames")
    for r, rotation in enumerate(rotations):
        order = os.path.join(folder, f"order{r}")
        os.makedirs(order)
        for i in range(len(pieces)):
            os.symlink(os.path.join(folder, pieces[(r + i) % len(pieces)]), os.path.join(order, f"{i:02d}.mp4"))
        launch(f'splitmuxsrc location="{order}/*.mp4" ! h264parse ! mp4mux ! filesink location="{rotation}"')
        shutil.rmtree(order)
    shutil.copy(os.path.join(folder, pieces[0]), short)
    for clip, frames in [(r, CLIP_FRAMES) for r in rotations] + [(short, SHORT_FRAMES)]:
        if count_frames(clip) != frames:
            sys.exit(f"{clip} holds {count_frames(clip)} frames, not {frames}")
    open(complete, "w", encoding="utf-8").close()
    return rotations, short, source, codec


# ------------------------------------------------------------------------------------------------
# Models and galleries


class Model:
    def __init__(self, key, label, path, backend, gallery):
        self.key, self.label, self.path, self.backend, self.gallery = key, label, path, backend, gallery


def people_photos(realfaces):
    photos = os.path.join(realfaces, "photos")
    if os.path.isdir(photos):
        return [(p, os.path.join(photos, p)) for p in sorted(os.listdir(photos)) if not p.startswith("_")]
    return [("astronaut", "/usr/lib/python3/dist-packages/skimage/data/astronaut.png")]


def make_gallery(cache, key, model_path, people, yunet):
    gallery = os.path.join(cache, f"gallery-{key}.db")
    stamp = gallery + ".stamp"
    weights = model_path if model_path.endswith(".onnx") else os.path.join(model_path, "manifest.txt")
    wanted = json.dumps([model_path, os.path.getmtime(weights), people])  # made again when any of these changes
    if os.path.exists(gallery) and os.path.exists(stamp) and open(stamp, encoding="utf-8").read() == wanted:
        return gallery
    cli = os.path.join(ARGS.build, "tools", "gallery", "taconite-gallery")
    for f in (gallery, gallery + "-wal", gallery + "-shm", stamp):
        if os.path.exists(f):
            os.remove(f)
    run(cli, "create", gallery, "--model", model_path)
    for name, photos in people:
        run(cli, "enroll", gallery, "--model", model_path, "--detector", yunet, "--name", name, "--largest", photos)
    with open(stamp, "w", encoding="utf-8") as f:
        f.write(wanted)
    return gallery


def make_models(cache, keys):
    people = people_photos(ARGS.realfaces)
    models = []
    for key in keys:
        if key == "onnx":
            real = os.path.join(ARGS.realfaces, "models", MODEL)
            if not os.path.isfile(real):
                print(f"no {real}: the onnx row is left out", file=sys.stderr)
                continue
            path = os.path.join(cache, MODEL)
            if not os.path.exists(path):
                os.symlink(os.path.abspath(real), path)
            with open(path[:-len(".onnx")] + ".json", "w", encoding="utf-8") as f:
                json.dump(DESCRIPTION, f)
            models.append(Model(key, "MobileFaceNet (real, ONNX, opencv-dnn)", path, "auto",
                                make_gallery(cache, key, path, people, ARGS.yunet)))
        elif key == "ir18":
            path = os.path.join(cache, "ir18")
            if not os.path.exists(os.path.join(path, "manifest.txt")):
                run(os.path.join(ARGS.build, "tools", "taconite-mkbundle"), "--model", "ir18", "--out", path, "--force")
            models.append(Model(key, "IR-18 (test bundle, cpu backend)", path, "cpu",
                                make_gallery(cache, key, path, people, ARGS.yunet)))
        else:
            sys.exit(f"unknown model {key!r} (onnx, ir18)")
    return models


# ------------------------------------------------------------------------------------------------
# Pipelines


def stage_parts(config, model, stream, out_dir):
    """(stage, gst-launch fragment or None) for each stage after the decoder."""
    m = model
    return [
        ("convert/scale", config["convert"] or None),
        ("detect", f'taconitedetect model="{ARGS.yunet}" interval={DETECT_INTERVAL} {config["detect"]}'.strip()),
        ("track", "taconitetrack"),
        ("embed", f'taconiteadaface model="{m.path}" backend={m.backend} input-mode=rois reinfer-mode=best '
                  f'{config["adaface"]}'.strip()),
        ("identify", f'taconiteidentify gallery="{m.gallery}" model="{m.path}" stream={stream}'),
        ("publish", f'taconitepublish messages=tracks method=file location="{out_dir}/{stream}-tracks.jsonl" '
                    f"stream={stream}"),
    ]


def camera(config, model, stream, clip, out_dir, upto="publish", paced=False):
    parts = [f'filesrc location="{clip}"', "qtdemux", "h264parse"]
    if paced:
        parts.append("identity sync=true")  # the encoded frame arrives at its due time, as from a camera
    parts.append(f"avdec_h264 {config['decoder']}".strip())
    if upto != "decode":
        for stage, part in stage_parts(config, model, stream, out_dir):
            if part:
                parts.append(part)
            if stage == upto:
                break
    parts.append("fakesink name=sink sync=false")
    return " ! ".join(parts)


class Camera:
    """One camera's pipeline and, per frame that left its chain, the wall time and the frame's running time."""

    def __init__(self, description, measure, clock):
        self.pipeline = Gst.parse_launch(description)
        self.pipeline.use_clock(clock)
        self.clock = clock
        self.left, self.running = [], []  # clock seconds the frame left the chain; its running time
        self.faces = self.computed = 0  # face ROIs seen, embeddings computed
        self.segment = None
        self.base = 0  # the pipeline's base time, clock nanoseconds
        self.error = None
        self.done = False
        if measure:
            pad = self.pipeline.get_by_name("sink").get_static_pad("sink")
            pad.add_probe(Gst.PadProbeType.BUFFER | Gst.PadProbeType.EVENT_DOWNSTREAM, self.on_item)

    def on_item(self, pad, info):
        if info.type & Gst.PadProbeType.EVENT_DOWNSTREAM:
            event = info.get_event()
            if event.type == Gst.EventType.SEGMENT:
                self.segment = event.parse_segment()
            return Gst.PadProbeReturn.OK
        buffer = info.get_buffer()
        self.left.append(self.clock.get_time() / Gst.SECOND)
        self.running.append(self.segment.to_running_time(Gst.Format.TIME, buffer.pts) / Gst.SECOND)
        self.faces += len(GstTaconite.buffer_get_taconite_rois(buffer))
        self.computed += sum(m.status == GstTaconite.EmbeddingStatus.COMPUTED
                             for m in GstTaconite.buffer_get_taconite_embedding_metas(buffer))
        return Gst.PadProbeReturn.OK

    def lags(self):
        """Seconds each frame left the chain after its due time (base time + running time)."""
        return [left - (self.base / Gst.SECOND + running) for left, running in zip(self.left, self.running)]

    def poll(self):
        msg = self.pipeline.get_bus().pop_filtered(Gst.MessageType.ERROR | Gst.MessageType.EOS)
        if msg and msg.type == Gst.MessageType.ERROR:
            err, debug = msg.parse_error()
            self.error = f"{err.message} ({debug})"
        if msg:
            self.done = True
        return self.done

    def stop(self):
        self.pipeline.set_state(Gst.State.NULL)


def run_cameras(descriptions, paced, measure=True, timeout_s=900):
    """Runs the cameras' pipelines at once; returns (cameras, wall seconds from PLAYING to the last EOS)."""
    clock = Gst.SystemClock.obtain()
    cameras = [Camera(d, measure, clock) for d in descriptions]
    try:
        for c in cameras:
            c.pipeline.set_state(Gst.State.PAUSED)  # loads the models, prerolls the first frame
        for c in cameras:
            if c.pipeline.get_state(Gst.CLOCK_TIME_NONE)[0] == Gst.StateChangeReturn.FAILURE:
                c.poll()
                sys.exit(f"could not start: {c.error}")
        base = clock.get_time() + Gst.SECOND // 10
        for k, c in enumerate(cameras):
            c.base = base + (int(STAGGER_S * Gst.SECOND * k / len(cameras)) if paced else 0)
            c.pipeline.set_start_time(Gst.CLOCK_TIME_NONE)  # the base time below stays
            c.pipeline.set_base_time(c.base)
        started = time.monotonic()
        for c in cameras:
            c.pipeline.set_state(Gst.State.PLAYING)
        while not all(c.poll() for c in cameras):
            if time.monotonic() - started > timeout_s:
                sys.exit(f"{len(cameras)} cameras did not end within {timeout_s} s")
            time.sleep(0.02)
        wall = time.monotonic() - started
        for c in cameras:
            if c.error:
                sys.exit(f"a camera failed: {c.error}")
        return cameras, wall
    finally:
        for c in cameras:
            c.stop()


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# ------------------------------------------------------------------------------------------------
# The three measurements


def measure_stages(config, models, clips, out_dir):
    """{(model key or None, stage): median CPU ms per frame of the chain up to that stage}."""
    rotations, short = clips
    jobs = [(None, "decode")] + [(None, s) for s, part in stage_parts(config, models[0], "cam0", out_dir)[:3] if part]
    jobs += [(m, s) for m in models for s in ("embed", "identify", "publish")]
    per_frame = collections.defaultdict(list)
    run_cameras([camera(config, models[0], "cam0", short, out_dir)], paced=False, measure=False)  # warm-up
    for _ in range(ARGS.rounds):
        for model, stage in jobs:
            spent = []
            for clip in (short, rotations[0]):
                description = camera(config, model or models[0], "cam0", clip, out_dir, upto=stage)
                before = cpu_seconds()
                run_cameras([description], paced=False, measure=False)
                spent.append(cpu_seconds() - before)
            per_frame[(model.key if model else None, stage)].append(1000 * (spent[1] - spent[0]) /
                                                                    (CLIP_FRAMES - SHORT_FRAMES))
    return {job: statistics.median(values) for job, values in per_frame.items()}, per_frame


def stage_table(stages, models):
    """Per model, each stage's own CPU ms per frame (its pipeline minus the one before) and the whole chain."""
    rows = {}
    for m in models:
        previous, own = 0.0, {}
        for stage in STAGES:
            key = (m.key if stage in ("embed", "identify", "publish") else None, stage)
            if key not in stages:
                own[stage] = None
                continue
            own[stage] = stages[key] - previous
            previous = stages[key]
        own["chain"] = previous
        rows[m.key] = own
    return rows


def lag_verdict(cam):
    lags = cam.lags()
    third = max(1, len(lags) // 3)
    growth = statistics.median(lags[-third:]) - statistics.median(lags[:third])
    p95 = sorted(lags)[min(len(lags) - 1, math.ceil(0.95 * len(lags)) - 1)]
    fps = (len(cam.left) - 1) / (cam.left[-1] - cam.left[0]) if len(cam.left) > 1 else 0.0
    ok = len(lags) == CLIP_FRAMES and p95 <= LAG_BOUND_S and growth <= GROWTH_BOUND_S
    return {"frames": len(lags), "p50_s": statistics.median(lags), "p95_s": p95, "max_s": max(lags),
            "growth_s": growth, "fps": fps, "embeddings": cam.computed, "realtime": ok}


def realtime_run(config, model, n, clips, out_dir):
    rotations, _ = clips
    descriptions = [camera(config, model, f"cam{k}", rotations[k % len(rotations)], out_dir, paced=True)
                    for k in range(n)]
    at_start = load()
    cameras, wall = run_cameras(descriptions, paced=True, timeout_s=120 + 30 * n)
    verdicts = [lag_verdict(c) for c in cameras]
    worst = max(verdicts, key=lambda v: (not v["realtime"], v["p95_s"]))
    return {"cameras": n, "realtime": all(v["realtime"] for v in verdicts), "worst": worst,
            "embeddings": [v["embeddings"] for v in verdicts], **track_ends(out_dir, n), "wall_s": wall,
            "load": at_start}


def search_realtime(config, model, start, clips, out_dir, report):
    """The largest N <= --max-cameras with every camera real time, stepping from `start`."""
    results = {}
    n = min(max(1, start), ARGS.max_cameras)
    while n not in results:
        results[n] = r = realtime_run(config, model, n, clips, out_dir)
        report(r)
        if r["realtime"] and n < ARGS.max_cameras and n + 1 not in results:
            n += 1
        elif not r["realtime"] and n > 1 and n - 1 not in results:
            n -= 1
    return max((k for k, r in results.items() if r["realtime"]), default=0), results


def track_ends(out_dir, n):
    """The cameras' track end events: how many, how many named, and the names."""
    ends = []
    for k in range(n):
        with open(os.path.join(out_dir, f"cam{k}-tracks.jsonl"), encoding="utf-8") as f:
            ends += [e for e in map(json.loads, f) if e.get("event") == "end"]
    named = [e for e in ends if e.get("label_state") == "known"]
    return {"track_ends": len(ends), "named": len(named), "names": sorted({e["label"] for e in named})}


def throughput_run(config, model, n, clips, out_dir):
    rotations, _ = clips
    descriptions = [camera(config, model, f"cam{k}", rotations[k % len(rotations)], out_dir) for k in range(n)]
    at_start, before = load(), cpu_seconds()
    cameras, wall = run_cameras(descriptions, paced=False)
    return {"cameras": n, "wall_s": wall, "realtime_cameras": n * CLIP_FRAMES / FPS / wall,
            "cpu_ms_per_camera_frame": 1000 * (cpu_seconds() - before) / (n * CLIP_FRAMES),
            "faces_per_camera_frame": sum(c.faces for c in cameras) / (n * CLIP_FRAMES),
            "embeddings_per_camera_frame": sum(c.computed for c in cameras) / (n * CLIP_FRAMES),
            **track_ends(out_dir, n), "load": at_start}


# ------------------------------------------------------------------------------------------------


def emit(record):
    if ARGS.json:
        with open(ARGS.json, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")


def fmt(value, digits=2):
    return "—" if value is None else f"{value:.{digits}f}"


def print_progress(what, record):
    """One line per measurement as it ends (the tables come at the end)."""
    if what == "throughput":
        t = record
        print(f"  {t['model']}: {t['cameras']} cameras unpaced in {t['wall_s']:.1f} s, "
              f"{t['cpu_ms_per_camera_frame']:.2f} CPU ms per camera-frame, {t['track_ends']} tracks ended, "
              f"{t['named']} named (load {t['load']})", flush=True)
    elif what == "realtime":
        r, w = record, record["worst"]
        print(f"  {r['model']} paced: {r['cameras']} cameras {'real time' if r['realtime'] else 'NOT real time'}: "
              f"worst camera {w['frames']} frames, {w['fps']:.1f} fps, lag p50 / p95 / max {w['p50_s']:.3f} / "
              f"{w['p95_s']:.3f} / {w['max_s']:.3f} s, growth {w['growth_s']:+.3f} s; {sum(r['embeddings'])} "
              f"embeddings, {r['track_ends']} tracks ended, {r['named']} named (load {r['load']})", flush=True)
    else:
        print(f"  stages done (load {record['load']} at start, {load()} at end)", flush=True)


def measure_config(name, models, clips, out_dir, machine, only):
    """Runs the measurements asked for on one config; returns {"stages": rows, model key: {...}}."""
    config = CONFIGS[name]
    print(f"\n{name}: {json.dumps(config)}", flush=True)
    result = {}
    if "stages" in only:
        at_start = load()
        medians, samples = measure_stages(config, models, clips, out_dir)
        result["stages"] = stage_table(medians, models)
        record = {"config": name, "measure": "stages", "isa": machine, "load": at_start, "rows": result["stages"],
                  "samples": {f"{k[0]}:{k[1]}": v for k, v in samples.items()}}
        emit(record)
        print_progress("stages", record)
    for model in models:
        mine = result[model.key] = {}
        estimate = ARGS.throughput_cameras
        if "throughput" in only:
            mine["throughput"] = t = {"config": name, "measure": "throughput", "model": model.key, "isa": machine,
                                      **throughput_run(config, model, ARGS.throughput_cameras, clips, out_dir)}
            emit(t)
            print_progress("throughput", t)
            estimate = int(t["realtime_cameras"])
        if "realtime" in only:
            def report(r):
                record = {"config": name, "measure": "realtime", "model": model.key, "isa": machine, **r}
                emit(record)
                print_progress("realtime", record)

            mine["largest"], runs = search_realtime(config, model, estimate, clips, out_dir, report)
            mine["realtime_loads"] = sorted({r["load"] for r in runs.values()})
    return result


def print_tables(results, models):
    configs = list(results)
    if all("stages" in results[c] for c in configs):
        print(f"\nCPU ms per camera-frame by stage: one camera, unpaced, median of {ARGS.rounds} (each stage: its "
              "pipeline minus the one before)")
        for m in models:
            print(f"\n{m.label}\n\n| stage | " + " | ".join(configs) + " |\n|---|" + "---|" * len(configs))
            for stage in STAGES + ["chain"]:
                print(f"| {stage} | " + " | ".join(fmt(results[c]["stages"][m.key][stage]) for c in configs) + " |")
    print(f"\nWhole chain, {ARGS.throughput_cameras} cameras at once (cameras by CPU: {os.cpu_count()} cores x 1000 / "
          f"({FPS} x CPU ms per camera-frame))\n")
    print("| config | model | CPU ms / camera-frame | cameras by CPU | by throughput (unpaced) | largest N paced, "
          "real time | faces / embeddings per camera-frame | tracks ended / named | load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for c in configs:
        for m in models:
            mine = results[c].get(m.key, {})
            t = mine.get("throughput")
            largest = mine.get("largest")
            paced = "—" if largest is None else f"{largest}{'+' if largest == ARGS.max_cameras else ''}"
            loads = "; ".join(([t["load"]] if t else []) + mine.get("realtime_loads", []))
            if t:
                by_cpu = os.cpu_count() * 1000 / (FPS * t["cpu_ms_per_camera_frame"])
                print(f"| {c} | {m.key} | {t['cpu_ms_per_camera_frame']:.2f} | {by_cpu:.1f} | "
                      f"{t['realtime_cameras']:.1f} | {paced} | {t['faces_per_camera_frame']:.2f} / "
                      f"{t['embeddings_per_camera_frame']:.3f} | {t['track_ends']} / {t['named']} | {loads} |")
            else:
                print(f"| {c} | {m.key} | — | — | — | {paced} | — | — | {loads} |")


def main():
    Gst.init(None)
    if not os.path.isfile(ARGS.yunet):
        sys.exit(f"no YuNet model at {ARGS.yunet} (docs/models.md)")
    os.makedirs(ARGS.cache, exist_ok=True)
    only = set(ARGS.only.split(","))
    out_dir = tempfile.mkdtemp(prefix="taconite-cameras-")
    try:
        rotations, short, source, codec = make_clips(ARGS.cache, ARGS.realfaces)
        models = make_models(ARGS.cache, ARGS.models.split(","))
        machine = isa()
        print(f"{machine}; clip: {source}, 1280x720 {FPS} fps {codec}, {CLIP_FRAMES} frames; load {load()} at start")
        results = {name: measure_config(name, models, (rotations, short), out_dir, machine, only)
                   for name in ARGS.configs.split(",")}
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    print_tables(results, models)
    print(f"\nload {load()} at end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
