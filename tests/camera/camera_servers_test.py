#!/usr/bin/python3
"""taconitecamera against real servers on 127.0.0.1: RTSP (tests/camera/rtsp_server.py, gst-rtsp-server)
and MJPEG over HTTP (tests/camera/mjpeg_server.py).

Cases (all by default; --only NAME runs one):
  restarts     the server is killed (SIGKILL) and started again --restarts times mid-stream: each
               time one `lost` and one `back` message, frames again within retry-interval + 2 s of
               the server listening again, one taconite-camera-lost event through taconitetrack,
               running time going on (PTS rising, DISCONT on the first frame after), no EOS or error
               downstream, and no more threads at the end than after the first restart (+2 for
               GLib's pool of idle threads)
  stall        a server that accepts the connection and never answers: the watchdog restarts
  refused      a closed port: max-retries attempts, then an error naming the camera
  not-found    a wrong path on a real server: the same, the server's "Not Found" in the error
  credentials  a server asking for a password: none or a wrong one fail with the camera named,
               the password never in a message; the right one (from a 0600 file) streams
  http         an MJPEG camera over HTTP with a password: streams, is stopped and started again,
               one lost/back pair, frames again
  rtsps        RTSP over TLS with a self-signed certificate: refused (error naming the camera) unless
               tls-ca-file holds it; with it, streams, the server killed and started again, lost/back;
               a tls-ca-file that holds no certificate refused at start
  hls          a live HLS stream (hlssink2, H.264 in 1-s MPEG-TS segments) served over HTTP: streams,
               the web server stopped and started again, one lost/back pair, frames again
  two-cameras  two cameras in one pipeline, one server killed and started again: the other camera
               has no outage and its frame rate during the first's outage is within 10 % of before
  overload     a 15 frames/s camera into a chain taking 200 ms a frame: one "overloaded" message and
               warning with the rates (~5 of 15 frames/s), the frames handed on are the newest (lag
               under 0.5 s), and "keeping-up" once the chain is fast again
  max-rate     the same camera with max-rate=3 into a chain that could take 5 frames/s: ~3 frames/s
               spaced ~1/3 s apart, the rest counted skipped, no overload; the chain slowed to 1.4
               frames/s: an overload of ~1.4 of 3 frames/s (only the frames let through count)
Every wait is bounded; a failure exits 1 naming the case. --report prints per-restart figures
(seconds to frames again, RSS, malloc's heap in use, threads), as bench/camera/camera_restarts.sh
uses it.

Usage: camera_servers_test.py PLUGIN_DIR [--only CASE] [--restarts N] [--codec jpeg|h264] [--report]
                               [--camera "PROPERTIES"]
Exits 77 (skipped) without python3-gi, gst-rtsp-server's typelib or the plugin's taconitecamera.
"""
import argparse
import ctypes
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
SERVER = os.path.join(HERE, "rtsp_server.py")
RETRY_INTERVAL = 1.0
PASSWORD = "Pa55-w0rd-never-shown"


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


def threads():
    return len(os.listdir("/proc/self/task"))


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


