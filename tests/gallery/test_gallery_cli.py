#!/usr/bin/python3
"""End-to-end tests of taconite-gallery on real photos (python3-skimage's astronaut, opencv-doc's
messi5.jpg) and the IR-tiny test bundle.

Usage (from meson): test_gallery_cli.py <taconite-gallery> <bundle dir>
The test bundle's weights are synthetic: its embeddings identify the same photo again (what is
asserted here), not a person across photos.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy
import skimage.io

CLI, BUNDLE = sys.argv[1:3]
ASTRONAUT = "/usr/lib/python3/dist-packages/skimage/data/astronaut.png"
MESSI = "/usr/share/doc/opencv-doc/examples/data/messi5.jpg"
WORK = tempfile.mkdtemp(prefix="taconite-gallery-cli-")


def run(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600)


def path(name):
    return os.path.join(WORK, name)


def one_error_line(test, result):
    """Exit 1 with exactly one line on stderr that says it is an error (libpng may add its own)."""
    test.assertEqual(result.returncode, 1, result.stdout + result.stderr)
    lines = [l for l in result.stderr.splitlines() if l.startswith("taconite-gallery:")]
    test.assertEqual(len(lines), 1, result.stderr)
    test.assertIn("error: ", lines[0])
    return lines[0]


class GalleryCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        photo = skimage.io.imread(ASTRONAUT)[:, :, :3]
        skimage.io.imsave(path("two-faces.png"), numpy.concatenate([photo, photo], axis=1), check_contrast=False)
        skimage.io.imsave(path("no-face.png"), numpy.full((200, 200, 3), 128, numpy.uint8), check_contrast=False)
        os.makedirs(path("dir"))
        shutil.copy(ASTRONAUT, path("dir/a.png"))
        shutil.copy(path("no-face.png"), path("dir/b.png"))
        # Another model: the same tensors, another manifest (part of the fingerprint).
        os.makedirs(path("other-bundle"))
        for f in ("tensors.txt", "tensors.bin"):
            os.symlink(os.path.join(BUNDLE, f), path("other-bundle/" + f))
        with open(os.path.join(BUNDLE, "manifest.txt")) as src, open(path("other-bundle/manifest.txt"), "w") as dst:
            dst.write(src.read() + "\n# another model\n")
        created = run("create", path("g.db"), "--bundle", BUNDLE)
        assert created.returncode == 0, created.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(WORK)

    def test_01_usage_errors_exit_2(self):
        self.assertEqual(run().returncode, 2)
        self.assertEqual(run("fly", path("g.db")).returncode, 2)
        self.assertEqual(run("enroll", path("g.db"), "--bundle", BUNDLE, ASTRONAUT).returncode, 2)  # no --name
        self.assertEqual(run("match", path("g.db"), "--bundle", BUNDLE, "--top-k", "0", ASTRONAUT).returncode, 2)
        for beam in ("0", "65537", "many"):
            r = run("match", path("g.db"), "--bundle", BUNDLE, "--ef-search", beam, ASTRONAUT)
            self.assertEqual(r.returncode, 2, beam)
            self.assertIn("--ef-search takes 1..65536", r.stderr)
        self.assertEqual(run("--help").returncode, 0)

    def test_02_create_refuses_an_existing_file(self):
        self.assertIn("already exists", one_error_line(self, run("create", path("g.db"), "--bundle", BUNDLE)))

    def test_03_enroll_and_match_the_same_photo(self):
        r = run("enroll", path("g.db"), "--bundle", BUNDLE, "--name", "astronaut", "--metadata", '{"team":"nasa"}',
                ASTRONAUT)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("enrolled 1 template(s) for astronaut", r.stdout)
        r = run("enroll", path("g.db"), "--bundle", BUNDLE, "--name", "messi", "--largest", MESSI)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run("match", path("g.db"), "--bundle", BUNDLE, "--top-k", "2", ASTRONAUT)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = [line.split("\t") for line in r.stdout.splitlines()]
        self.assertEqual([row[1] for row in rows], ["astronaut", "messi"])
        self.assertGreater(float(rows[0][2]), 0.999)  # the same photo, same front end
        self.assertLess(float(rows[1][2]), float(rows[0][2]))

    def test_04_no_face_and_several_faces_are_refused_unless_chosen(self):
        self.assertIn("no face found", one_error_line(
            self, run("enroll", path("g.db"), "--bundle", BUNDLE, "--name", "x", path("no-face.png"))))
        line = one_error_line(self, run("enroll", path("g.db"), "--bundle", BUNDLE, "--name", "x",
                                        path("two-faces.png")))
        self.assertIn("2 faces found", line)
        self.assertIn("--face N or --largest", line)
        self.assertIn("only 2 face(s)", one_error_line(
            self, run("enroll", path("g.db"), "--bundle", BUNDLE, "--name", "x", "--face", "2",
                      path("two-faces.png"))))
        r = run("enroll", path("g.db"), "--bundle", BUNDLE, "--name", "twin", "--face", "1", path("two-faces.png"))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_05_directory_skips_bad_images_with_a_warning(self):
        r = run("enroll", path("g.db"), "--bundle", BUNDLE, "--name", "astronaut", path("dir"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("1 image(s) skipped", r.stdout)
        self.assertIn("warning: skipped", r.stderr)
        self.assertIn("b.png: no face found", r.stderr)
        listing = run("list", path("g.db")).stdout
        self.assertIn("astronaut\t2 template(s)\t{\"team\":\"nasa\"}", listing)

    def test_06_another_model_is_refused(self):
        line = one_error_line(self, run("enroll", path("g.db"), "--bundle", path("other-bundle"), "--name", "x",
                                        ASTRONAUT))
        self.assertIn("another model", line)
        self.assertIn(path("g.db"), line)

    def test_07_export_import_round_trip(self):
        exported = path("export.jsonl")
        self.assertEqual(run("export", path("g.db"), exported).returncode, 0)
        with open(exported) as f:
            lines = [json.loads(line) for line in f]
        self.assertEqual(lines[0]["taconite_gallery"], 1)
        self.assertEqual(len(lines[0]["model_fingerprint"]), 64)
        self.assertTrue(all(len(line["embedding"]) == 512 for line in lines[1:]))
        r = run("import", path("copy.db"), exported)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("(created)", r.stdout)
        self.assertEqual(run("list", path("copy.db")).stdout.replace("\t", " ").split()[1:],
                         run("list", path("g.db")).stdout.replace("\t", " ").split()[1:])
        r = run("match", path("copy.db"), "--bundle", BUNDLE, "--top-k", "1", ASTRONAUT)
        self.assertTrue(r.stdout.startswith("1\tastronaut\t"), r.stdout + r.stderr)
        # A foreign header and a broken line are refused with the line named.
        with open(path("foreign.jsonl"), "w") as f:
            f.write(json.dumps(dict(lines[0], model_fingerprint="f" * 64)) + "\n")
        self.assertIn("another model", one_error_line(self, run("import", path("g.db"), path("foreign.jsonl"))))
        with open(path("broken.jsonl"), "w") as f:
            f.write(json.dumps(lines[0]) + "\n" + '{"name": "y", "embedding": [1, 2]}\n')
        self.assertIn("broken.jsonl:2: embedding of 2 values", one_error_line(
            self, run("import", path("g.db"), path("broken.jsonl"))))

    def test_08_remove_and_stats(self):
        self.assertEqual(run("remove", path("g.db"), "twin").returncode, 0)
        self.assertIn("no identity named twin", one_error_line(self, run("remove", path("g.db"), "twin")))
        stats = run("stats", path("g.db")).stdout
        self.assertIn("identities 2\n", stats)
        self.assertIn("templates 3\n", stats)
        self.assertIn("embedding size 512\n", stats)
        self.assertIn("search exact (IndexFlatIP)", stats)

    def test_09_corrupt_and_missing_files_name_the_file(self):
        with open(path("corrupt.db"), "wb") as f:
            f.write(b"\x5a" * 8192)
        line = one_error_line(self, run("stats", path("corrupt.db")))
        self.assertIn(path("corrupt.db"), line)
        self.assertIn("corrupt or not a taconite gallery", line)
        self.assertIn("no such gallery file", one_error_line(self, run("list", path("missing.db"))))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
