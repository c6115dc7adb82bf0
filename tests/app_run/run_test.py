#!/usr/bin/python3
"""taconite-run end to end, with the real elements: --check and --print (the printed line run by
gst-launch-1.0), two file cameras with a gallery (--once: events from both, named), SIGTERM while
live cameras stream (every open track ends, exit 0), SIGHUP (an invalid config is ignored; one camera
changed restarts only that camera), an unreachable camera beside a working one.

Live cameras are tests/camera/rtsp_server.py on 127.0.0.1 sending the astronaut photo at 10 fps (a
face that stays: its track is open until something ends it).

Usage: run_test.py TACONITE_RUN MKBUNDLE GALLERY_CLI YUNET.onnx PLUGIN_DIR SOURCE_DIR WORK_DIR
The runs are skipped (saying why) without the YuNet model, python3-gi or gst-rtsp-server's typelib.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import time
import unittest

ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
ARGS = {}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_events(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def wait_for(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class Fixture:
    """The bundle, a gallery with the astronaut enrolled and a short recording, made once."""
    made = False

    @classmethod
    def make(cls):
        if cls.made:
            return
        work = ARGS["work"]
        os.makedirs(work, exist_ok=True)
        cls.bundle = os.path.join(work, "ir-tiny")
        if not os.path.isfile(os.path.join(cls.bundle, "manifest.txt")):
            subprocess.run([ARGS["mkbundle"], "--model", "ir-tiny", "--out", cls.bundle, "--force"], check=True,
                           capture_output=True)
        cls.gallery = os.path.join(work, "gallery.db")
        if os.path.exists(cls.gallery):
            os.remove(cls.gallery)
        subprocess.run([ARGS["gallery"], "create", cls.gallery, "--model", cls.bundle], check=True,
                       capture_output=True)
        subprocess.run([ARGS["gallery"], "enroll", cls.gallery, "--model", cls.bundle, "--name", "astronaut",
                        "--detector", ARGS["yunet"], ASTRONAUT], check=True, capture_output=True)
        cls.video = os.path.join(work, "demo-4s.avi")
        if not os.path.exists(cls.video):
            subprocess.run(["/usr/bin/python3", os.path.join(ARGS["source"], "pipelines", "make_demo_video.py"),
                            cls.video, "--seconds", "4"], check=True, capture_output=True, timeout=120)
        cls.made = True


def write_config(path, cameras, events_file, extra=""):
    lines = [f"model: {Fixture.bundle}", f"detector: {ARGS['yunet']}", f"gallery: {Fixture.gallery}",
             f"storage: {{events_file: {events_file}}}", "defaults: {retry_interval: 0.5, timeout: 3}"]
    if extra:
        lines.append(extra)
    lines.append("cameras:")
    for name, keys in cameras.items():
        lines.append(f"  {name}: {{{', '.join(f'{k}: {v}' for k, v in keys.items())}}}")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


class Run:
    """taconite-run CONFIG in the background, its stderr collected to a file."""

    def __init__(self, config, *flags):
        self.log_path = config + ".log"
        self.log = open(self.log_path, "w", encoding="utf-8")
        env = dict(os.environ, OMP_WAIT_POLICY="passive")
        self.process = subprocess.Popen([ARGS["run"], *flags, config], stdout=subprocess.DEVNULL, stderr=self.log,
                                        env=env, text=True)

    def lines(self):
        with open(self.log_path, encoding="utf-8") as f:
            return f.read().splitlines()

    def wait_log(self, text, timeout=30, count=1):
        wait_for(lambda: sum(text in line for line in self.lines()) >= count, timeout, f"log line '{text}'")

    def stop(self, timeout=30):
        self.process.send_signal(signal.SIGTERM)
        return self.finish(timeout)

    def finish(self, timeout=60):
        try:
            self.process.wait(timeout=timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            self.log.close()
        return self.process.returncode


class RtspCamera:
    """rtsp_server.py sending the astronaut photo live."""

    def __init__(self):
        self.port = free_port()
        server = os.path.join(ARGS["source"], "tests", "camera", "rtsp_server.py")
        self.process = subprocess.Popen(["/usr/bin/python3", server, str(self.port), "--image", ASTRONAUT, "--size",
                                         "480x480", "--fps", "10"], stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        if not line.startswith("ready"):
            self.process.wait(timeout=10)
            reason = self.process.stderr.read().strip()
            self.close()
            raise unittest.SkipTest(f"the RTSP server did not start: {reason}")
        self.uri = f"rtsp://127.0.0.1:{self.port}/cam"

    def close(self):
        self.process.kill()
        self.process.wait(timeout=10)
        self.process.stdout.close()
        self.process.stderr.close()


def gi_rtsp_available():
    probe = subprocess.run(["/usr/bin/python3", "-c", "import gi; gi.require_version('GstRtspServer', '1.0'); "
                            "from gi.repository import GstRtspServer"], capture_output=True)
    return probe.returncode == 0


class CheckAndPrint(unittest.TestCase):
    def test_the_example_config_is_valid(self):
        run = subprocess.run([ARGS["run"], "--check", os.path.join(ARGS["source"], "app", "example.yaml")],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("valid (3 cameras, 2 enabled)", run.stdout)
        self.assertIn("example.yaml:4: model: /opt/taconite/ir18 does not exist", run.stderr)  # a warning only

    def test_check_prints_every_error_and_exits_2(self):
        path = os.path.join(ARGS["work"], "bad.yaml")
        with open(path, "w", encoding="utf-8") as f:
            f.write("model: m\ndetector: d\nmqtt: {hots: x}\ncameras:\n  door1: {uri: rtsp://c/1, "
                    "detect_interval: 0}\n  Door2: {uri: rtsp://c/2}\n")
        run = subprocess.run([ARGS["run"], "--check", path], capture_output=True, text=True, timeout=30)
        self.assertEqual(run.returncode, 2)
        self.assertIn(f"{path}:3: mqtt.hots: unknown key (did you mean 'host'?)", run.stderr)
        self.assertIn(f"{path}:5: cameras.door1.detect_interval: 0 is out of bounds 1..1000", run.stderr)
        self.assertIn(f"{path}:6: cameras.Door2: a camera name", run.stderr)
        # The run refuses the same file before starting anything.
        self.assertEqual(subprocess.run([ARGS["run"], path], capture_output=True, timeout=30).returncode, 2)
        self.assertEqual(subprocess.run([ARGS["run"]], capture_output=True, timeout=30).returncode, 2)

    def test_the_printed_line_runs_in_gst_launch(self):
        if not os.path.exists(ARGS["yunet"]):
            self.skipTest(f"the YuNet model {ARGS['yunet']} is absent")
        Fixture.make()
        config = os.path.join(ARGS["work"], "print.yaml")
        write_config(config, {"door1": {"uri": f"file://{Fixture.video}"},
                              "door2": {"uri": "rtsp://127.0.0.1:1/cam", "enabled": "false"}},
                     os.path.join(ARGS["work"], "print.jsonl"))
        run = subprocess.run([ARGS["run"], "--print", config], capture_output=True, text=True, timeout=30)
        self.assertEqual(run.returncode, 0, run.stderr)
        lines = run.stdout.splitlines()
        self.assertEqual(lines[0], "# door1")
        self.assertTrue(lines[1].startswith("gst-launch-1.0 -e taconitecamera"), lines[1])
        self.assertIn("stream=door1", lines[1])
        self.assertIn(f"gallery={Fixture.gallery}", lines[1])
        self.assertEqual(lines[2], "# door2: disabled")
        env = dict(os.environ, GST_PLUGIN_PATH=ARGS["plugin"], OMP_WAIT_POLICY="passive")
        launched = subprocess.run(["bash", "-c", lines[1].replace("gst-launch-1.0 -e", "gst-launch-1.0 -e -m", 1)],
                                  capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(launched.returncode, 0, launched.stderr[-2000:])
        self.assertIn("taconite-publish", launched.stdout)
        self.assertIn('\\"event\\":\\"end\\"', launched.stdout)


class SystemdUnit(unittest.TestCase):
    def test_the_unit_verifies(self):
        analyze = "/usr/bin/systemd-analyze"
        if not os.path.exists(analyze):
            self.skipTest("systemd-analyze is not installed")
        with open(os.path.join(ARGS["source"], "app", "taconite-run.service"), encoding="utf-8") as f:
            unit = f.read()
        self.assertIn("ExecReload=/bin/kill -HUP $MAINPID", unit)
        self.assertIn("KillSignal=SIGTERM", unit)
        path = os.path.join(ARGS["work"], "taconite-run.service")
        with open(path, "w", encoding="utf-8") as f:
            f.write(unit.replace("/usr/local/bin/taconite-run", ARGS["run"]))
        verify = subprocess.run([analyze, "verify", path], capture_output=True, text=True, timeout=60)
        self.assertEqual(verify.returncode, 0, verify.stderr)
        self.assertEqual([line for line in verify.stderr.splitlines() if "taconite-run.service" in line], [],
                         verify.stderr)


class Running(unittest.TestCase):
    def setUp(self):
        if not os.path.exists(ARGS["yunet"]):
            self.skipTest(f"the YuNet model {ARGS['yunet']} is absent")
        Fixture.make()
        self.work = ARGS["work"]
        self.cameras = []

    def tearDown(self):
        for camera in self.cameras:
            camera.close()

    def live_camera(self):
        if not gi_rtsp_available():
            self.skipTest("gir1.2-gst-rtsp-server-1.0 (python3-gi) is not installed: no live camera to test with")
        camera = RtspCamera()
        self.cameras.append(camera)
        return camera

    def paths(self, name):
        events = os.path.join(self.work, name + ".jsonl")
        if os.path.exists(events):
            os.remove(events)
        return os.path.join(self.work, name + ".yaml"), events

    def test_missing_files_and_an_events_file_that_cannot_be_opened_stop_the_start(self):
        config, _ = self.paths("refused")
        write_config(config, {"door1": {"uri": f"file://{Fixture.video}.absent"}}, self.work)  # a directory
        run = subprocess.run([ARGS["run"], config], capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 2, run.stderr)
        self.assertIn(f"cameras.door1.uri: {Fixture.video}.absent does not exist", run.stderr)
        write_config(config, {"door1": {"uri": f"file://{Fixture.video}"}}, self.work)
        run = subprocess.run([ARGS["run"], config], capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 1, run.stderr)
        self.assertIn(f"storage.events_file {self.work}: Is a directory", run.stderr)
        self.assertNotIn("starting", run.stderr)

    def test_two_file_cameras_with_a_gallery(self):
        config, events_file = self.paths("two-files")
        write_config(config, {"door1": {"uri": f"file://{Fixture.video}"},
                              "door2": {"uri": f"file://{Fixture.video}", "detect_interval": 2}}, events_file)
        run = Run(config, "--once")
        self.assertEqual(run.finish(120), 0, "\n".join(run.lines()))
        events = read_events(events_file)
        for camera in ("door1", "door2"):
            mine = [e for e in events if e["stream"] == camera]
            self.assertTrue(any(e["event"] == "new" for e in mine), f"{camera}: no track")
            ends = [e for e in mine if e["event"] == "end"]
            self.assertTrue(ends, f"{camera}: no end")
            self.assertTrue(all(e["reason"] == "eos" for e in ends), ends)
            self.assertIn("astronaut", [e["label"] for e in ends], f"{camera}: the enrolled face is named")
            self.assertEqual({e["uid"] for e in mine if e["event"] == "new"}, {e["uid"] for e in ends})
        log = run.lines()
        self.assertIn("taconite-run: every camera ended (--once)", log)
        self.assertTrue(any(line.startswith("door1: track ") and "ended (eos): astronaut" in line for line in log), log)

    def test_sigterm_ends_every_open_track_and_exits_0(self):
        a, b = self.live_camera(), self.live_camera()
        config, events_file = self.paths("sigterm")
        write_config(config, {"door1": {"uri": a.uri}, "door2": {"uri": b.uri}}, events_file)
        run = Run(config)
        wait_for(lambda: {e["stream"] for e in read_events(events_file) if e["event"] == "new"} == {"door1", "door2"},
                 60, "a track on both cameras")
        self.assertEqual(run.stop(), 0, "\n".join(run.lines()))
        events = read_events(events_file)
        opened = {e["uid"] for e in events if e["event"] == "new"}
        ended = {e["uid"]: e for e in events if e["event"] == "end"}
        self.assertEqual(opened, set(ended), "every open track gets its end")
        self.assertIn("stopped", {e["reason"] for e in ended.values()})
        self.assertIn("taconite-run: stopped", run.lines())

    def test_sighup_restarts_only_the_changed_camera(self):
        a, b = self.live_camera(), self.live_camera()
        config, events_file = self.paths("sighup")
        cameras = {"door1": {"uri": a.uri}, "door2": {"uri": b.uri}}
        write_config(config, cameras, events_file)
        run = Run(config)
        wait_for(lambda: {e["stream"] for e in read_events(events_file) if e["event"] == "new"} == {"door1", "door2"},
                 60, "a track on both cameras")
        # An invalid config is logged and ignored.
        with open(config, "a", encoding="utf-8") as f:
            f.write("  door3: {uri: rtsp://c/3, latenzy: 5}\n")
        run.process.send_signal(signal.SIGHUP)
        run.wait_log("reload: the new config is not valid: ignored")
        self.assertTrue(any("cameras.door3.latenzy: unknown key (did you mean 'latency'?)" in line
                            for line in run.lines()))
        # door2 changed: only door2 restarts.
        cameras["door2"]["detect_interval"] = 2
        write_config(config, cameras, events_file)
        run.process.send_signal(signal.SIGHUP)
        run.wait_log("reload: 0 started, 0 stopped, 1 restarted, 1 running unchanged")
        wait_for(lambda: sum(e["stream"] == "door2" and e["event"] == "new" for e in read_events(events_file)) >= 2,
                 60, "a new door2 track after its restart")
        before_stop = read_events(events_file)
        log = run.lines()
        self.assertEqual(sum(line.startswith("door1: starting") for line in log), 1, log)
        self.assertEqual(sum(line.startswith("door2: starting") for line in log), 2, log)
        self.assertIn("door2: stopping (its config changed)", log)
        self.assertFalse([e for e in before_stop if e["stream"] == "door1" and e["event"] == "end"],
                         "door1's track went on through the reload")
        door2_ends = [e for e in before_stop if e["stream"] == "door2" and e["event"] == "end"]
        self.assertEqual([e["reason"] for e in door2_ends], ["stopped"])
        # door1 removed, door3 added: door2 untouched.
        del cameras["door1"]
        cameras["door3"] = {"uri": a.uri}
        write_config(config, cameras, events_file)
        run.process.send_signal(signal.SIGHUP)
        run.wait_log("reload: 1 started, 1 stopped, 0 restarted, 1 running unchanged")
        self.assertIn("door1: stopping (removed or disabled in the config)", run.lines())
        # A model-wide key (threshold) restarts every camera.
        write_config(config, cameras, events_file, extra="threshold: 0.3")
        run.process.send_signal(signal.SIGHUP)
        run.wait_log("reload: 0 started, 0 stopped, 2 restarted, 0 running unchanged")
        self.assertEqual(run.stop(), 0)
        events = read_events(events_file)
        self.assertEqual({e["uid"] for e in events if e["event"] == "new"},
                         {e["uid"] for e in events if e["event"] == "end"}, "every track ended")

    def test_a_failing_camera_stops_alone(self):
        config, events_file = self.paths("failing")
        broken = os.path.join(self.work, "not-a-video.avi")
        with open(broken, "w", encoding="utf-8") as f:
            f.write("this is no video\n" * 100)
        write_config(config, {"door1": {"uri": f"file://{broken}"}, "door2": {"uri": f"file://{Fixture.video}"}},
                     events_file)
        run = Run(config, "--once")
        self.assertEqual(run.finish(120), 1, "--once: a camera failed")
        log = run.lines()
        self.assertTrue(any(line.startswith("door1: error from camera: ") for line in log), log)
        self.assertIn("door2: ended (end of stream)", log)
        ends = [e for e in read_events(events_file) if e["event"] == "end"]
        self.assertTrue(ends and all(e["stream"] == "door2" for e in ends), ends)

    def test_an_unreachable_camera_does_not_stop_the_others(self):
        config, events_file = self.paths("unreachable")
        write_config(config, {"door1": {"uri": f"rtsp://127.0.0.1:{free_port()}/cam"},
                              "door2": {"uri": f"file://{Fixture.video}"}}, events_file)
        run = Run(config)
        run.wait_log("door2: ended (end of stream)", timeout=60)
        run.wait_log("door1: lost (error: ", timeout=30)
        self.assertEqual(run.stop(), 0)
        events = read_events(events_file)
        self.assertTrue([e for e in events if e["stream"] == "door2" and e["event"] == "end"])
        self.assertFalse([e for e in events if e["stream"] == "door1"])


if __name__ == "__main__":
    names = ["run", "mkbundle", "gallery", "yunet", "plugin", "source", "work"]
    if len(sys.argv) < 8:
        sys.exit(__doc__)
    ARGS.update(zip(names, sys.argv[1:8]))
    os.makedirs(ARGS["work"], exist_ok=True)
    unittest.main(argv=[sys.argv[0], "-v"] + sys.argv[8:])