def heap_in_use_kib():
    """Bytes malloc hands out now (glibc's mallinfo2: uordblks + hblkhd), in KiB: unlike RSS, memory
    freed but kept by malloc's arenas does not count, so a leak shows here and fragmentation not."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _MallInfo2
    except (OSError, AttributeError):
        return -1
    info = libc.mallinfo2()
    return (info.uordblks + info.hblkhd) // 1024


def rss_kib():
    with open("/proc/self/status", encoding="ascii") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


class Server:
    """rtsp_server.py in its own process, so it can be killed like a camera losing power."""

    def __init__(self, port, codec, credentials=None, tls=None):
        self.port, self.codec, self.credentials, self.tls, self.process = port, codec, credentials, tls, None

    def start(self, guard=15.0):
        args = [sys.executable, SERVER, str(self.port), "--codec", self.codec]
        if self.credentials:
            args += ["--credentials", self.credentials]
        if self.tls:
            args += ["--tls-cert", self.tls[0], "--tls-key", self.tls[1]]
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + guard
        while time.monotonic() < deadline:  # the port may be in TIME_WAIT for a moment: retry
            ready, _, _ = select.select([self.process.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if ready:
                line = self.process.stdout.readline()
                if line.startswith("ready"):
                    return time.monotonic()
                if self.process.poll() is not None:
                    err = self.process.stderr.read()
                    if self.process.returncode == 77:
                        skip(err.strip())
                    if "cannot listen" in err:
                        time.sleep(0.2)
                        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                        text=True)
                        continue
                    raise Failure(f"the RTSP server exited {self.process.returncode}: {err.strip()}")
        raise Failure(f"the RTSP server did not listen within {guard} s")

    def kill(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)
        self.process = None


class Pipeline:
    """taconitecamera ! taconitetrack ! fakesink, recording what reaches the sink and the bus."""

    def __init__(self, description, sink="sink"):
        self.pipeline = Gst.parse_launch(description)
        self.camera = self.pipeline.get_by_name("camera")
        self.lock = threading.Condition()
        self.frames = []          # (monotonic time, pts, discont)
        self.events = []          # (monotonic time, name) of custom events at the sink
        self.messages = []        # (monotonic time, taconite-camera structure as dict)
        self.texts = []           # every warning / error / info text seen
        self.errors = []
        self.eos = False
        sink = self.pipeline.get_by_name(sink)
        sink.get_static_pad("sink").add_probe(
            Gst.PadProbeType.BUFFER | Gst.PadProbeType.EVENT_DOWNSTREAM, self._probe)
        bus = self.pipeline.get_bus()
        bus.enable_sync_message_emission()
        bus.connect("sync-message", self._message)

    def _probe(self, pad, info):
        now = time.monotonic()
        with self.lock:
            if info.type & Gst.PadProbeType.BUFFER:
                buffer = info.get_buffer()
                self.frames.append((now, buffer.pts, buffer.has_flags(Gst.BufferFlags.DISCONT)))
            else:
                event = info.get_event()
                if event.type == Gst.EventType.EOS:
                    self.eos = True
                elif event.type == Gst.EventType.CUSTOM_DOWNSTREAM:
                    self.events.append((now, event.get_structure().get_name()))
            self.lock.notify_all()
        return Gst.PadProbeReturn.OK

    def _message(self, bus, message):
        now = time.monotonic()
        with self.lock:
            if message.type == Gst.MessageType.ELEMENT and message.get_structure().has_name("taconite-camera"):
                s = message.get_structure()
                self.messages.append((now, {s.nth_field_name(i): s.get_value(s.nth_field_name(i))
                                            for i in range(s.n_fields())}))
                self.texts.append(s.to_string())
            elif message.type in (Gst.MessageType.ERROR, Gst.MessageType.WARNING, Gst.MessageType.INFO):
                parse = {Gst.MessageType.ERROR: message.parse_error, Gst.MessageType.WARNING: message.parse_warning,
                         Gst.MessageType.INFO: message.parse_info}[message.type]
                error, debug = parse()
                self.texts += [error.message, debug or ""]
                if message.type == Gst.MessageType.ERROR:
                    self.errors.append(error.message)
            self.lock.notify_all()

    def start(self):
        check(self.pipeline.set_state(Gst.State.PLAYING) != Gst.StateChangeReturn.FAILURE,
              "the pipeline did not start")

    def stop(self):
        self.pipeline.set_state(Gst.State.NULL)

    def wait(self, condition, guard, what):
        """Waits (at most `guard` s) until condition() holds, under the lock, looking again on every
        frame, event or message and every 0.1 s (properties change without a notice); fails naming
        `what`."""
        deadline = time.monotonic() + guard
        with self.lock:
            while not condition():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Failure(f"{what}: not within {guard:.0f} s")
                self.lock.wait(min(left, 0.1))

    def states(self, state, stream=None):
        return [m for _, m in self.messages if m["state"] == state and stream in (None, m["stream"])]


def camera_launch(port, extra="", path="cam"):
    return (f"taconitecamera name=camera stream=door1 uri=rtsp://127.0.0.1:{port}/{path} "
            f"retry-interval={RETRY_INTERVAL} timeout=3 {extra} ! taconitetrack ! fakesink name=sink sync=false")


def case_restarts(args):
    port = free_port()
    server = Server(port, args.codec)
    server.start()
    p = Pipeline(camera_launch(port, args.camera))
    report = []
    try:
        p.start()
        p.wait(lambda: len(p.frames) >= 5, 20, "first frames")
        thread_counts = []
        for cycle in range(1, args.restarts + 1):
            with p.lock:
                frames_before, lost_before, back_before = len(p.frames), len(p.states("lost")), len(p.states("back"))
            server.kill()
            p.wait(lambda: len(p.states("lost")) > lost_before, 15, f"restart {cycle}: the lost message")
            time.sleep(0.5)  # the camera stays away a moment
            listening = server.start()
            p.wait(lambda: len(p.states("back")) > back_before and len(p.frames) > frames_before + 3, 20,
                   f"restart {cycle}: frames again")
            with p.lock:
                first_after = next(t for t, _, _ in p.frames[frames_before:] if t >= listening)
                check(len(p.states("lost")) == lost_before + 1 and len(p.states("back")) == back_before + 1,
                      f"restart {cycle}: {len(p.states('lost')) - lost_before} lost and "
                      f"{len(p.states('back')) - back_before} back messages, expected one each")
                discont = [d for _, _, d in p.frames[frames_before:]]
            resumed = first_after - listening
            check(resumed <= RETRY_INTERVAL + 2.0,
                  f"restart {cycle}: frames {resumed:.2f} s after the server listened again, more than "
                  f"retry-interval + 2 s")
            check(True in discont, f"restart {cycle}: no DISCONT buffer after the outage")
            thread_counts.append(threads())
            report.append((cycle, resumed, p.states("back")[-1]["outage"], rss_kib(), thread_counts[-1],
                           heap_in_use_kib()))
            if args.report:
                print(f"restart {cycle:2d}: frames again {resumed:.2f} s after the server listened "
                      f"(outage {report[-1][2]:.2f} s), RSS {report[-1][3]} KiB, heap in use {report[-1][5]} KiB, "
                      f"threads {report[-1][4]}", flush=True)
        with p.lock:
            pts = [t for _, t, _ in p.frames]
            lost_events = [name for _, name in p.events if name == "taconite-camera-lost"]
            check(not p.eos and not p.errors, f"downstream saw EOS={p.eos} or errors {p.errors}")
        check(all(b > a for a, b in zip(pts, pts[1:])), "PTS went backwards")
        check(len(lost_events) == args.restarts,
              f"{len(lost_events)} taconite-camera-lost events passed taconitetrack, expected {args.restarts}")
        check(p.camera.get_property("restarts") >= args.restarts, "fewer restarts counted than outages")
        check(thread_counts[-1] <= thread_counts[0] + 2,
              f"threads grew over the restarts: {thread_counts}")
        print(f"ok restarts: {args.restarts} kills, each one lost/back, frames again in "
              f"{max(r[1] for r in report):.2f} s at most; threads {thread_counts}; "
              f"RSS {report[0][3]} -> {report[-1][3]} KiB, heap in use {report[0][5]} -> {report[-1][5]} KiB")
    finally:
        p.stop()
        server.kill()


def case_stall(args):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        accepted = []
        stop = threading.Event()

        def accept():  # takes connections, never says a word
            listener.settimeout(0.2)
            while not stop.is_set():
                try:
                    accepted.append(listener.accept()[0])
                except socket.timeout:
                    pass

        acceptor = threading.Thread(target=accept)
        acceptor.start()
        p = Pipeline(camera_launch(port, "timeout=1.5"))
        try:
            p.start()
            p.wait(lambda: p.states("lost"), 10, "stall: the lost message")
            check(p.states("lost")[0]["reason"] == "stall", f"stall: lost for {p.states('lost')[0]}")
            p.wait(lambda: p.camera.get_property("restarts") >= 2 and len(accepted) >= 2, 15,
                   "stall: the watchdog's restarts")
            check(len(p.states("lost")) == 1 and not p.errors, "stall: one lost message and no error expected")
            print(f"ok stall: lost ({p.states('lost')[0]['message']}), {len(accepted)} connections, "
                  f"{p.camera.get_property('restarts')} restarts")
        finally:
            p.stop()
            stop.set()
            acceptor.join()
            for connection in accepted:
                connection.close()


def expect_give_up(p, name, says):
    """Waits for the error after max-retries=2 (3 attempts) and checks it names the camera."""
    p.wait(lambda: p.errors, 30, f"{name}: the error after max-retries")
    error = p.errors[0]
    check("Camera 'door1'" in error and "3 attempts in a row failed" in error,
          f"{name}: the error does not name the camera and the attempts: {error}")
    check(any(word in error for word in says), f"{name}: the error does not say {says}: {error}")
    check(len(p.states("lost")) == 1 and not p.frames and not p.eos,
          f"{name}: expected one lost message, no frame, no EOS")
    check(p.camera.get_property("state") == "failed", f"{name}: state {p.camera.get_property('state')}")
    print(f"ok {name}: {error}")


def frames_again(p, name, frames_before, listening, guard):
    """After one outage: waits for `back` and frames of the restarted source (after `listening`, not
    the last ones of the old one), checks one lost/back pair and no error or EOS downstream, and
    returns when the first of those frames arrived."""
    p.wait(lambda: p.states("back") and sum(t >= listening for t, _, _ in p.frames[frames_before:]) > 3, guard,
           f"{name}: frames again")
    with p.lock:
        check(len(p.states("lost")) == 1 and len(p.states("back")) == 1 and not p.errors and not p.eos,
              f"{name}: {len(p.states('lost'))} lost, {len(p.states('back'))} back (expected 1 each), "
              f"EOS={p.eos}, errors {p.errors}")
        return next(t for t, _, _ in p.frames[frames_before:] if t >= listening)


def case_refused(args):
    p = Pipeline(camera_launch(free_port(), "max-retries=2 retry-interval=0.2"))
    try:
        p.start()
        expect_give_up(p, "refused", ["connect", "Could not open"])
    finally:
        p.stop()


def case_not_found(args):
    port = free_port()
    server = Server(port, args.codec)
    server.start()
    p = Pipeline(camera_launch(port, "max-retries=2 retry-interval=0.2", path="nope"))
    try:
        p.start()
        expect_give_up(p, "not-found", ["Not Found", "404"])
    finally:
        p.stop()
        server.kill()


def case_credentials(args):
    with tempfile.TemporaryDirectory() as folder:
        def credentials(name, password):
            path = os.path.join(folder, name)
            with open(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600), "w", encoding="utf-8") as f:
                f.write(f"viewer\n{password}\n")
            return path

        right = credentials("right", PASSWORD)
        wrong = credentials("wrong", PASSWORD[::-1])
        port = free_port()
        server = Server(port, args.codec, credentials=right)
        server.start()
        try:
            for name, extra, says in (("no credentials", "", ["Unauthorized", "401"]),
                                      ("wrong credentials", f"credentials-file={wrong}", ["Unauthorized", "401"])):
                p = Pipeline(camera_launch(port, f"max-retries=2 retry-interval=0.2 {extra}"))
                try:
                    p.start()
                    expect_give_up(p, name, says)
                    check(not any(PASSWORD in t or PASSWORD[::-1] in t for t in p.texts),
                          f"{name}: a password appeared in a message")
                finally:
                    p.stop()
            p = Pipeline(camera_launch(port, f"credentials-file={right}"))
            try:
                p.start()
                p.wait(lambda: len(p.frames) >= 5, 20, "right credentials: frames")
                check(not p.messages and not p.errors, "right credentials: no lost message or error expected")
                check(not any(PASSWORD in t for t in p.texts), "right credentials: the password in a message")
                print(f"ok credentials: the right ones stream ({len(p.frames)} frames)")
            finally:
                p.stop()
        finally:
            server.kill()


def case_http(args):
    from mjpeg_server import MjpegServer  # needs Gst initialised
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "credentials")
        with open(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600), "w", encoding="utf-8") as f:
            f.write(f"viewer\n{PASSWORD}\n")
        port = free_port()
        server = MjpegServer(port, credentials=("viewer", PASSWORD))
        server.start()
        p = Pipeline(f"taconitecamera name=camera stream=door1 uri=http://127.0.0.1:{port}/cam "
                     f"retry-interval={RETRY_INTERVAL} timeout=3 credentials-file={path} ! taconitetrack ! "
                     f"fakesink name=sink sync=false")
        try:
            p.start()
            p.wait(lambda: len(p.frames) >= 5, 20, "http: first frames")
            with p.lock:
                frames_before = len(p.frames)
            server.stop()
            p.wait(lambda: p.states("lost"), 15, "http: the lost message")
            time.sleep(0.5)
            server.start()
            listening = time.monotonic()
            first_after = frames_again(p, "http", frames_before, listening, 20)
            with p.lock:
                check(not any(PASSWORD in t for t in p.texts), "http: the password in a message")
            check(first_after - listening <= RETRY_INTERVAL + 2.0,
                  f"http: frames {first_after - listening:.2f} s after the server listened again")
            print(f"ok http: lost ({p.states('lost')[0]['reason']}: {p.states('lost')[0]['message']}), frames again "
                  f"{first_after - listening:.2f} s after the server listened")
        finally:
            p.stop()
            server.stop()


def self_signed_certificate(folder):
    """A certificate and key for 127.0.0.1 made with Debian's openssl: what a camera ships with."""
    cert, key = os.path.join(folder, "camera.pem"), os.path.join(folder, "camera.key")
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-keyout", key,
                           "-out", cert, "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                          capture_output=True, text=True, check=False)
    check(made.returncode == 0, f"openssl could not make a certificate: {made.stderr.strip()}")
    return cert, key


