#!/usr/bin/python3
"""taconite-gallery on real people (../shared/realfaces; skipped, exit 77, saying so, without it or
without YuNet): every person of photos/ enrolled with --detector (YuNet + its 5 points, as the
pipeline sees faces), then calibrate leave-one-out with the 60 impostor photos, for both real
embedders. Issue 30's open-set targets are asserted for the 128-d model: at the threshold calibrate
picks, >= 95 % of genuine probes named right, <= 1 named wrong, <= 5 % of impostors named.

Usage (from meson): test_gallery_cli_realfaces.py <taconite-gallery>
Environment: TACONITE_REALFACES_DIR (../shared/realfaces), TACONITE_YUNET_MODEL.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

CLI = os.path.abspath(sys.argv[1])
REALFACES = os.environ.get("TACONITE_REALFACES_DIR", "")
YUNET = os.environ.get("TACONITE_YUNET_MODEL", "")

# The descriptions of docs/models.md (tests/onnx/realfaces_test.cpp uses the same).
MODELS = {
    "mobilefacenet_foamliu_opset10.onnx": {
        "format": "taconite-embedder/1", "name": "mobilefacenet-foamliu",
        "input": {"name": "input0", "width": 112, "height": 112, "channel_order": "RGB",
                  "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]},
        "output": {"name": "output0", "dim": 128}, "threshold": 0.32},
    "fr_feature_faceplugin.onnx": {
        "format": "taconite-embedder/1", "name": "mobilefacenet-faceplugin",
        "input": {"name": "input", "width": 112, "height": 112, "channel_order": "BGR",
                  "mean": [0.498039, 0.498039, 0.498039], "std": [0.501961, 0.501961, 0.501961]},
        "output": {"name": "output", "dim": 512}, "threshold": 0.32},
}


def run(*args):
    r = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=900)
    return r


class RealPeople(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="taconite-gallery-realfaces-")
        photos = os.path.join(REALFACES, "photos")
        cls.people = sorted(p for p in os.listdir(photos) if not p.startswith("_"))
        cls.photo_count = {p: len(os.listdir(os.path.join(photos, p))) for p in cls.people}
        cls.reports = {}
        for file, description in MODELS.items():
            model = os.path.join(cls.work, file)
            os.symlink(os.path.join(REALFACES, "models", file), model)
            with open(model[:-len(".onnx")] + ".json", "w") as f:
                json.dump(description, f)
            g = os.path.join(cls.work, description["name"] + ".db")
            r = run("create", g, "--model", model)
            assert r.returncode == 0, r.stderr
            enrolled = {}
            for person in cls.people:
                r = run("enroll", g, "--model", model, "--detector", YUNET, "--largest", "--name", person,
                        os.path.join(photos, person))
                enrolled[person] = r
            r = run("calibrate", g, "--model", model, "--detector", YUNET, "--impostors",
                    os.path.join(photos, "_impostors"), "--json", "--plot", os.path.join(cls.work, "scores.png"))
            cls.reports[description["output"]["dim"]] = (enrolled, r)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work)

    def report(self, dim):
        enrolled, r = self.reports[dim]
        for person, e in enrolled.items():
            self.assertEqual(e.returncode, 0, f"{person}: {e.stderr}")
            # Every photo holds a face YuNet finds (the data's README): nothing is skipped.
            self.assertIn(f"enrolled {self.photo_count[person]} template(s) for {person}", e.stdout)
            self.assertNotIn("skipped", e.stdout + e.stderr)
        self.assertEqual(r.returncode, 0, r.stderr)
        report = json.loads(r.stdout)
        print(f"\n{dim}-d: {json.dumps(report)}", file=sys.stderr)
        # Leave-one-out: every photo of a person with two or more is a probe (lin_manuel_miranda's one is not).
        self.assertEqual(report["genuine_probes"], sum(n for n in self.photo_count.values() if n >= 2))
        self.assertEqual(report["impostor_source"], "images")
        self.assertEqual(report["impostor_images"], 60)
        self.assertEqual(report["impostor_images_skipped"], 0)
        self.assertGreaterEqual(report["impostors"], 60)  # every face of every photo, background faces too
        self.assertLessEqual(report["fpir"], 0.01)
        self.assertGreater(report["threshold"], 0.0)
        self.assertLess(report["threshold"], 1.0)
        return report

    def test_128d_meets_the_issues_open_set_targets(self):
        report = self.report(128)
        self.assertGreaterEqual(report["named_right"], 0.95 * report["genuine_probes"])
        self.assertLessEqual(report["named_wrong"], 1)
        self.assertLessEqual(report["impostors_named"], 0.05 * report["impostors"])

    def test_512d_names_people_at_least_as_the_targets_ask(self):
        # Measured here: as the 128-d model (every probe right, no impostor named); the sound claim
        # asserted is the issue's targets again, not the exact figures.
        report = self.report(512)
        self.assertGreaterEqual(report["named_right"], 0.95 * report["genuine_probes"])
        self.assertLessEqual(report["named_wrong"], 1)
        self.assertLessEqual(report["impostors_named"], 0.05 * report["impostors"])


if __name__ == "__main__":
    missing = [what for what, where in (("../shared/realfaces", os.path.join(REALFACES, "photos")),
                                        ("YuNet (../shared/models)", YUNET)) if not where or not os.path.exists(where)]
    if missing:
        print("SKIP: no " + " and no ".join(missing) + " in this checkout: the real-people gallery tests are skipped")
        sys.exit(77)
    unittest.main(argv=sys.argv[:1], verbosity=2)
