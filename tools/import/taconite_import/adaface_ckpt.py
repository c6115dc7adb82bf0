"""AdaFace checkpoints (Lightning .ckpt whose state_dict holds `model.*` = net.py's Backbone and
`head.*` = the AdaFace margin head) -> IrGraph, and the original fp32 forward."""
import os
import pickle
import re
import zipfile

import numpy as np
import torch

from . import UnsupportedModel, one_line
from .adaface_net import MODEL_NAMES, Backbone, num_layers_for_units
from .ir_graph import Conv, IrGraph, Unit, batchnorm
from .model_file import MAX_CHECKPOINT_BYTES, open_model

MARGIN_HEAD_PREFIX = "head."  # the training-only margin head (AdaFace's `head.kernel`): ignored
# torch's weights_only refusals: the text after WEIGHTS_ONLY_DETAIL starts with one of REFUSED_OBJECT
# when the pickle asks for an object weights_only does not build (other failures are damaged files).
WEIGHTS_ONLY_DETAIL = "WeightsUnpickler error:"
REFUSED_OBJECT = ("Unsupported class", "Trying to instantiate", "Trying to call reduce", "Can only build")


def _bn(module):
    return batchnorm(module.weight.detach() if module.affine else 1.0, module.bias.detach() if module.affine else 0.0,
                     module.running_mean, module.running_var, module.eps)


def _conv(conv, bn):
    return Conv(conv.weight.detach().numpy().astype(np.float64), _bn(bn), conv.stride[0])


def _check_archive(path, f):
    """torch.save writes a zip archive of stored (uncompressed) entries. Anything else is refused before
    PyTorch reads it: older formats allocate each storage at its declared size before reading it, and a
    compressed entry can declare any size (a zip bomb); stored entries lying inside the file bound every
    allocation by the file's size."""
    size = os.fstat(f.fileno()).st_size
    try:
        entries = zipfile.ZipFile(f).infolist()
    except Exception as e:  # BadZipFile, or a damaged directory
        raise UnsupportedModel(f"{path}: cannot read as a PyTorch checkpoint: not the zip archive torch.save has "
                               f"written since PyTorch 1.6 ({one_line(e)})") from None
    if any(entry.filename.rpartition("/")[2] == "constants.pkl" for entry in entries):
        # torch.load would hand it to torch.jit.load, even with weights_only
        raise UnsupportedModel(f"{path}: a TorchScript archive, not a checkpoint of weights")
    for entry in entries:
        if entry.compress_type != zipfile.ZIP_STORED or entry.file_size != entry.compress_size or \
                entry.header_offset + entry.compress_size > size:
            raise UnsupportedModel(f"{path}: cannot read as a PyTorch checkpoint: entry '{entry.filename}' "
                                   f"({entry.file_size} bytes) is compressed or lies outside the file; torch.save "
                                   f"stores its entries uncompressed")
    f.seek(0)


def _read_checkpoint(path):
    """The unpickled checkpoint: tensors and plain containers only (weights_only), never other objects."""
    with open_model(path, MAX_CHECKPOINT_BYTES) as f:
        _check_archive(path, f)
        try:
            return torch.load(f, map_location="cpu", weights_only=True)
        except pickle.UnpicklingError as e:  # torch wraps every failure of a weights_only load in this
            detail = (str(e).rpartition(WEIGHTS_ONLY_DETAIL)[2].strip() or "no detail").splitlines()[0]
            if not detail.startswith(REFUSED_OBJECT):
                raise UnsupportedModel(f"{path}: cannot read as a PyTorch checkpoint ({detail})") from None
            raise UnsupportedModel(f"{path}: refused to unpickle an object that is not a tensor or plain container "
                                   f"({detail}; Lightning's scheduler state is one): checkpoints are read with "
                                   f"torch.load(weights_only=True), since unpickling other objects can run code; "
                                   f"keep only the weights where the file is trusted: "
                                   f"torch.save({{'state_dict': checkpoint['state_dict']}}, ...)") from None
        except Exception as e:  # zip and EOF errors, ...
            raise UnsupportedModel(f"{path}: cannot read as a PyTorch checkpoint ({one_line(e)})") from None


