"""The IR graph every importer produces, its checks, and the hand-off to taconite-mkbundle.

Every BatchNorm (and a conv's own bias) is reduced here to a per-channel scale and shift, in
float64, so the C++ writer folds and packs trained weights through the same code as synthetic
ones (the weight packing of spec §5.3 lives only there).
"""
import os
from dataclasses import dataclass, field
from typing import List, Optional

import numpy as np

from . import UnsupportedModel

INPUT_SIZE = 112
EMBEDDING = 512
STEM_CHANNELS = 64  # the bundle's stem step writes 64 channels


@dataclass
class Affine:
    """y = x * scale + shift per channel."""
    scale: np.ndarray
    shift: np.ndarray


def batchnorm(gamma, beta, mean, var, eps) -> Affine:
    gamma, beta, mean, var = (np.asarray(v, dtype=np.float64).reshape(-1) for v in (gamma, beta, mean, var))
    scale = gamma / np.sqrt(var + float(eps))
    return Affine(scale, beta - mean * scale)


def identity(channels) -> Affine:
    return Affine(np.ones(channels), np.zeros(channels))


def then(first: Affine, second: Affine) -> Affine:
    """second(first(x))."""
    return Affine(first.scale * second.scale, first.shift * second.scale + second.shift)


@dataclass
class Conv:
    weight: np.ndarray          # [out][in][k][k]
    post: Affine                # the conv's bias and the BatchNorm after it
    stride: int = 1


@dataclass
class Unit:
    name: str                   # the layer as the source names it, for errors
    bn1: Affine                 # leading BatchNorm
    conv1: Conv                 # 3x3 stride 1, then PReLU
    prelu: np.ndarray
    conv2: Conv                 # 3x3, the unit's stride
    shortcut: Optional[Conv]    # 1x1 conv (+BN), or None: MaxPool2d(1, stride) / identity

    @property
    def in_channels(self):
        return self.conv1.weight.shape[1]

    @property
    def out_channels(self):
        return self.conv1.weight.shape[0]


@dataclass
class IrGraph:
    name: str                   # e.g. IR-50, iresnet50
    channel_order: str          # RGB or BGR: the plane order the network was trained on
    source: str                 # e.g. "adaface-ckpt adaface_ir50.ckpt"
    stem: Conv
    stem_prelu: np.ndarray
    units: List[Unit]
    head_bn: Affine             # BN2d before the flatten
    fc_weight: np.ndarray       # [n][c*h*w]
    fc_bias: np.ndarray
    feature_bn: Affine          # BN1d after the Linear
    notes: List[str] = field(default_factory=list)


def _expect(condition, where, problem):
    if not condition:
        raise UnsupportedModel(f"{where}: {problem}")


def _channels(conv: Conv, alpha, where):
    """The conv's scale/shift (and PReLU slopes) have one value per output channel."""
    out = conv.weight.shape[0]
    for what, values in (("scale", conv.post.scale), ("shift", conv.post.shift), ("PReLU", alpha)):
        count = None if values is None else np.asarray(values).size
        _expect(count in (None, out), where, f"{count} {what} values for {out} channels")


