#!/usr/bin/python3
"""taconitecamera under overload through the recognition chain, against a real RTSP server on
127.0.0.1 (tests/camera/rtsp_server.py --image: a still photo with a face, sent live at 25 fps):

  taconitecamera ! videoconvert ! taconitedetect (YuNet) interval=3 ! taconitetrack !
  taconiteadaface reinfer-mode=best max-queued=1 ! identity sleep-time=SLOW ! taconiteidentify !
  taconitepublish ! fakesink

The identity stands for a slower machine: it makes the chain take at least SLOW a frame (slower
than 25 fps whatever the CPU), inside taconiteadaface's output thread, where any frames queued in
front of it add lag (with its default max-queued=8 the lag is ~10 chain frames, ~0.9 s here; the
live chain of docs/cameras.md sets max-queued=1: ~3 chain frames).
Cases (both by default; --only NAME runs one):
  one  after the overload warning: the lag (running time at the sink minus the frame's PTS) at most
       LAG_BOUND s and LAG_FRAMES chain frames, the longest gap between frames leaving the chain
       at most GAP_RATIO x their mean gap (the chain's per-frame time) + GAP_SLACK s, exactly one
       overload warning naming the camera and the rates, the camera's counters saying frames
       were dropped
  two  two cameras in one process sharing the engine, each overloaded: neither starved (each
       analyses at least half of the other's rate), then camera a's server killed: b's analysed
       rate while a is away at least B_KEPT of before, and b has no outage
The bounds are generous against what is expected (lag ~ three chain frames, gaps ~ one chain
frame) so that a loaded machine passes, but a queue holding frames in front of the slow part or a
starved camera fails them. Speed is measured by bench/camera/camera_overload.py, not here.

Usage: camera_overload_test.py PLUGIN_DIR MKBUNDLE GALLERY_TOOL YUNET.onnx WORK_DIR [--only one|two]
Exits 77 (skipped) without python3-gi, gst-rtsp-server's typelib, the YuNet model or the photo.
"""
import argparse
import os
import signal
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "rtsp_server.py")
PHOTO = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
SLOW_US = 80000      # the chain takes at least 80 ms a frame: at most 12.5 of 25 frames/s
LAG_BOUND = 1.0      # s: issue 33's target
LAG_FRAMES = 5       # and at most this many chain frames (expected ~3: the camera's, the queue's, its own)
GAP_RATIO, GAP_SLACK = 2.0, 0.25
B_KEPT = 0.8


def skip(why):
    print(f"skipped: {why}")
    sys.exit(77)


try:
    import gi
    gi.require_version("Gst", "1.0")
    from gi.repository import Gst
