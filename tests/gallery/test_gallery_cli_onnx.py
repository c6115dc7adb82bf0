#!/usr/bin/python3
"""taconite-gallery with an ONNX face embedder (--model x.onnx, --model-proc), on real photos
(python3-skimage's astronaut, opencv-doc's messi5.jpg) and the onnx suite's generated tiny model.

Usage (from meson): test_gallery_cli_onnx.py <taconite-gallery> <tiny models dir> <bundle dir>
The tiny model's weights are random: its embeddings identify the same photo again, not a person.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

CLI, MODELS, BUNDLE = map(os.path.abspath, sys.argv[1:4])
ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
MESSI = "/usr/share/doc/opencv-doc/examples/data/messi5.jpg"
WORK = tempfile.mkdtemp(prefix="taconite-gallery-onnx-")


def run(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600)


def path(name):
    return os.path.join(WORK, name)


def model_copy(name, edit=None):
    """tiny.onnx in WORK/name/ with its description, edited by `edit` (a function of the JSON object)."""
    os.makedirs(path(name))
    shutil.copy(os.path.join(MODELS, "tiny.onnx"), path(name + "/tiny.onnx"))
    with open(os.path.join(MODELS, "tiny.json")) as f:
        description = json.load(f)
    if edit:
        edit(description)
    with open(path(name + "/tiny.json"), "w") as f:
        json.dump(description, f)
    return path(name + "/tiny.onnx")


class GalleryWithOnnxModel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = model_copy("model")
        created = run("create", path("g.db"), "--model", cls.model)
        assert created.returncode == 0, created.stderr
        cls.created = created.stdout

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(WORK)

    def test_1_create_names_the_description_and_its_embedding_size(self):
        self.assertIn("for tiny-test-embedder", self.created)
        self.assertIn("8-d embeddings", self.created)
        stats = run("stats", path("g.db")).stdout
        self.assertIn("model tiny-test-embedder\n", stats)
        self.assertIn("embedding size 8\n", stats)

    def test_2_enroll_and_match_with_model_bundle_alias_and_model_proc(self):
        r = run("enroll", path("g.db"), "--model", self.model, "--name", "astronaut", ASTRONAUT)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("enrolled 1 template(s) for astronaut", r.stdout)
        # --bundle is --model's alias; --model-proc names the description explicitly.
        r = run("enroll", path("g.db"), "--bundle", self.model, "--model-proc", path("model/tiny.json"),
                "--name", "messi", "--largest", MESSI)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run("match", path("g.db"), "--model", self.model, "--top-k", "2", ASTRONAUT)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = [line.split("\t") for line in r.stdout.splitlines()]
        self.assertEqual([row[1] for row in rows], ["astronaut", "messi"])
        self.assertGreater(float(rows[0][2]), 0.999)  # the same photo through the same front end

    def test_3_the_fingerprint_covers_the_description_but_not_its_threshold(self):
        retuned = model_copy("retuned", lambda d: d.update(threshold=0.2, name="tiny-test-embedder"))
        r = run("match", path("g.db"), "--model", retuned, ASTRONAUT)
        self.assertEqual(r.returncode, 0, r.stderr)
        renormalised = model_copy("renormalised", lambda d: d["input"].update(mean=[0.5, 0.5, 0.5]))
        r = run("match", path("g.db"), "--model", renormalised, ASTRONAUT)
        self.assertEqual(r.returncode, 1)
        self.assertIn("made with another model", r.stderr)
        r = run("match", path("g.db"), "--model", BUNDLE, ASTRONAUT)
        self.assertEqual(r.returncode, 1)
        self.assertIn("made with another model", r.stderr)

    def test_4_a_malformed_description_is_named(self):
        broken = model_copy("broken", lambda d: d["output"].update(dim="eight"))
        r = run("create", path("broken.db"), "--model", broken)
        self.assertEqual(r.returncode, 1)
        self.assertIn("tiny.json: output.dim: expected an integer, got a string", r.stderr)
        self.assertFalse(os.path.exists(path("broken.db")))
        r = run("create", path("proc-for-bundle.db"), "--model", BUNDLE, "--model-proc", path("model/tiny.json"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("is for an ONNX model", r.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