def case_rtsps(args):
    with tempfile.TemporaryDirectory() as folder:
        cert, key = self_signed_certificate(folder)
        port = free_port()
        server = Server(port, args.codec, tls=(cert, key))
        server.start()
        launch = (f"taconitecamera name=camera stream=door1 uri=rtsps://127.0.0.1:{port}/cam "
                  f"retry-interval={RETRY_INTERVAL} timeout=3 {{}} ! taconitetrack ! fakesink name=sink sync=false")
        try:
            p = Pipeline(launch.format("max-retries=2 retry-interval=0.2"))  # the system's CAs do not know it
            try:
                p.start()
                expect_give_up(p, "rtsps untrusted", ["TLS certificate was refused: unknown CA"])
            finally:
                p.stop()
            not_pem = os.path.join(folder, "not-a-certificate.pem")
            with open(not_pem, "w", encoding="utf-8") as f:
                f.write("hello\n")
            p = Pipeline(launch.format(f"tls-ca-file={not_pem}"))
            try:
                check(p.pipeline.set_state(Gst.State.PLAYING) == Gst.StateChangeReturn.FAILURE or p.errors,
                      "rtsps: a tls-ca-file without a certificate was not refused")
                p.wait(lambda: p.errors, 5, "rtsps: the error for a CA file without a certificate")
                check("Camera 'door1'" in p.errors[0] and "not-a-certificate.pem" in p.errors[0],
                      f"rtsps: the error does not name the camera and the file: {p.errors[0]}")
            finally:
                p.stop()
            p = Pipeline(launch.format(f"tls-ca-file={cert}"))
            try:
                p.start()
                p.wait(lambda: len(p.frames) >= 5, 20, "rtsps: frames with the camera's certificate trusted")
                with p.lock:
                    frames_before = len(p.frames)
                server.kill()
                p.wait(lambda: p.states("lost"), 15, "rtsps: the lost message")
                server.start()
                listening = time.monotonic()
                first_after = frames_again(p, "rtsps", frames_before, listening, 20)
                check(first_after - listening <= RETRY_INTERVAL + 2.0,
                      f"rtsps: frames {first_after - listening:.2f} s after the server listened again")
                print(f"ok rtsps: refused untrusted, streams with tls-ca-file, frames again "
                      f"{first_after - listening:.2f} s after a restart")
            finally:
                p.stop()
        finally:
            server.kill()


