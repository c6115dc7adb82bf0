#!/usr/bin/env python3
"""End-to-end tests of run_ir18 / run_ir101 on bundles freshly written by taconite-mkbundle.

Usage (from meson): test_run_ir.py <run_ir18> <run_ir101> <taconite-mkbundle>
Plain standard-library Python so it runs on any Debian 12 python3.
"""
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

RUN_IR18, RUN_IR101, MKBUNDLE = sys.argv[1:4]
WORK = tempfile.mkdtemp(prefix="taconite-cli-")


def make_bundle(model, grouping="tile"):
    out = os.path.join(WORK, f"{model}-{grouping}")
    if not os.path.isdir(out):
        subprocess.run([MKBUNDLE, "--model", model, "--out", out, "--grouping", grouping, "--seed", "7"],
                       check=True, stdout=subprocess.DEVNULL)
    return out


def run(args, env=None):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(args, capture_output=True, text=True, env=full_env, timeout=600)


def tensor_entry(bundle, name):
    with open(os.path.join(bundle, "tensors.txt")) as index:
        for line in index:
            fields = line.split()
            if len(fields) == 5 and fields[0] == name:
                return int(fields[3]), int(fields[4])
    raise KeyError(name)


def read_f32(path):
    with open(path, "rb") as f:
        data = f.read()
    return list(struct.unpack(f"<{len(data) // 4}f", data))


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    na = sum(x * x for x in a) ** 0.5
    nb = sum(y * y for y in b) ** 0.5
    return dot / (na * nb)


