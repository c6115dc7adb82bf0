"""IR-family ONNX face recognisers (InsightFace-style iresnet R50/R100 exports, or an AdaFace
backbone exported with torch.onnx.export) -> IrGraph, and the original graph's fp32 forward
through OpenCV DNN (an implementation independent of ours).

The walk follows the data flow from the graph input: stem Conv [-> BatchNormalization] -> PRelu;
units BatchNormalization -> Conv -> [BN] -> PRelu -> Conv -> [BN] -> Add with the unit input
(identity), a 1x1 Conv [-> BN] of it, or a MaxPool(1, s) of it; head BatchNormalization ->
Flatten/Reshape -> Gemm (or MatMul + Add) -> BatchNormalization. Exporters fold a BN into the
conv before it (Conv with bias); both forms are accepted. Every node must be used: anything else
is an error naming the node.
"""
import os
from collections import Counter, defaultdict

import numpy as np

from . import UnsupportedModel, one_line
from .adaface_net import num_layers_for_units
from .ir_graph import EMBEDDING, INPUT_SIZE, Affine, Conv, IrGraph, Unit, batchnorm, identity, then
from .model_file import MAX_ONNX_BYTES, open_model

PASS_THROUGH = ("Identity", "Dropout")
IR_FAMILY_ONLY = ("only IR-family networks (iresnet, AdaFace IR-18/34/50/101: full 3x3 convolutions in "
                  "BatchNorm-Conv-PReLU-Conv residual units) can become bundles")
# IR-101's largest tensor, the head Linear, has 12.8 M values.
MAX_TENSOR_VALUES = 1 << 26


def _attr(node, name, default=None):
    import onnx
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def _describe(node):
    return f"node '{node.name or node.output[0]}' ({node.op_type})"


def _op_counts(nodes):
    """What a graph is made of, most frequent ops first: '120 nodes: 52 Conv, 50 BatchNormalization, ...'."""
    counts = Counter(n.op_type for n in nodes)
    return f"{len(nodes)} nodes: " + ", ".join(f"{c} {op}" for op, c in counts.most_common())


def _check_family(walker):
    """Refuse, saying what the model is, a network built on convolutions the IR family never uses."""
    convs = [n for n in walker.nodes if n.op_type == "Conv"]
    grouped = [n for n in convs if _attr(n, "group", 1) != 1]
    if grouped:
        raise UnsupportedModel(f"{walker.path}: not an IR-family network: {len(grouped)} of its {len(convs)} "
                               f"convolutions are grouped or depthwise (as in MobileFaceNet); {IR_FAMILY_ONLY}")


