"""What the real-face pipeline tests share: skipping without the data, the real 128-d embedder of
../shared/realfaces linked into a fresh work directory beside the description docs/models.md gives
(threshold included), and running a command that must succeed."""
import json
import os
import shutil
import subprocess
import sys

MODEL = "mobilefacenet_foamliu_opset10.onnx"
DESCRIPTION = {"format": "taconite-embedder/1", "name": "mobilefacenet-foamliu",
               "input": {"name": "input0", "width": 112, "height": 112, "channel_order": "RGB",
                         "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]},
               "output": {"name": "output0", "dim": 128}, "threshold": 0.32}


def fresh_work_with_model(realfaces, yunet, work):
    """Empties `work`; returns the model's path in it, its description beside it. Exits 77 (meson's
    skip), saying why, without the real faces or the YuNet model."""
    for needed, missing in ((realfaces, not os.path.isdir(realfaces)), (yunet, not os.path.isfile(yunet))):
        if missing:
            print(f"SKIP: no {needed}: the real-face tests need ../shared/realfaces and ../shared/models' YuNet")
            sys.exit(77)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    model = os.path.join(work, MODEL)
    os.symlink(os.path.join(realfaces, "models", MODEL), model)
    with open(model[:-len(".onnx")] + ".json", "w", encoding="utf-8") as f:
        json.dump(DESCRIPTION, f)
    return model


def run(*args):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"{' '.join(map(str, args))} failed ({r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r
