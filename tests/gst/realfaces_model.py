"""The real 128-d embedder of ../shared/realfaces as the real-face pipeline tests use it: linked into
a work directory beside the description docs/models.md gives (threshold included)."""
import json
import os

MODEL = "mobilefacenet_foamliu_opset10.onnx"
DESCRIPTION = {"format": "taconite-embedder/1", "name": "mobilefacenet-foamliu",
               "input": {"name": "input0", "width": 112, "height": 112, "channel_order": "RGB",
                         "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]},
               "output": {"name": "output0", "dim": 128}, "threshold": 0.32}


def linked_model(realfaces, work):
    """The model's path in `work`, its description beside it."""
    model = os.path.join(work, MODEL)
    os.symlink(os.path.join(realfaces, "models", MODEL), model)
    with open(model[:-len(".onnx")] + ".json", "w", encoding="utf-8") as f:
        json.dump(DESCRIPTION, f)
    return model