class HlsServer:
    """A live HLS stream as a camera or an NVR re-streams it: hlssink2 writes 1-s segments and a
    playlist into a folder that a Python web server serves on 127.0.0.1 (stopped and started again
    like a camera going away)."""

    def __init__(self, folder, port):
        import functools
        import http.server
        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass

        self.folder, self.port, self.httpd, self.thread = folder, port, None, None
        self.handler = functools.partial(Quiet, directory=folder)
        self.producer = Gst.parse_launch(
            "videotestsrc is-live=true pattern=ball ! video/x-raw,format=I420,width=320,height=240,framerate=15/1 ! "
            "openh264enc gop-size=15 complexity=low ! h264parse ! "
            f"hlssink2 target-duration=1 playlist-length=4 max-files=8 "
            f"location={folder}/segment%05d.ts playlist-location={folder}/playlist.m3u8")

    def start_producer(self):
        check(self.producer.set_state(Gst.State.PLAYING) != Gst.StateChangeReturn.FAILURE,
              "hls: the HLS producer (openh264enc, hlssink2) did not start")
        deadline = time.monotonic() + 15
        while not os.path.exists(os.path.join(self.folder, "playlist.m3u8")):
            check(time.monotonic() < deadline, "hls: no playlist within 15 s")
            time.sleep(0.1)

    def start(self):
        import http.server
        deadline = time.monotonic() + 10
        while True:  # the port may be in TIME_WAIT for a moment: retry
            try:
                self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), self.handler)
                break
            except OSError:
                check(time.monotonic() < deadline, f"hls: cannot listen on {self.port}")
                time.sleep(0.2)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        if self.httpd:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.thread.join()
            self.httpd = None

    def close(self):
        self.stop()
        self.producer.set_state(Gst.State.NULL)


