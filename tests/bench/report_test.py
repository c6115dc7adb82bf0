#!/usr/bin/python3
"""bench/report.py on JSON lines written here (ratios against PyTorch and ONNX Runtime, models named by
"model" or bundle, peers that could not run), and bench/ort_bench.mjs's skip without onnxruntime-node.

usage: report_test.py BENCH_DIR
"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

BENCH = sys.argv[1]
spec = importlib.util.spec_from_file_location("report", os.path.join(BENCH, "report.py"))
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)


def run(backend, ms, cpu_ms=None, bundle="/nonexistent/ir18", **extra):
    b1 = {"median_ms": ms, "faces_per_s": round(1000 / ms, 2)}
    if cpu_ms is not None:
        b1["cpu_ms"] = cpu_ms
    line = {"bundle": bundle, "backend": backend, "precision": "f32", "threads": 2, "load_s": 0.5,
            "peak_rss_mib": 100.0, "cosine_fp32": 0.99999, "batches": {"1": b1}}
    line.update(extra)
    return line


HEADER = [{"machine": "test CPU", "threads": 2, "load_average": "0.10 0.20 0.30", "onednn": "2.6.3-1"},
          {"peak_gflops": 100.0, "impl": "jit:avx512_core", "threads": 2, "native_bf16": True}]


def table_rows(lines):
    """{(model, engine): [cells]} of the report's table."""
    rows = {}
    for line in lines:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and not line.startswith("| model"):
            rows[(cells[0], cells[1])] = cells
    return rows


class Ratios(unittest.TestCase):
    def test_every_row_divided_by_both_peers_of_its_model(self):
        lines = report.report(HEADER + [
            run("cpu", 30.0, 50.0), run("pytorch", 60.0, 100.0), run("onnxruntime", 20.0, 40.0, onnxruntime="1.30.0"),
            run("opencv-dnn", 45.0)])
        rows = table_rows(lines)
        cpu = rows[("ir18", "cpu f32")]
        self.assertEqual(cpu[5], "0.50 (0.50)")   # x PyTorch: 30/60, 50/100
        self.assertEqual(cpu[6], "1.50 (1.25)")   # x ONNX Runtime: 30/20, 50/40
        self.assertEqual(rows[("ir18", "onnxruntime 1.30.0")][6], "1.00 (1.00)")
        self.assertEqual(rows[("ir18", "pytorch fp32 eager")][6], "3.00 (2.50)")
        self.assertEqual(rows[("ir18", "opencv-dnn")][6], "2.25")  # no CPU time: wall only

    def test_peers_of_another_model_are_not_used(self):
        lines = report.report(HEADER + [
            run("cpu", 30.0, 50.0), run("onnxruntime", 100.0, 200.0, bundle="/nonexistent/ir101"),
            run("cpu", 150.0, 300.0, bundle="/nonexistent/ir101")])
        rows = table_rows(lines)
        self.assertEqual(rows[("ir18", "cpu f32")][6], "-")
        self.assertEqual(rows[("ir101", "cpu f32")][6], "1.50 (1.50)")
        self.assertEqual(rows[("ir101", "cpu f32")][5], "-")  # no PyTorch run

    def test_auto_is_its_own_engine_beside_f32(self):
        lines = report.report(HEADER + [run("cpu", 30.0, 50.0, requested="auto"), run("cpu", 20.0, 40.0),
                                        run("onnxruntime", 40.0, 40.0)])
        rows = table_rows(lines)
        self.assertEqual(rows[("ir18", "cpu f32 (auto)")][6], "0.75 (1.25)")
        self.assertEqual(rows[("ir18", "cpu f32")][6], "0.50 (1.00)")

    def test_onnx_runtime_without_spinning_says_so(self):
        line = run("onnxruntime", 20.0, 40.0, onnxruntime="1.30.0", options={"allow_spinning": False})
        self.assertEqual(report.engine_name(line), "onnxruntime 1.30.0 (no spin)")

    def test_ratio_without_figures(self):
        self.assertEqual(report.ratio(run("cpu", 30.0, 50.0), None), (None, None))
        self.assertEqual(report.ratio(run("cpu", 30.0), run("onnxruntime", 15.0, 20.0)), (2.0, None))


class Rounds(unittest.TestCase):
    def test_median_of_per_round_ratios_and_of_figures(self):
        lines = report.report(HEADER + [
            {"round": 1}, run("cpu", 30.0, 60.0), run("onnxruntime", 20.0, 40.0),
            {"round": 2}, run("cpu", 40.0, 80.0), run("onnxruntime", 20.0, 20.0),
            {"round": 3}, run("cpu", 100.0, 100.0), run("onnxruntime", 100.0, 50.0)])
        cpu = table_rows(lines)[("ir18", "cpu f32")]
        # per round 1.5, 2.0, 1.0 (wall) and 1.5, 4.0, 2.0 (CPU): medians 1.5 and 2.0, where the
        # ratio of the medians would be 40/20 = 2.0 and 80/40 = 2.0
        self.assertEqual(cpu[6], "1.50 (2.00)")
        self.assertEqual(cpu[4], "40.0 (80) [3 rounds: 30.0–100.0]")

    def test_a_round_without_the_peer_gives_no_ratio(self):
        lines = report.report(HEADER + [{"round": 1}, run("cpu", 30.0, 60.0), {"round": 2}, run("onnxruntime", 20.0, 40.0)])
        self.assertEqual(table_rows(lines)[("ir18", "cpu f32")][6], "-")