class RunIrTest(unittest.TestCase):
    def test_json_ir18_reports_match(self):
        bundle = make_bundle("ir18")
        result = run([RUN_IR18, "--json", "--backend", "cpu-reference", bundle, "2"])
        self.assertEqual(result.returncode, 0, result.stderr)
        report = json.loads(result.stdout)
        self.assertEqual(set(report), {"model", "backend", "precision", "conv_dispatches", "embedding_dim",
                                       "latency_ms", "cosine", "result"})
        self.assertEqual(report["model"], "IR-18")
        self.assertEqual(report["backend"], "cpu-reference")
        self.assertEqual(report["precision"], "bf16-exact")
        self.assertEqual(report["embedding_dim"], 512)
        self.assertGreater(report["conv_dispatches"], 20)
        self.assertEqual(report["latency_ms"]["reps"], 2)
        self.assertGreater(report["latency_ms"]["cold"], 0)
        self.assertGreater(report["latency_ms"]["warm"], 0)
        self.assertGreaterEqual(report["cosine"]["recorder"], 0.99999)
        self.assertEqual(report["cosine"]["embed_api"], 1.0)
        self.assertGreaterEqual(report["cosine"]["cpu_reference"], 0.999)
        self.assertEqual(report["result"], "MATCH")

    def test_text_output_and_nreps(self):
        bundle = make_bundle("ir-tiny")
        result = run([RUN_IR101, bundle], env={"NREPS": "3"})
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("RESULT: MATCH", result.stdout)
        self.assertIn("ms over reps 2..3", result.stdout)  # the warm mean leaves out the cold rep 1
        self.assertRegex(result.stdout, r"model:\s+IR-tiny")
        self.assertRegex(result.stdout, r"backend:\s+\S+ \(.*; precision (f32|bf16|bf16-exact)\)")
        self.assertRegex(result.stdout, r"\nprecision:\s+(f32|bf16|bf16-exact)\n")

    def test_one_rep_has_no_warm_latency(self):
        result = run([RUN_IR18, make_bundle("ir-tiny"), "1"])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertRegex(result.stdout, r"latency warm \(mean\):\s+n/a \(reps=1: only the cold rep ran")
        self.assertNotIn("over 1 reps", result.stdout)

    def test_precision_names_what_ran(self):
        bundle = make_bundle("ir-tiny")
        reference = json.loads(run([RUN_IR18, "--json", "--backend", "cpu-reference", bundle, "1"]).stdout)
        self.assertEqual(reference["precision"], "bf16-exact")
        cpu = run([RUN_IR18, "--json", "--backend", "cpu", bundle, "1"])
        if cpu.returncode == 1 and "not compiled" in cpu.stderr:
            self.skipTest("no cpu backend in this build")
        self.assertIn(json.loads(cpu.stdout)["precision"], ("f32", "bf16"))

    def test_usage_errors_exit_2(self):
        bundle = make_bundle("ir-tiny")
        for args in ([], ["--bogus", bundle], [bundle, "zero"], ["--threads", "0", bundle],
                     ["--image", "a.png", "--input", "b.f32", bundle], [bundle, "1", "extra"], ["--backend"]):
            with self.subTest(args=args):
                result = run([RUN_IR18] + args)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn("usage:", result.stderr)
        self.assertEqual(run([RUN_IR18, bundle], env={"NREPS": "x"}).returncode, 2)

    def test_errors_exit_1_with_one_line(self):
        bundle = make_bundle("ir-tiny")
        for args in (["/nonexistent/bundle"], ["--backend", "warp-drive", bundle],
                     ["--input", "/nonexistent.f32", bundle], ["--image", "/nonexistent.png", bundle]):
            with self.subTest(args=args):
                result = run([RUN_IR18] + args)
                self.assertEqual(result.returncode, 1, result.stdout)
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        unknown = run([RUN_IR18, "--backend", "warp-drive", bundle])
        self.assertIn("cpu-reference", unknown.stderr)  # lists the compiled backends

    def test_thread_counts_out_of_range_are_one_line_input_errors(self):
        bundle = make_bundle("ir-tiny")
        for args, env, named in ((["--threads", "100000"], {}, "threads 100000"),
                                 (["--threads", "2147483647"], {}, "threads 2147483647"),
                                 ([], {"TACONITE_THREADS": "100000"}, "the environment variable TACONITE_THREADS='100000'")):
            with self.subTest(args=args, env=env):
                result = run([RUN_IR18, "--backend", "cpu-reference"] + args + [bundle, "1"], env=env)
                self.assertEqual(result.returncode, 1, result.stderr)
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
                self.assertIn("input error: " + named, result.stderr)
                self.assertIn("allowed 1..", result.stderr)

    def test_malformed_bundle_names_the_line(self):
        broken = os.path.join(WORK, "broken")
        shutil.copytree(make_bundle("ir-tiny"), broken, dirs_exist_ok=True)
        path = os.path.join(broken, "manifest.txt")
        with open(path) as manifest:
            lines = manifest.readlines()
        lines.insert(1, "warp_step x=1\n")
        with open(path, "w") as manifest:
            manifest.writelines(lines)
        result = run([RUN_IR18, broken])
        self.assertEqual(result.returncode, 1)
        self.assertIn('manifest.txt:2: unknown step warp_step: "warp_step x=1"', result.stderr)

    def test_mismatch_exits_3(self):
        tampered = os.path.join(WORK, "tampered")
        shutil.copytree(make_bundle("ir-tiny"), tampered, dirs_exist_ok=True)
        offset, size = tensor_entry(tampered, "ref.npu_embedding")
        with open(os.path.join(tampered, "tensors.bin"), "r+b") as blob:
            blob.seek(offset)
            values = struct.unpack(f"<{size // 4}f", blob.read(size))
            blob.seek(offset)
            blob.write(struct.pack(f"<{size // 4}f", *[-v for v in values]))
        result = run([RUN_IR18, "--json", tampered])
        self.assertEqual(result.returncode, 3, result.stderr)
        report = json.loads(result.stdout)
        self.assertEqual(report["result"], "MISMATCH")
        self.assertLess(report["cosine"]["recorder"], -0.99)
        self.assertIn("weight packing differs from the assumed layout", result.stderr)
        text = run([RUN_IR18, "--backend", "cpu-reference", tampered])
        self.assertEqual(text.returncode, 3)
        self.assertIn("RESULT: MISMATCH", text.stdout)
        self.assertIn("diagnostic:", text.stdout)

    def test_image_equals_raw_input_and_output_file(self):
        bundle = make_bundle("ir-tiny")
        rng = random.Random(3)
        pixels = [[(rng.randrange(256), rng.randrange(256), rng.randrange(256)) for _ in range(112)]
                  for _ in range(112)]
        image = os.path.join(WORK, "face.ppm")
        with open(image, "wb") as f:
            f.write(b"P6\n112 112\n255\n" + bytes(v for row in pixels for px in row for v in px))
        chw = [((pixels[y][x][c] / 255.0) - 0.5) / 0.5 for c in range(3) for y in range(112) for x in range(112)]
        raw = os.path.join(WORK, "face.f32")
        with open(raw, "wb") as f:
            f.write(struct.pack(f"<{len(chw)}f", *chw))
        out_image, out_raw = os.path.join(WORK, "image.emb"), os.path.join(WORK, "raw.emb")
        self.assertEqual(run([RUN_IR18, "--image", image, "--output", out_image, bundle, "1"]).returncode, 0)
        self.assertEqual(run([RUN_IR18, "--input", raw, "--output", out_raw, bundle, "1"]).returncode, 0)
        from_image, from_raw = read_f32(out_image), read_f32(out_raw)
        self.assertEqual(len(from_raw), 512)
        self.assertEqual(from_image, from_raw)  # RGB order and cvlface scaling match exactly
        # A BGR reading of the same image would give a different embedding.
        swapped = [((pixels[y][x][2 - c] / 255.0) - 0.5) / 0.5 for c in range(3) for y in range(112) for x in range(112)]
        with open(raw, "wb") as f:
            f.write(struct.pack(f"<{len(swapped)}f", *swapped))
        self.assertEqual(run([RUN_IR18, "--input", raw, "--output", out_raw, bundle, "1"]).returncode, 0)
        self.assertLess(cosine(read_f32(out_raw), from_image), 0.9999)

    def test_wrong_input_size_is_an_input_error(self):
        raw = os.path.join(WORK, "small.f32")
        with open(raw, "wb") as f:
            f.write(b"\0" * (3 * 100 * 4))
        result = run([RUN_IR18, "--input", raw, make_bundle("ir-tiny")])
        self.assertEqual(result.returncode, 1)
        self.assertIn("input error", result.stderr)


if __name__ == "__main__":
    try:
        unittest.main(argv=[sys.argv[0]], verbosity=2)
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