def case_hls(args):
    for element in ("hlssink2", "hlsdemux", "openh264enc"):
        if not Gst.ElementFactory.find(element):
            print(f"skipped hls: no {element} (gstreamer1.0-plugins-bad)")
            return
    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        server = HlsServer(folder, port)
        p = Pipeline(f"taconitecamera name=camera stream=door1 uri=http://127.0.0.1:{port}/playlist.m3u8 "
                     f"retry-interval={RETRY_INTERVAL} timeout=6 ! taconitetrack ! fakesink name=sink sync=false")
        try:
            server.start_producer()
            server.start()
            p.start()
            p.wait(lambda: len(p.frames) >= 15, 30, "hls: first frames")
            time.sleep(3)  # a few segments more: paced at 15 frames/s, none dropped
            with p.lock:
                check(not p.messages and not p.errors, f"hls: an outage, overload or error while streaming: {p.texts}")
                frames_before = len(p.frames)
                rate = (frames_before - 15) / (p.frames[-1][0] - p.frames[14][0])
            check(10 <= rate <= 20 and p.camera.get_property("frames-dropped") <= 2,
                  f"hls: {rate:.1f} frames/s reached downstream, {p.camera.get_property('frames-dropped')} dropped "
                  "(expected the stream's 15, none dropped)")
            server.stop()
            p.wait(lambda: p.states("lost"), 20, "hls: the lost message")
            server.start()
            listening = time.monotonic()
            first_after = frames_again(p, "hls", frames_before, listening, 30)
            print(f"ok hls: {rate:.1f} frames/s, lost ({p.states('lost')[0]['reason']}), frames again "
                  f"{first_after - listening:.2f} s after the web server came back")
        finally:
            p.stop()
            server.close()


