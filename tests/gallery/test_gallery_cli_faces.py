#!/usr/bin/python3
"""taconite-gallery's skip-and-warn enrolment, --aligned best faces and calibrate, on real photos
(python3-skimage's astronaut, opencv-doc's messi5.jpg) with the IR-tiny test bundle and the
stock front end (dlib HOG + landmarks). YuNet (--detector) is tested by test_gallery_cli_yunet.py.

Usage (from meson): test_gallery_cli_faces.py <taconite-gallery> <bundle dir> <unknown_faces_helper>
The test bundle's weights are synthetic: its embeddings identify the same photo again, not a person
across photos, so calibrate's figures here are checked against what the gallery holds, not tuned.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import cv2
import numpy

import unknown_faces_fixture as fixture

CLI, BUNDLE, UNKNOWN_FACES_HELPER = map(os.path.abspath, sys.argv[1:4])
ASTRONAUT = fixture.ASTRONAUT
MESSI = fixture.MESSI
WORK = tempfile.mkdtemp(prefix="taconite-gallery-faces-")


def run(*args):
    """Runs the CLI. The timeout only guards against a hang (a FIFO); nothing here is timed."""
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600)


def path(name):
    return os.path.join(WORK, name)


def cli_lines(result, kind):
    return [l for l in result.stderr.splitlines() if l.startswith(f"taconite-gallery: {kind}: ")]


class FacesAndCalibration(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        astronaut = cv2.imread(ASTRONAUT)
        messi = cv2.imread(MESSI)
        # Other views of the same photos: a darker copy and a mirror image are other templates.
        os.makedirs(path("astronaut"))
        cv2.imwrite(path("astronaut/1.png"), astronaut)
        cv2.imwrite(path("astronaut/2.png"), (astronaut * 0.8).astype(numpy.uint8))
        cv2.imwrite(path("astronaut/3.png"), cv2.flip(astronaut, 1))
        os.makedirs(path("messi"))
        cv2.imwrite(path("messi/1.png"), messi)
        cv2.imwrite(path("messi/2.png"), cv2.flip(messi, 1))
        cv2.imwrite(path("no-face.png"), numpy.full((200, 200, 3), 128, numpy.uint8))
        with open(ASTRONAUT, "rb") as f:
            head = f.read(300)
        with open(path("truncated.png"), "wb") as f:
            f.write(head)
        with open(path("text.jpg"), "w") as f:
            f.write("not an image\n")
        # Best faces as taconitepublish writes them (112x112 JPEGs), and one of another size.
        cv2.imwrite(path("cam0-best.jpg"), cv2.resize(astronaut[40:240, 150:330], (112, 112)))
        cv2.imwrite(path("cam0-small.jpg"), cv2.resize(astronaut[40:240, 150:330], (100, 100)))
        assert run("create", path("g.db"), "--model", BUNDLE).returncode == 0

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(WORK)

    def test_1_named_images_without_a_usable_face_are_skipped_with_one_warning_each(self):
        r = run("enroll", path("g.db"), "--model", BUNDLE, "--name", "astronaut", path("no-face.png"),
                path("truncated.png"), path("text.jpg"), path("astronaut"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("enrolled 3 template(s) for astronaut", r.stdout)
        self.assertIn("3 image(s) skipped", r.stdout)
        warnings = cli_lines(r, "warning")
        self.assertEqual(len(warnings), 3, r.stderr)
        self.assertIn("skipped " + path("no-face.png") + ": no face found", warnings[0])
        self.assertIn("truncated.png", warnings[1])
        self.assertIn("text.jpg", warnings[2])
        self.assertEqual(cli_lines(r, "error"), [])
        r = run("enroll", path("g.db"), "--model", BUNDLE, "--name", "messi", "--largest", path("messi"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("enrolled 2 template(s) for messi", r.stdout)

    def test_2_nothing_enrolled_is_an_error_that_changes_nothing(self):
        before = run("export", path("g.db")).stdout
        r = run("enroll", path("g.db"), "--model", BUNDLE, "--name", "nobody", path("no-face.png"), path("text.jpg"))
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(cli_lines(r, "warning")), 2, r.stderr)
        self.assertEqual(cli_lines(r, "error"), ["taconite-gallery: error: no face enrolled for nobody: every image "
                                                 "was skipped (2 image(s); the warnings say why)"])
        os.makedirs(path("empty"))
        r = run("enroll", path("g.db"), "--model", BUNDLE, "--name", "nobody", path("empty"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("no image to enroll for nobody", r.stderr)
        self.assertEqual(run("export", path("g.db")).stdout, before)

    def test_3_aligned_best_faces_are_embedded_without_detection(self):
        r = run("enroll", path("g.db"), "--model", BUNDLE, "--name", "door-visitor", "--aligned",
                path("cam0-best.jpg"), path("cam0-small.jpg"), ASTRONAUT)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("enrolled 1 template(s) for door-visitor", r.stdout)
        self.assertIn("2 image(s) skipped", r.stdout)
        warnings = cli_lines(r, "warning")
        self.assertEqual(len(warnings), 2, r.stderr)
        self.assertIn("cam0-small.jpg: is 100x100, not an aligned face of the model's 112x112 (--aligned)", warnings[0])
        self.assertIn("astronaut.png: is 512x512, not an aligned face", warnings[1])
        r = run("match", path("g.db"), "--model", BUNDLE, "--aligned", "--top-k", "1", path("cam0-best.jpg"))
        self.assertEqual(r.returncode, 0, r.stderr)
        name, score = r.stdout.split("\t")[1:3]
        self.assertEqual(name, "door-visitor")
        self.assertGreater(float(score), 0.9999)  # the same crop, the same input
        # The same crop found by HOG in a photo is another input (a detection, not the whole image).
        r = run("match", path("g.db"), "--model", BUNDLE, "--top-k", "1", ASTRONAUT)
        self.assertTrue(r.stdout.startswith("1\tastronaut\t"), r.stdout + r.stderr)

    def test_4_calibrate_reports_counts_that_add_up_as_json(self):
        r = run("calibrate", path("g.db"), "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        report = json.loads(r.stdout)
        # astronaut 3 + messi 2 templates are probes; door-visitor's one is not.
        self.assertEqual(report["genuine_probes"], 5)
        self.assertEqual(report["eligible_templates"], 5)
        self.assertEqual(report["named_right"] + report["named_wrong"] + report["unnamed"], 5)
        # No impostors given and none kept: the probes' best other identity stands in, said so.
        self.assertEqual(report["impostor_source"], "genuine-best-other")
        self.assertEqual(report["impostors"], 5)
        self.assertIn("no impostors", cli_lines(r, "warning")[0])
        self.assertLessEqual(report["fpir"], 0.01)
        self.assertEqual(report["fpir"], report["impostors_named"] / report["impostors"])
        self.assertEqual(report["tpir"], report["named_right"] / 5)
        self.assertEqual(report["threshold"], round(report["threshold"], 4))
        self.assertEqual(report["target_fpir"], 0.01)
        # A looser target never raises the threshold.
        loose = json.loads(run("calibrate", path("g.db"), "--json", "--fpir", "1").stdout)
        self.assertEqual(loose["threshold"], -1.0)
        self.assertEqual(loose["impostors_named"], 5)
        self.assertEqual(loose["named_right"] + loose["named_wrong"], 5)

    def test_5_calibrate_with_impostor_photos_scores_every_face_of_every_photo(self):
        os.makedirs(path("strangers"))
        photo = cv2.imread(ASTRONAUT)
        cv2.imwrite(path("strangers/two.png"), numpy.concatenate([photo, photo], axis=1))
        shutil.copy(path("no-face.png"), path("strangers/none.png"))
        r = run("calibrate", path("g.db"), "--impostors", path("strangers"), "--model", BUNDLE, "--fpir", "0.5")
        self.assertEqual(r.returncode, 0, r.stderr)
        out = r.stdout.splitlines()
        self.assertTrue(any(l.startswith("impostors 2 (faces in 1 of 2 photos of ") for l in out), r.stdout)
        # At most one of the two astronaut faces is named (none when their scores tie).
        named = int(next(l for l in out if l.startswith("impostors named ")).split()[-1])
        self.assertLessEqual(named, 1)
        self.assertIn(next(l for l in out if l.startswith("fpir ")), ("fpir %.4f (target 0.5)" % (named / 2),))
        self.assertEqual(len(cli_lines(r, "warning")), 1, r.stderr)
        self.assertIn("none.png: no face found", r.stderr)
        r = run("calibrate", path("g.db"), "--impostors", path("astronaut/../strangers/none.png"), "--model", BUNDLE)
        self.assertEqual(r.returncode, 1)
        self.assertIn("--impostors", r.stderr)

    def test_6_calibrate_takes_the_kept_unknown_faces_as_impostors(self):
        embeddings = fixture.photo_embeddings(CLI, BUNDLE, WORK)
        g = path("unknowns.db")
        self.assertEqual(run("create", g, "--model", BUNDLE).returncode, 0)
        for name, folder in (("astronaut", "astronaut"), ("messi", "messi")):
            self.assertEqual(run("enroll", g, "--model", BUNDLE, "--name", name, "--largest", path(folder)).returncode, 0)
        faces = fixture.review_faces(embeddings, WORK)
        self.assertEqual(fixture.add_unknown(UNKNOWN_FACES_HELPER, g, faces).returncode, 0)
        report = json.loads(run("calibrate", g, "--json").stdout)
        self.assertEqual(report["impostor_source"], "unknown-faces")
        self.assertEqual(report["impostors"], 6)
        # The unknown faces are views of the enrolled photos: at FPIR 0 the threshold is above them all.
        strict = json.loads(run("calibrate", g, "--json", "--fpir", "0").stdout)
        self.assertEqual(strict["impostors_named"], 0)
        self.assertGreater(strict["threshold"], 0.9)

    def test_7_plot_is_a_png_of_the_stated_size_and_its_path_is_checked(self):
        r = run("calibrate", path("g.db"), "--plot", path("scores.png"))
        self.assertEqual(r.returncode, 0, r.stderr)
        plot = cv2.imread(path("scores.png"))
        self.assertEqual(plot.shape, (480, 800, 3))
        self.assertGreater(len(numpy.unique(plot.reshape(-1, 3), axis=0)), 3)  # drawn on, not blank
        self.assertFalse(os.path.exists(path("scores.png.part")))
        os.mkfifo(path("fifo.png"))
        for target, why in ((path("fifo.png"), "is not a regular file"), (path("scores.jpg"), "is a PNG file"),
                            (path("missing/scores.png"), "is not a directory")):
            r = run("calibrate", path("g.db"), "--plot", target)
            self.assertEqual(r.returncode, 1, target)
            self.assertIn(why, cli_lines(r, "error")[0])
        self.assertFalse(os.path.exists(path("scores.jpg")))

    def test_8_usage_errors_exit_2(self):
        for rate in ("-0.1", "1.5", "nan", "x", ""):
            r = run("calibrate", path("g.db"), "--fpir", rate)
            self.assertEqual(r.returncode, 2, rate)
        self.assertIn("--fpir takes a rate in [0, 1]", run("calibrate", path("g.db"), "--fpir", "2").stderr)
        cases = [
            (["enroll", path("g.db"), "--model", BUNDLE, "--name", "x", "--aligned", "--detector", "y.onnx", ASTRONAUT],
             "--detector and --aligned exclude each other"),
            (["enroll", path("g.db"), "--model", BUNDLE, "--name", "x", "--fpir", "0.1", ASTRONAUT], "--fpir is calibrate's"),
            (["list", path("g.db"), "--aligned"], "are for enroll, match and calibrate"),
            (["calibrate", path("g.db"), "--impostors", WORK], "needs --model MODEL"),
            (["calibrate", path("g.db"), "--model", BUNDLE], "only for --impostors photos"),
            (["calibrate", path("g.db"), "extra"], "wrong number of arguments"),
        ]
        for args, message in cases:
            r = run(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(message, r.stderr)

    def test_9_a_detector_that_is_not_yunet_is_named(self):
        r = run("enroll", path("g.db"), "--model", BUNDLE, "--name", "x", "--detector", ASTRONAUT, ASTRONAUT)
        self.assertEqual(r.returncode, 1)
        line = cli_lines(r, "error")[0]
        self.assertIn("--detector: ", line)
        self.assertIn(ASTRONAUT, line)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
