#!/usr/bin/python3
"""taconite-gallery --detector: faces found by YuNet with its 5 points (as taconitedetect finds them)
on python3-skimage's astronaut, with the IR-tiny test bundle. Skipped (exit 77, saying so) without
the YuNet model (../shared/models).

Usage (from meson): test_gallery_cli_yunet.py <taconite-gallery> <bundle dir> <plugin dir>
Environment: TACONITE_YUNET_MODEL. The bundle's weights are synthetic: the same photo is recognised
again, not a person.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import json

import cv2
import numpy

CLI, BUNDLE, PLUGIN_DIR = map(os.path.abspath, sys.argv[1:4])
YUNET = os.environ.get("TACONITE_YUNET_MODEL", "")
ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
WORK = tempfile.mkdtemp(prefix="taconite-gallery-yunet-")


def run(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600)


def path(name):
    return os.path.join(WORK, name)


class YuNetEnrolment(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        photo = cv2.imread(ASTRONAUT)
        cv2.imwrite(path("two-faces.png"), numpy.concatenate([photo, photo], axis=1))
        cv2.imwrite(path("no-face.png"), numpy.full((200, 200, 3), 128, numpy.uint8))
        assert run("create", path("g.db"), "--model", BUNDLE).returncode == 0

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(WORK)

    def test_1_enroll_and_match_with_yunet(self):
        r = run("enroll", path("g.db"), "--model", BUNDLE, "--detector", YUNET, "--name", "astronaut", ASTRONAUT,
                path("no-face.png"), path("two-faces.png"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("enrolled 1 template(s) for astronaut", r.stdout)
        self.assertIn("2 image(s) skipped", r.stdout)
        self.assertIn("no-face.png: no face found", r.stderr)
        self.assertIn("two-faces.png: 2 faces found", r.stderr)
        r = run("match", path("g.db"), "--model", BUNDLE, "--detector", YUNET, "--top-k", "1", ASTRONAUT)
        self.assertEqual(r.returncode, 0, r.stderr)
        name, score = r.stdout.split("\t")[1:3]
        self.assertEqual(name, "astronaut")
        self.assertGreater(float(score), 0.9999)  # the same photo through the same detection and alignment
        # YuNet's 5 points and dlib's 68 align the face differently: another input, another embedding.
        r = run("match", path("g.db"), "--model", BUNDLE, "--top-k", "1", ASTRONAUT)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertLess(float(r.stdout.split("\t")[2]), 0.9999)

    def test_2_both_faces_of_an_impostor_photo_are_probes(self):
        r = run("enroll", path("g.db"), "--model", BUNDLE, "--detector", YUNET, "--name", "twin", "--face", "1",
                path("two-faces.png"))
        self.assertEqual(r.returncode, 0, r.stderr)
        os.makedirs(path("strangers"))
        cv2.imwrite(path("strangers/two.png"), cv2.flip(cv2.imread(path("two-faces.png")), 1))
        r = run("calibrate", path("g.db"), "--model", BUNDLE, "--detector", YUNET, "--impostors", path("strangers"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("\nimpostors 2 (faces in 1 of 1 photos of ", r.stdout)
        # An enrolled photo among the impostors scores 1: no threshold in range keeps it unnamed.
        shutil.copy(path("two-faces.png"), path("strangers/enrolled.png"))
        r = run("calibrate", path("g.db"), "--model", BUNDLE, "--detector", YUNET, "--impostors", path("strangers"),
                "--fpir", "0")
        self.assertEqual(r.returncode, 1)
        self.assertIn("no threshold in [-1, 1] keeps the FPIR at or below the target", r.stderr)

    def test_3_enrolment_sees_a_face_as_the_pipeline_does(self):
        """The same PNG (so the same decoded pixels) through taconitedetect ! taconiteadaface and
        through enroll --detector: the same detection, 5 points, alignment and input, the same embedding."""
        env = dict(os.environ, GST_PLUGIN_PATH=PLUGIN_DIR, GST_REGISTRY_1_0=path("registry.bin"))
        faces = path("faces.jsonl")
        pipeline = (f"filesrc location={ASTRONAUT} ! decodebin ! videoconvert ! video/x-raw,format=BGR ! "
                    f"imagefreeze num-buffers=1 ! taconitedetect model={YUNET} ! "
                    f"taconiteadaface model={BUNDLE} input-mode=rois ! "
                    f"taconitepublish method=file location={faces} embedding=array ! fakesink")
        r = subprocess.run(["gst-launch-1.0", "-q", *pipeline.split()], capture_output=True, text=True, timeout=300,
                           env=env)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(faces) as f:
            face = json.loads(f.readline())["faces"][0]
        self.assertTrue(face["aligned"])
        seen = numpy.array(face["embedding"])
        self.assertEqual(run("create", path("one.db"), "--model", BUNDLE).returncode, 0)
        r = run("enroll", path("one.db"), "--model", BUNDLE, "--detector", YUNET, "--name", "astronaut", ASTRONAUT)
        self.assertEqual(r.returncode, 0, r.stderr)
        template = numpy.array(json.loads(run("export", path("one.db")).stdout.splitlines()[1])["embedding"])
        self.assertGreater(float(seen @ template / numpy.linalg.norm(seen)), 0.99999)


if __name__ == "__main__":
    if not YUNET or not os.path.exists(YUNET):
        print("SKIP: no YuNet model (../shared/models/face_detection_yunet_2023mar.onnx): the --detector tests are skipped")
        sys.exit(77)
    unittest.main(argv=sys.argv[:1], verbosity=2)