def case_two_cameras(args):
    ports = [free_port(), free_port()]
    servers = [Server(port, args.codec) for port in ports]
    for server in servers:
        server.start()
    # Camera b's frames are recorded (its sink is probed); camera a is the one killed.
    branches = " ".join(f"taconitecamera name={name} stream={name} uri=rtsp://127.0.0.1:{port}/cam "
                        f"retry-interval={RETRY_INTERVAL} ! taconitetrack ! fakesink name=sink_{name} sync=false"
                        for name, port in zip("ab", ports))
    p = Pipeline(branches, sink="sink_b")

    def rate(seconds):
        with p.lock:
            first = len(p.frames)
        time.sleep(seconds)
        with p.lock:
            return (len(p.frames) - first) / seconds

    try:
        p.start()
        p.wait(lambda: len(p.frames) >= 10, 20, "two cameras: b's first frames")
        before = rate(2.0)
        servers[0].kill()
        p.wait(lambda: p.states("lost", "a"), 15, "two cameras: a lost")
        during = rate(2.0)
        servers[0].start()
        p.wait(lambda: p.states("back", "a"), 20, "two cameras: a back")
        with p.lock:
            check(not p.states("lost", "b") and not p.errors and not p.eos,
                  f"two cameras: b had an outage ({p.states('lost', 'b')}) or errors {p.errors}")
        check(abs(during - before) <= 0.1 * before,
              f"two cameras: b's frame rate {before:.1f}/s before, {during:.1f}/s during a's outage")
        print(f"ok two-cameras: b at {before:.1f} frames/s before and {during:.1f} during a's outage")
    finally:
        p.stop()
        for server in servers:
            server.kill()


