#!/usr/bin/python3
"""run_ir18 on an ONNX face embedder (the onnx suite's generated tiny model): it embeds the caller's
face (--input, --image) and refuses to run without one, since an ONNX model records no input.

Usage (from meson): test_run_ir_onnx.py <run_ir18> <tiny models dir>
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy

RUN_IR, MODELS = map(os.path.abspath, sys.argv[1:3])
MODEL = os.path.join(MODELS, "tiny.onnx")


def run(*args):
    return subprocess.run([RUN_IR, *args], capture_output=True, text=True, timeout=300)


class RunIrOnOnnx(unittest.TestCase):
    def test_a_raw_face_gives_the_numpy_reference_embedding(self):
        faces = numpy.fromfile(os.path.join(MODELS, "reference_faces.f32"), numpy.float32).reshape(3, -1)
        reference = numpy.fromfile(os.path.join(MODELS, "reference_embeddings.f32"), numpy.float32).reshape(3, -1)
        with tempfile.TemporaryDirectory() as work:
            face, out = os.path.join(work, "face.f32"), os.path.join(work, "out.f32")
            faces[1].tofile(face)
            r = run("--json", "--input", face, "--output", out, MODEL, "2")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            report = json.loads(r.stdout)
            self.assertEqual(report["backend"], "opencv-dnn")
            self.assertEqual(report["model"], "tiny-test-embedder")
            numpy.testing.assert_allclose(numpy.fromfile(out, numpy.float32), reference[1], rtol=1e-4, atol=1e-5)

    def test_without_a_face_it_says_what_to_give(self):
        r = run(MODEL)
        self.assertEqual(r.returncode, 1)
        self.assertIn("an ONNX model records no input to replay: give --image FILE or --input FILE.f32", r.stderr)
        r = run("--backend", "cpu-reference", "--input", "/dev/null", MODEL)
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot run the ONNX file", r.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