def check(graph: IrGraph):
    """Shape checks the bundle format needs: 112x112x3 in, stride-1/2 3x3 units, 512 out."""
    w = graph.stem.weight
    _expect(w.shape == (STEM_CHANNELS, 3, 3, 3), "stem conv",
            f"weight {list(w.shape)}, the format needs a 3x3 conv 3 -> {STEM_CHANNELS} (112x112x3 input)")
    _expect(graph.stem.stride == 1, "stem conv", f"stride {graph.stem.stride}, expected 1")
    _channels(graph.stem, graph.stem_prelu, "stem")
    channels, size = STEM_CHANNELS, INPUT_SIZE
    for unit in graph.units:
        c1, c2 = unit.conv1.weight.shape, unit.conv2.weight.shape
        _expect(c1[1:] == (channels, 3, 3), unit.name, f"conv1 weight {list(c1)} does not take {channels} channels 3x3")
        _expect(unit.bn1.scale.size == channels, unit.name, f"leading BatchNorm has {unit.bn1.scale.size} channels")
        _channels(unit.conv1, unit.prelu, unit.name)
        _channels(unit.conv2, None, unit.name)
        if unit.shortcut is not None:
            _channels(unit.shortcut, None, unit.name + " shortcut")
        out = c1[0]
        _expect(out % 8 == 0, unit.name, f"{out} output channels, the format needs a multiple of 8")
        _expect(unit.conv1.stride == 1, unit.name, f"conv1 stride {unit.conv1.stride}, expected 1")
        _expect(c2 == (out, out, 3, 3), unit.name, f"conv2 weight {list(c2)}, expected {[out, out, 3, 3]}")
        stride = unit.conv2.stride
        _expect(stride in (1, 2) and size % stride == 0, unit.name, f"stride {stride} on a {size}x{size} input")
        if unit.shortcut is None:
            _expect(out == channels, unit.name, f"identity/pooling shortcut but {channels} -> {out} channels")
        else:
            s = unit.shortcut.weight.shape
            _expect(s == (out, channels, 1, 1), unit.name,
                    f"shortcut weight {list(s)}, expected {[out, channels, 1, 1]}")
            _expect(unit.shortcut.stride == stride, unit.name,
                    f"shortcut stride {unit.shortcut.stride} differs from the branch's {stride}")
        channels, size = out, size // stride
    _expect(len(graph.units) > 0, "body", "no residual units")
    k = channels * size * size
    _expect(graph.fc_weight.ndim == 2 and graph.fc_weight.shape[1] == k, "head Linear",
            f"weight {list(graph.fc_weight.shape)}, but the body gives {channels}x{size}x{size} = {k} features "
            f"for a {INPUT_SIZE}x{INPUT_SIZE} input")
    _expect(graph.fc_weight.shape[0] == EMBEDDING, "head Linear",
            f"{graph.fc_weight.shape[0]} outputs, the format's models give {EMBEDDING}")
    for what, values, expected in (("head BN2d", graph.head_bn.scale, channels),
                                   ("head Linear bias", graph.fc_bias, EMBEDDING),
                                   ("head BN1d", graph.feature_bn.scale, EMBEDDING)):
        _expect(np.asarray(values).size == expected, what, f"{np.asarray(values).size} values, expected {expected}")
    _expect(graph.channel_order in ("RGB", "BGR"), "channel order", graph.channel_order)
    return channels, size


def _f32(values):
    return np.ascontiguousarray(np.asarray(values, dtype=np.float64).reshape(-1), dtype="<f4")


def write_handoff(graph: IrGraph, face_chw, embedding, directory, params):
    """network.txt + network.bin in the format tools/mkbundle/network_file.hpp reads."""
    channels, size = check(graph)
    for text in [graph.name, graph.source, *params.values()]:
        _expect(text.isprintable() and text.strip(), "manifest text", f"{text!r} cannot be a manifest value")
    lines = ["taconite-network 1", f"name {graph.name}",
             f"comment AdaFace-family {graph.name} imported from {graph.source} by taconite-import"]
    lines += [f"param {k} {v}" for k, v in params.items()]
    blobs = []

    def affine(a: Affine):
        blobs.extend([_f32(a.scale), _f32(a.shift)])

    def conv(c: Conv):
        blobs.append(_f32(c.weight))
        affine(c.post)

    lines.append(f"stem {STEM_CHANNELS}")
    conv(graph.stem)
    blobs.append(_f32(graph.stem_prelu))
    for unit in graph.units:
        lines.append(f"unit {unit.in_channels} {unit.out_channels} {unit.conv2.stride} "
                     f"{'pool' if unit.shortcut is None else 'conv'}")
        affine(unit.bn1)
        conv(unit.conv1)
        blobs.append(_f32(unit.prelu))
        conv(unit.conv2)
        if unit.shortcut is not None:
            conv(unit.shortcut)
    lines.append(f"head {channels} {size} {size} {graph.fc_weight.shape[0]}")
    affine(graph.head_bn)
    blobs.extend([_f32(graph.fc_weight), _f32(graph.fc_bias)])
    affine(graph.feature_bn)
    blobs.extend([_f32(face_chw), _f32(embedding)])
    with open(os.path.join(directory, "network.txt"), "w") as txt:
        txt.write("\n".join(lines) + "\n")
    with open(os.path.join(directory, "network.bin"), "wb") as binary:
        for blob in blobs:
            binary.write(blob.tobytes())