def slow_chain(args, camera=""):
    """A live camera (a new server) into a chain taking 200 ms a frame: (server, pipeline, the slow identity)."""
    port = free_port()
    server = Server(port, args.codec)
    server.start()
    p = Pipeline(f"taconitecamera name=camera stream=door1 {camera} uri=rtsp://127.0.0.1:{port}/cam ! "
                 f"identity name=slow sleep-time=200000 ! fakesink name=sink sync=false")
    return server, p, p.pipeline.get_by_name("slow")


def case_overload(args):
    server, p, slow = slow_chain(args)
    try:
        p.start()
        p.wait(lambda: p.states("overloaded") and any("dropping the rest" in text for text in p.texts), 20,
               "overload: the overloaded message and the warning")
        with p.lock:
            said = p.states("overloaded")[0]
            warned = [text for text in p.texts if "analysing" in text and "dropping the rest" in text]
        check(warned and "door1" in warned[0], f"overload: no warning naming the camera and the rates: {p.texts}")
        check(12 <= said["decoded-fps"] <= 18 and 3 <= said["analysed-fps"] <= 6,
              f"overload: rates {said['decoded-fps']:.1f} decoded, {said['analysed-fps']:.1f} analysed per s")
        # How old each frame is when the slow element lets it go (now minus its arrival PTS).
        clock, base = p.pipeline.get_clock(), p.pipeline.get_base_time()
        ages = []

        def age(pad, info):
            ages.append((clock.get_time() - base - info.get_buffer().pts) / Gst.SECOND)
            return Gst.PadProbeReturn.OK

        probe = slow.get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, age)
        time.sleep(2.0)
        slow.get_static_pad("src").remove_probe(probe)
        check(ages and max(ages) < 0.5, f"overload: frames {max(ages or [0]):.2f} s old after the slow element")
        slow.set_property("sleep-time", 0)
        p.wait(lambda: p.states("keeping-up"), 20, "overload: the keeping-up message")
        with p.lock:
            check(len(p.states("overloaded")) == 1 and not p.errors, "overload: one episode, no error expected")
        print(f"ok overload: analysing {said['analysed-fps']:.1f} of {said['decoded-fps']:.1f} frames/s, frames at "
              f"most {max(ages):.2f} s old, then keeping up ({p.states('keeping-up')[0]['dropped']} dropped)")
    finally:
        p.stop()
        server.kill()