except (ImportError, ValueError):
    skip("python3-gi with Gst 1.0 is not installed")


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server():
    port = free_port()
    server = subprocess.Popen([sys.executable, SERVER, str(port), "--image", PHOTO, "--size", "640x480", "--fps", "25"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if not server.stdout.readline().startswith("ready"):
        server.wait(timeout=10)
        if server.returncode == 77:
            skip(server.stderr.read().strip())
        raise Failure(f"the RTSP server did not start: {server.stderr.read().strip()}")
    return server, port


class Chain:
    """The pipeline of one or more camera branches; per branch the frames leaving it (monotonic
    time, lag) and the bus's overload warnings and camera messages."""

    def __init__(self, args, ports):
        self.lock = threading.Condition()
        self.frames = {name: [] for name in ports}
        self.warnings, self.messages, self.errors = [], [], []
        self.pipeline = Gst.parse_launch(" ".join(self.branch(args, name, port) for name, port in ports.items()))
        for name in ports:
            sink = self.pipeline.get_by_name(f"sink_{name}")
            sink.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, self._probe, name)
        bus = self.pipeline.get_bus()
        bus.enable_sync_message_emission()
        bus.connect("sync-message", self._message)

    @staticmethod
    def branch(args, name, port):
        return (f"taconitecamera name=camera_{name} stream={name} uri=rtsp://127.0.0.1:{port}/cam retry-interval=1 ! "
                f'videoconvert ! taconitedetect model="{args.yunet}" interval=3 ! taconitetrack ! '
                f'taconiteadaface model="{args.bundle}" input-mode=rois reinfer-mode=best max-queued=1 ! '
                f"identity sleep-time={SLOW_US} ! "
                f'taconiteidentify gallery="{args.gallery}" model="{args.bundle}" stream={name} ! '
                f'taconitepublish messages=tracks method=file location="{args.work}/{name}.jsonl" stream={name} ! '
                f"fakesink name=sink_{name} sync=false")

    def _probe(self, pad, info, name):
        clock = self.pipeline.get_clock()
        running = clock.get_time() - self.pipeline.get_base_time()
        with self.lock:
            self.frames[name].append((time.monotonic(), (running - info.get_buffer().pts) / Gst.SECOND))
        return Gst.PadProbeReturn.OK

    def _message(self, bus, message):
        with self.lock:
            s = message.get_structure()
            if message.type == Gst.MessageType.ELEMENT and s.has_name("taconite-camera"):
                self.messages.append((s.get_string("stream"), s.get_string("state")))
            elif message.type == Gst.MessageType.WARNING:
                self.warnings.append(message.parse_warning()[0].message)
            elif message.type == Gst.MessageType.ERROR:
                self.errors.append(message.parse_error()[0].message)
            self.lock.notify_all()

    def overload_warnings(self, name):
        return [w for w in self.warnings if w.startswith(f"{name}: analysing") and "dropping the rest" in w]

    def wait(self, condition, guard, what):
        deadline = time.monotonic() + guard
        with self.lock:
            while not condition():
                if self.errors:
                    raise Failure(f"{what}: error {self.errors}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Failure(f"{what}: not within {guard:.0f} s")
                self.lock.wait(min(left, 0.1))

    def window(self, name, seconds):
        """The frames of `name` leaving the chain during the next `seconds`."""
        begin = time.monotonic()
        time.sleep(seconds)
        with self.lock:
            return [f for f in self.frames[name] if f[0] >= begin]


def case_one(args):
    server, port = start_server()
    chain = Chain(args, {"door1": port})
    camera = chain.pipeline.get_by_name("camera_door1")
    try:
        chain.pipeline.set_state(Gst.State.PLAYING)
        chain.wait(lambda: chain.overload_warnings("door1"), 30, "one: the overload warning")
        frames = chain.window("door1", 5.0)
        check(len(frames) >= 5, f"one: {len(frames)} frames left the chain in 5 s")
        gaps = [b[0] - a[0] for a, b in zip(frames, frames[1:])]
        per_frame, longest = sum(gaps) / len(gaps), max(gaps)
        lag = max(lag for _, lag in frames)
        check(per_frame >= SLOW_US / 1e6, f"one: {per_frame * 1000:.0f} ms a frame, the chain is not that fast")
        check(lag <= min(LAG_BOUND, LAG_FRAMES * per_frame),
              f"one: frames {lag:.2f} s old when they left the chain (bound {LAG_BOUND} s and {LAG_FRAMES} chain "
              f"frames, {LAG_FRAMES * per_frame:.2f} s)")
        check(longest <= GAP_RATIO * per_frame + GAP_SLACK,
              f"one: a gap of {longest * 1000:.0f} ms between analysed frames, the chain takes "
              f"{per_frame * 1000:.0f} ms a frame")
        with chain.lock:
            warned = chain.overload_warnings("door1")
            check(len(warned) == 1 and chain.messages.count(("door1", "overloaded")) == 1,
                  f"one: {len(warned)} overload warnings, {chain.messages.count(('door1', 'overloaded'))} "
                  f"overloaded messages, expected one each: {warned}")
        check(camera.get_property("frames-dropped") > 0, "one: no frame counted dropped")
        print(f"ok one: {warned[0]}; {len(frames) / 5.0:.1f} frames/s analysed, {per_frame * 1000:.0f} ms a "
              f"frame, longest gap {longest * 1000:.0f} ms, lag at most {lag:.2f} s")
    finally:
        chain.pipeline.set_state(Gst.State.NULL)
        server.kill()
        server.wait()


def case_two(args):
    servers = {name: start_server() for name in "ab"}
    chain = Chain(args, {name: port for name, (_, port) in servers.items()})
    try:
        chain.pipeline.set_state(Gst.State.PLAYING)
        chain.wait(lambda: chain.overload_warnings("a") and chain.overload_warnings("b"), 30,
                   "two: both cameras' overload warnings")
        begin = time.monotonic()
        time.sleep(4.0)
        with chain.lock:
            rates = {n: len([f for f in chain.frames[n] if f[0] >= begin]) / 4.0 for n in "ab"}
        check(min(rates.values()) >= 0.5 * max(rates.values()) > 0,
              f"two: analysed frames/s {rates}: one camera starves the other")
        servers["a"][0].send_signal(signal.SIGKILL)
        servers["a"][0].wait()
        chain.wait(lambda: ("a", "lost") in chain.messages, 15, "two: a lost")
        alone = len(chain.window("b", 4.0)) / 4.0
        with chain.lock:
            check(("b", "lost") not in chain.messages and not chain.errors,
                  f"two: b had an outage or errors {chain.errors}")
        check(alone >= B_KEPT * rates["b"], f"two: b analysed {rates['b']:.1f} frames/s with a, {alone:.1f} without")
        print(f"ok two: analysed frames/s a {rates['a']:.1f}, b {rates['b']:.1f}; b {alone:.1f} while a is away")
    finally:
        chain.pipeline.set_state(Gst.State.NULL)
        for server, _ in servers.values():
            server.kill()
            server.wait()


CASES = {"one": case_one, "two": case_two}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("plugin_dir")
    parser.add_argument("mkbundle")
    parser.add_argument("gallery_tool")
    parser.add_argument("yunet")
    parser.add_argument("work")
    parser.add_argument("--only", choices=sorted(CASES))
    args = parser.parse_args()
    for path, what in ((args.yunet, "the YuNet model"), (PHOTO, "python3-skimage's photo")):
        if not os.path.isfile(path):
            skip(f"no {what} ({path})")
    os.environ["GST_PLUGIN_PATH"] = os.path.abspath(args.plugin_dir)
    Gst.init(None)
    try:
        gi.require_version("GstRtspServer", "1.0")
    except ValueError:
        skip("gir1.2-gst-rtsp-server-1.0 is not installed")
    os.makedirs(args.work, exist_ok=True)
    args.bundle = os.path.join(args.work, "ir-tiny")
    args.gallery = os.path.join(args.work, "gallery.db")
    if not os.path.isfile(os.path.join(args.bundle, "manifest.txt")):
        subprocess.run([args.mkbundle, "--model", "ir-tiny", "--out", args.bundle, "--force"], check=True,
                       capture_output=True)
    if os.path.exists(args.gallery):
        os.remove(args.gallery)
    subprocess.run([args.gallery_tool, "create", args.gallery, "--model", args.bundle], check=True,
                   capture_output=True)
    failed = []
    for name, case in CASES.items():
        if args.only and name != args.only:
            continue
        started = time.monotonic()
        try:
            case(args)
        except Failure as failure:
            print(f"FAIL {name}: {failure}")
            failed.append(name)
        print(f"   ({name}: {time.monotonic() - started:.1f} s)", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