class RealEmbedders(unittest.TestCase):
    def test_onnx_models_named_by_model_with_file_weights(self):
        ours = {"model": "foamliu-128", "engine": "taconite opencv-dnn", "backend": "opencv-dnn", "precision": "f32",
                "threads": 2, "load_s": 0.1, "peak_rss_mib": 64.0, "weight_bytes": 4 * 2**20, "reference": True,
                "per_face_calls": False, "batches": {"1": {"median_ms": 12.0, "faces_per_s": 83.3, "cpu_ms": 22.0},
                                                      "8": {"median_ms": 80.0, "faces_per_s": 100.0}}}
        ort = {"model": "foamliu-128", "backend": "onnxruntime", "onnxruntime": "1.30.0", "precision": "f32",
               "threads": 2, "load_s": 0.1, "peak_rss_mib": 80.0, "weight_bytes": 4 * 2**20, "per_face_calls": True,
               "cosine_fp32": 0.999999, "batches": {"1": {"median_ms": 8.0, "faces_per_s": 125.0, "cpu_ms": 11.0},
                                                    "8": {"median_ms": 64.0, "faces_per_s": 125.0}}}
        lines = report.report(HEADER + [ours, ort])
        rows = table_rows(lines)
        mine = rows[("foamliu-128", "taconite opencv-dnn")]
        self.assertEqual(mine[6], "1.50 (2.00)")
        self.assertEqual(mine[3], "64 (16.0x)")  # peak RSS over the 4 MiB file
        self.assertEqual(mine[10], "(the reference)")
        self.assertEqual(mine[9], "-")  # no MAC count for these networks
        self.assertEqual(rows[("foamliu-128", "onnxruntime 1.30.0")][7], "125.0 ¹")
        self.assertEqual(mine[7], "100.0")
        self.assertIn("¹ the ONNX file's batch is fixed at 1: ONNX Runtime runs batch 8 as 8 one-face calls", lines)


class NotMeasured(unittest.TestCase):
    def test_skipped_and_failed_peers_are_listed_with_their_reason(self):
        lines = report.report(HEADER + [
            {"backend": "onnxruntime", "skipped": "npm install failed: ENOTFOUND"},
            {"bundle": "/nonexistent/ir101", "backend": "onnxruntime", "failed": "bad model"},
            run("cpu", 30.0, 50.0)])
        self.assertIn("Not measured: onnxruntime on every model: npm install failed: ENOTFOUND", lines)
        self.assertIn("Not measured: onnxruntime on ir101: bad model", lines)
        self.assertEqual(table_rows(lines)[("ir18", "cpu f32")][6], "-")


@unittest.skipUnless(shutil.which("node"), "no node on PATH: bench/ort_bench.mjs not checked")
class OrtBenchWithoutPackage(unittest.TestCase):
    def scratch(self, prefix):
        """A new directory, removed after the test."""
        directory = tempfile.TemporaryDirectory(prefix=prefix)
        self.addCleanup(directory.cleanup)
        return directory.name

    def test_skips_saying_why_when_onnxruntime_node_is_absent(self):
        empty = self.scratch("taconite-ort-empty-")
        done = subprocess.run(["node", os.path.join(BENCH, "ort_bench.mjs"), "--ort-dir", empty, "--threads", "2",
                               "--face", "/nonexistent.f32", "--ref", "/nonexistent.f32", "--prefix", "/nonexistent",
                               "--bundle", "/nonexistent/ir18", "1"], capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)
        line = json.loads(done.stdout)
        self.assertEqual(line["backend"], "onnxruntime")
        self.assertIn("onnxruntime-node does not load from " + empty, line["skipped"])
        self.assertEqual(report.model_of(line), "ir18")

    @unittest.skipUnless(shutil.which("npm"), "no npm on PATH: the failed install not checked")
    def test_a_failed_install_says_why(self):
        # a registry on a closed local port: npm fails at once, nothing leaves the machine
        env = dict(os.environ, npm_config_registry="http://127.0.0.1:9/", npm_config_fetch_retries="0",
                   npm_config_cache=self.scratch("taconite-npm-cache-"))
        target = self.scratch("taconite-ort-install-")
        done = subprocess.run(["node", os.path.join(BENCH, "ort_bench.mjs"), "--install", "--ort-dir", target],
                              capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(done.returncode, 1, done.stderr)
        line = json.loads(done.stdout)
        self.assertEqual(line["backend"], "onnxruntime")
        self.assertIn(f"npm install --ignore-scripts onnxruntime-node into {target} failed: ", line["skipped"])
        self.assertIn("ECONNREFUSED", line["skipped"])

    def test_bad_arguments_are_refused(self):
        done = subprocess.run(["node", os.path.join(BENCH, "ort_bench.mjs"), "--ort-dir", "/tmp", "--threads", "0",
                               "--face", "f", "--ref", "r", "--prefix", "p", "1"], capture_output=True, text=True,
                              timeout=60)
        self.assertEqual(done.returncode, 2)
        self.assertIn("--threads must be 1..256", done.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