def case_max_rate(args):
    server, p, slow = slow_chain(args, "max-rate=3")
    try:
        p.start()
        # 3 of the camera's 15 frames/s for a chain that could take 5: spaced, skipped, no overload.
        p.wait(lambda: len(p.frames) >= 3, 20, "max-rate: the first frames")
        with p.lock:
            first = len(p.frames)
        time.sleep(8.0)  # beyond the overload watch's 5-s window
        with p.lock:
            frames = p.frames[first:]
            overloaded = p.states("overloaded")
        rate = (len(frames) - 1) / (frames[-1][0] - frames[0][0]) if len(frames) > 1 else 0.0
        gaps = [b[1] - a[1] for a, b in zip(frames, frames[1:])]
        check(2.4 <= rate <= 3.3, f"max-rate: {rate:.2f} frames/s reached the sink, not ~3")
        check(min(gaps) >= 0.25 * Gst.SECOND, f"max-rate: frames {min(gaps) / Gst.SECOND:.3f} s apart, not ~1/3 s")
        check(not overloaded, f"max-rate: the frames it skipped counted as an overload: {overloaded}")
        check(p.camera.get_property("frames-skipped") > 0 and p.camera.get_property("frames-dropped") == 0,
              "max-rate: frames-skipped not counted, or frames dropped under no overload")
        # A chain slower than the rate let through: the overload counts only those frames.
        slow.set_property("sleep-time", 700000)  # ~1.4 frames/s
        p.wait(lambda: p.states("overloaded"), 20, "max-rate: the overloaded message")
        with p.lock:
            said = p.states("overloaded")[0]
        # (the first window may still hold some of the faster seconds before it)
        check(2.4 <= said["decoded-fps"] <= 3.6 and 1.0 <= said["analysed-fps"] <= 2.7,
              f"max-rate: overload rates {said['decoded-fps']:.1f} let through, {said['analysed-fps']:.1f} analysed")
        print(f"ok max-rate: {rate:.2f} frames/s of 15, then overloaded at {said['analysed-fps']:.1f} of "
              f"{said['decoded-fps']:.1f} frames/s")
    finally:
        p.stop()
        server.kill()


CASES = {"restarts": case_restarts, "stall": case_stall, "refused": case_refused, "not-found": case_not_found,
         "credentials": case_credentials, "http": case_http, "rtsps": case_rtsps, "hls": case_hls,
         "two-cameras": case_two_cameras, "overload": case_overload, "max-rate": case_max_rate}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("plugin_dir")
    parser.add_argument("--only", choices=sorted(CASES))
    parser.add_argument("--restarts", type=int, default=5)
    parser.add_argument("--codec", choices=["jpeg", "h264"], default="jpeg")
    parser.add_argument("--report", action="store_true")
    parser.add_argument("--camera", default="", help="more taconitecamera properties for restarts")
    args = parser.parse_args()
    os.environ["GST_PLUGIN_PATH"] = os.path.abspath(args.plugin_dir)
    Gst.init(None)
    for element in ("taconitecamera", "taconitetrack"):
        if not Gst.ElementFactory.find(element):
            skip(f"no {element} in {args.plugin_dir}")
    try:
        gi.require_version("GstRtspServer", "1.0")
    except ValueError:
        skip("gir1.2-gst-rtsp-server-1.0 is not installed")
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