def _backbone_state(path):
    """The backbone's state dict (prefix stripped) and the names of the ignored keys."""
    checkpoint = _read_checkpoint(path)
    if isinstance(checkpoint, dict) and "state_dict" in checkpoint:
        state = checkpoint["state_dict"]
    else:
        state = checkpoint
    if not isinstance(state, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                              for k, v in state.items()):
        raise UnsupportedModel(f"{path}: neither a Lightning checkpoint with a state_dict nor a state dict of tensors")
    prefixed = any(k.startswith("model.") for k in state)
    backbone, ignored = {}, []
    for key, value in state.items():
        if key.startswith(MARGIN_HEAD_PREFIX):
            ignored.append(key)
        elif prefixed and key.startswith("model."):
            backbone[key[len("model."):]] = value
        elif not prefixed:
            backbone[key] = value
        else:
            raise UnsupportedModel(f"{path}: unknown state-dict key '{key}' (expected model.* backbone weights "
                                   f"and the head.* margin head)")
    return backbone, ignored, "model." if prefixed else ""


def _check_keys(path, state, prefix):
    """Clear errors for what net.py variants the format cannot run, before load_state_dict."""
    for key in state:
        if re.match(r"body\.\d+\.res_layer\.6\.", key) or ".se_module." in key or ".fc1." in key:
            raise UnsupportedModel(f"{path}: {prefix}{key}: a squeeze-excitation block (IR-SE backbone) is not "
                                   f"supported; the bundle format has no SE step")
        if re.match(r"body\.\d+\.res_layer\.[7-9]\.", key):
            raise UnsupportedModel(f"{path}: {prefix}{key}: a bottleneck unit (IR-152/IR-200) is not supported")
    units = {int(m.group(1)) for k in state if (m := re.match(r"body\.(\d+)\.", k))}
    layers = num_layers_for_units(len(units)) if units and units == set(range(len(units))) else None
    if layers is None:
        raise UnsupportedModel(f"{path}: {len(units)} residual units (model.body.*) match none of IR-18/34/50/101 "
                               f"(8, 16, 24 or 49 units)")
    expected = Backbone(layers).state_dict()
    for key, value in state.items():
        if key not in expected:
            raise UnsupportedModel(f"{path}: unknown state-dict key '{prefix}{key}' for {MODEL_NAMES[layers]}")
        if tuple(value.shape) != tuple(expected[key].shape):
            raise UnsupportedModel(f"{path}: {prefix}{key} has shape {list(value.shape)}, {MODEL_NAMES[layers]} at "
                                   f"112x112x3 -> 512 needs {list(expected[key].shape)}")
    for key in expected:
        if key not in state:
            raise UnsupportedModel(f"{path}: missing tensor '{prefix}{key}' ({MODEL_NAMES[layers]})")
    return layers


def load(path):
    """(IrGraph with channel order BGR, forward(chw float32 [3][112][112]) -> embedding, ignored keys)."""
    state, ignored, prefix = _backbone_state(path)
    layers = _check_keys(path, state, prefix)
    model = Backbone(layers)
    model.load_state_dict(state, strict=True)
    model.eval()
    units = []
    for index, block in enumerate(model.body):
        r = block.res_layer
        shortcut = None if isinstance(block.shortcut_layer, torch.nn.MaxPool2d) else \
            _conv(block.shortcut_layer[0], block.shortcut_layer[1])
        units.append(Unit(f"{prefix}body.{index}", _bn(r[0]), _conv(r[1], r[2]),
                          r[3].weight.detach().numpy().astype(np.float64), _conv(r[4], r[5]), shortcut))
    out = model.output_layer
    graph = IrGraph(name=MODEL_NAMES[layers], channel_order="BGR",
                    source=f"adaface-ckpt {os.path.basename(path)}",
                    stem=_conv(model.input_layer[0], model.input_layer[1]),
                    stem_prelu=model.input_layer[2].weight.detach().numpy().astype(np.float64),
                    units=units, head_bn=_bn(out[0]),
                    fc_weight=out[3].weight.detach().numpy().astype(np.float64),
                    fc_bias=out[3].bias.detach().numpy().astype(np.float64), feature_bn=_bn(out[4]))
    if ignored:
        graph.notes.append(f"ignored {len(ignored)} training-only key(s): {', '.join(ignored[:3])}")

    def forward(chw):
        with torch.no_grad():
            embedding, norm = model(torch.from_numpy(np.asarray(chw, dtype=np.float32)).unsqueeze(0))
            return (embedding * norm)[0].numpy()  # net.py normalises; the bundle's head does not
    return graph, forward