class _Walker:
    def __init__(self, path, model):
        self.path = path
        graph = model.graph
        self.constants = {t.name: self.tensor(t, f"initializer '{t.name}'") for t in graph.initializer}
        self.consumers = defaultdict(list)
        self.used = set()
        nodes = list(graph.node)  # one wrapper object per node for the whole walk: `used` holds their ids
        for node in nodes:
            if node.op_type == "Constant":
                value = _attr(node, "value")
                if value is None:
                    self.fail(node, "a Constant without a tensor 'value' attribute")
                self.constants[node.output[0]] = self.tensor(value, _describe(node))
                self.used.add(id(node))
                continue
            if node.op_type == "Identity" and node.input[0] in self.constants:  # exporters dedupe equal tensors
                self.constants[node.output[0]] = self.constants[node.input[0]]
                self.used.add(id(node))
                continue
            for name in node.input:
                self.consumers[name].append(node)
        self.nodes = [n for n in nodes if id(n) not in self.used]
        inputs = [i for i in graph.input if i.name not in self.constants]
        if len(inputs) != 1 or len(graph.output) != 1:
            raise UnsupportedModel(f"{path}: {len(inputs)} inputs and {len(graph.output)} outputs; a face recogniser "
                                   f"has one image input and one embedding output")
        self.input, self.output = inputs[0], graph.output[0].name
        dims = [d.dim_value if d.HasField("dim_value") else None for d in self.input.type.tensor_type.shape.dim]
        if len(dims) != 4 or dims[1:] != [3, INPUT_SIZE, INPUT_SIZE]:
            raise UnsupportedModel(f"{path}: input '{self.input.name}' has shape {dims}, the format needs "
                                   f"[N, 3, {INPUT_SIZE}, {INPUT_SIZE}]")

    def fail(self, node, problem):
        raise UnsupportedModel(f"{self.path}: {_describe(node)}: {problem}")

    def tensor(self, proto, what):
        """A stored tensor as float64. Its declared size is bounded, and must match the data it holds,
        before anything is allocated for it."""
        import onnx.numpy_helper
        from onnx import TensorProto
        where = f"{self.path}: {what}"
        if proto.data_location == TensorProto.EXTERNAL:
            raise UnsupportedModel(f"{where} keeps its data in another file; only self-contained models are read")
        # The types read: bytes per value in raw_data, and the typed field that holds them otherwise.
        stored = {TensorProto.FLOAT: (4, "float_data"), TensorProto.FLOAT16: (2, "int32_data"),
                  TensorProto.DOUBLE: (8, "double_data"), TensorProto.INT32: (4, "int32_data"),
                  TensorProto.INT64: (8, "int64_data")}
        if proto.data_type not in stored:
            names = {v: k for k, v in TensorProto.DataType.items()}
            raise UnsupportedModel(f"{where} holds {names.get(proto.data_type, proto.data_type)} values; the "
                                   f"importer reads float, float16, double, int32 and int64 tensors")
        dims, count = list(proto.dims), 1
        if any(d < 0 for d in dims):
            raise UnsupportedModel(f"{where} declares shape {dims}, with a negative dimension")
        for d in dims:
            count *= d
        if count > MAX_TENSOR_VALUES:
            raise UnsupportedModel(f"{where} declares shape {dims}: more than the {MAX_TENSOR_VALUES} values a "
                                   f"tensor of an IR-family model may have")
        itemsize, field = stored[proto.data_type]
        held = len(proto.raw_data) // itemsize if proto.HasField("raw_data") else len(getattr(proto, field))
        if held != count or (proto.HasField("raw_data") and len(proto.raw_data) % itemsize):
            raise UnsupportedModel(f"{where} declares shape {dims} ({count} values) but holds {held}")
        return onnx.numpy_helper.to_array(proto).astype(np.float64)

    def const(self, node, index):
        if index >= len(node.input) or node.input[index] == "":
            return None
        name = node.input[index]
        if name not in self.constants:
            self.fail(node, f"input '{name}' is computed, the format needs a constant (initializer)")
        return self.constants[name]

    def need(self, node, index, what):
        """A constant input the op cannot do without."""
        value = self.const(node, index)
        if value is None:
            self.fail(node, f"no {what} (input {index})")
        return value

    def only_consumer(self, value, what):
        """The single node reading `value` (skipping Identity/Dropout), marked used."""
        while True:
            users = self.consumers.get(value, [])
            if len(users) != 1:
                names = ", ".join(_describe(n) for n in users) or "nothing"
                raise UnsupportedModel(f"{self.path}: expected one {what} reading '{value}', found {names}")
            node = users[0]
            self.used.add(id(node))
            if node.op_type in PASS_THROUGH:
                value = node.output[0]
                continue
            return node

    def take(self, value, op_types, what):
        node = self.only_consumer(value, what)
        if node.op_type not in op_types:
            self.fail(node, f"unexpected op where {what} ({'/'.join(op_types)}) should be")
        return node

    def bn(self, node):
        if len(node.output) != 1 and any(node.output[1:]):
            self.fail(node, "a training-mode BatchNormalization")
        gamma, beta, mean, var = (self.need(node, i, what) for i, what in
                                  enumerate(("scale", "bias", "mean", "variance"), start=1))
        if not gamma.size == beta.size == mean.size == var.size:
            self.fail(node, f"scale, bias, mean and variance of {gamma.size}, {beta.size}, {mean.size} and "
                            f"{var.size} values")
        return batchnorm(gamma, beta, mean, var, _attr(node, "epsilon", 1e-5))

    def conv(self, node, kernel):
        w = self.const(node, 1)
        if w is None or w.ndim != 4 or w.shape[2:] != (kernel, kernel):
            self.fail(node, f"weight {None if w is None else list(w.shape)}, expected a {kernel}x{kernel} kernel")
        if _attr(node, "group", 1) != 1 or any(d != 1 for d in _attr(node, "dilations", [1, 1])):
            self.fail(node, "grouped or dilated convolution")
        pad, pads = kernel // 2, list(_attr(node, "pads", [0, 0, 0, 0]))
        if pads != [pad] * 4 or _attr(node, "auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
            self.fail(node, f"pads {pads}, a {kernel}x{kernel} conv needs {[pad] * 4}")
        strides = list(_attr(node, "strides", [1, 1]))
        if strides[0] != strides[1] or strides[0] not in (1, 2):
            self.fail(node, f"strides {strides}, the format runs 1 or 2")
        bias = self.const(node, 2)
        post = identity(w.shape[0]) if bias is None else Affine(np.ones(w.shape[0]), bias.reshape(-1))
        return Conv(w, post, strides[0])

    def conv_bn(self, value, kernel, what):
        """Conv [-> BatchNormalization]; returns (Conv, output value)."""
        node = self.take(value, ("Conv",), what)
        conv = self.conv(node, kernel)
        out = node.output[0]
        users = self.consumers.get(out, [])
        if len(users) == 1 and users[0].op_type == "BatchNormalization":
            self.used.add(id(users[0]))
            conv.post = then(conv.post, self.bn(users[0]))
            out = users[0].output[0]
        return conv, out

    def prelu(self, value, channels, what):
        """Per-channel slopes (a single shared slope is repeated)."""
        node = self.take(value, ("PRelu",), what)
        alpha = self.need(node, 1, "slope").reshape(-1)
        if alpha.size not in (1, channels):
            self.fail(node, f"{alpha.size} slopes for {channels} channels")
        return np.resize(alpha, channels), node.output[0]


def _unit(walker, value, index):
    """One residual unit starting at `value`, or None when `value` feeds the head."""
    users = walker.consumers.get(value, [])
    bns = [n for n in users if n.op_type == "BatchNormalization"]
    if len(bns) != 1:
        names = ", ".join(_describe(n) for n in users) or "nothing"
        if index == 0:
            raise UnsupportedModel(f"{walker.path}: not an IR-family network ({_op_counts(walker.nodes)}): after "
                                   f"the stem comes {names}, not a residual unit's BatchNormalization; "
                                   f"{IR_FAMILY_ONLY}")
        raise UnsupportedModel(f"{walker.path}: after unit {index - 1} expected a BatchNormalization, found {names}")
    bn_node = bns[0]
    following = walker.consumers.get(bn_node.output[0], [])
    if len(users) == 1 and (len(following) != 1 or following[0].op_type == "Flatten" or
                            following[0].op_type == "Reshape"):
        return None, bn_node
    walker.used.add(id(bn_node))
    name = f"unit {index} (from {_describe(bn_node)})"
    bn1 = walker.bn(bn_node)
    conv1, v = walker.conv_bn(bn_node.output[0], 3, f"{name} conv1")
    alpha, v = walker.prelu(v, conv1.weight.shape[0], f"{name} PReLU")
    conv2, branch = walker.conv_bn(v, 3, f"{name} conv2")
    add = walker.take(branch, ("Add",), f"{name} residual Add")
    other = add.input[0] if add.input[1] == branch else add.input[1]
    shortcut = None
    side = [n for n in users if n is not bn_node and n is not add]
    if other == value:
        if side or conv2.stride != 1:
            walker.fail(add, "an identity shortcut needs stride 1 and no other reader of the unit input")
    elif len(side) != 1 or side[0].op_type not in ("Conv", "MaxPool"):
        walker.fail(add, f"the shortcut '{other}' is neither the unit input, a 1x1 Conv nor a MaxPool of it")
    elif side[0].op_type == "MaxPool":
        node = side[0]
        walker.used.add(id(node))
        if list(_attr(node, "kernel_shape")) != [1, 1] or list(_attr(node, "strides", [1, 1])) != [conv2.stride] * 2:
            walker.fail(node, f"a shortcut MaxPool must have kernel 1 and stride {conv2.stride}")
        if node.output[0] != other:
            walker.fail(add, "the shortcut MaxPool does not feed the residual Add")
    else:
        node = side[0]
        walker.used.add(id(node))
        shortcut = walker.conv(node, 1)
        out = node.output[0]
        nxt = walker.consumers.get(out, [])
        if len(nxt) == 1 and nxt[0].op_type == "BatchNormalization":
            walker.used.add(id(nxt[0]))
            shortcut.post = then(shortcut.post, walker.bn(nxt[0]))
            out = nxt[0].output[0]
        if out != other:
            walker.fail(add, "the shortcut conv does not feed the residual Add")
    return Unit(name, bn1, conv1, alpha, conv2, shortcut), add.output[0]


def _head(walker, bn_node):
    walker.used.add(id(bn_node))
    head_bn = walker.bn(bn_node)
    flat = walker.take(bn_node.output[0], ("Flatten", "Reshape"), "the head's Flatten")
    if flat.op_type == "Flatten" and _attr(flat, "axis", 1) != 1:
        walker.fail(flat, "Flatten must keep the batch axis (axis=1)")
    fc = walker.take(flat.output[0], ("Gemm", "MatMul"), "the head's Linear")
    if fc.op_type == "Gemm":
        if _attr(fc, "transA", 0) or _attr(fc, "alpha", 1.0) != 1.0 or _attr(fc, "beta", 1.0) != 1.0:
            walker.fail(fc, "only Gemm with transA=0, alpha=beta=1 is supported")
        w = walker.need(fc, 1, "weight")
        weight = w if _attr(fc, "transB", 0) else w.T
        bias = walker.const(fc, 2)
        out = fc.output[0]
    else:
        weight = walker.need(fc, 1, "weight").T
        add = walker.take(fc.output[0], ("Add",), "the Linear's bias Add")
        bias = walker.const(add, 1 if add.input[0] == fc.output[0] else 0)
        out = add.output[0]
    if bias is None:
        bias = np.zeros(weight.shape[0])
    feature_bn = identity(weight.shape[0])
    if out != walker.output:
        node = walker.take(out, ("BatchNormalization",), "the head's BatchNorm1d")
        feature_bn = walker.bn(node)
        out = node.output[0]
    if out != walker.output:
        extra = walker.consumers.get(out, [])
        if extra:
            walker.fail(extra[0], "unexpected op after the embedding BatchNorm1d")
        raise UnsupportedModel(f"{walker.path}: the graph output '{walker.output}' is not the embedding")
    return head_bn, weight, bias.reshape(-1), feature_bn


def load(path, name=None):
    """(IrGraph with channel order RGB, forward(chw) -> embedding)."""
    import onnx
    with open_model(path, MAX_ONNX_BYTES) as f:
        data = f.read(MAX_ONNX_BYTES + 1)
    if len(data) > MAX_ONNX_BYTES:
        raise UnsupportedModel(f"{path}: grew past {MAX_ONNX_BYTES} bytes while being read")
    try:  # from the bytes read: never another file (external data is refused per tensor)
        model = onnx.load_model_from_string(data)
    except Exception as e:
        raise UnsupportedModel(f"{path}: cannot read as an ONNX model ({one_line(e)})") from None
    walker = _Walker(path, model)
    _check_family(walker)
    stem_conv, v = walker.conv_bn(walker.input.name, 3, "the stem Conv")
    stem_alpha, v = walker.prelu(v, stem_conv.weight.shape[0], "the stem PReLU")
    units = []
    while True:
        unit, nxt = _unit(walker, v, len(units))
        if unit is None:
            head_bn, fc_weight, fc_bias, feature_bn = _head(walker, nxt)
            break
        units.append(unit)
        v = nxt
    for node in walker.nodes:
        if id(node) not in walker.used:
            walker.fail(node, "not part of an IR stem, unit or head")
    if fc_weight.shape[0] != EMBEDDING:
        raise UnsupportedModel(f"{path}: the embedding has {fc_weight.shape[0]} values, the format's models give "
                               f"{EMBEDDING}")
    layers = num_layers_for_units(len(units))
    graph = IrGraph(name=name or (f"iresnet{layers}" if layers else f"IR-{len(units)}-units"),
                    channel_order="RGB", source=f"onnx {os.path.basename(path)}", stem=stem_conv,
                    stem_prelu=stem_alpha, units=units, head_bn=head_bn, fc_weight=fc_weight, fc_bias=fc_bias,
                    feature_bn=feature_bn)

    def forward(chw):
        import cv2
        net = cv2.dnn.readNetFromONNX(np.frombuffer(data, np.uint8))  # the bytes checked, not the path again
        net.setInput(np.asarray(chw, dtype=np.float32)[np.newaxis])
        return net.forward().reshape(-1).astype(np.float32)
    return graph, forward
