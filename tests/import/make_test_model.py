#!/usr/bin/python3
"""make_test_model.py KIND OUT: a test model file for taconite-import (models.py).
KIND: adaface-ir18 | adaface-ir50 | adaface-ir101 (Lightning checkpoints), iresnet50-onnx."""
import os
import sys

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), os.environ.get("TACONITE_IMPORT_PYTHON", "")]
import models  # noqa: E402

kind, out = sys.argv[1:3]
if kind.startswith("adaface-ir"):
    layers = {"18": 18, "50": 50, "101": 100}[kind[len("adaface-ir"):]]
    models.save_lightning_checkpoint(models.adaface(layers), out, f"ir_{kind[len('adaface-ir'):]}")
elif kind == "iresnet50-onnx":
    models.export_onnx(models.iresnet(), out)
else:
    sys.exit(f"make_test_model.py: unknown kind {kind}")
