#!/usr/bin/python3
"""Writes the tiny ONNX face embedders the onnx tests load, and a numpy reference of the valid one.

Usage: make_tiny_embedders.py OUT_DIR

tiny.onnx: face (1x3x16x20) -> Conv 3->4 (3x3, stride 2, pad 1) -> Relu -> Flatten -> Gemm -> embedding (1x8),
weights from a seeded generator; tiny.json its description (the ImageNet mean/std, BGR). The reference:
reference_faces.f32 (3 faces, CHW float32) and reference_embeddings.f32 (their embeddings, computed here with
numpy, not with ONNX or OpenCV). The other models are each wrong in one way the loader must name.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HEIGHT, WIDTH, DIM = 16, 20, 8


def weights(seed):
    rng = np.random.RandomState(seed)
    conv_w = rng.uniform(-0.5, 0.5, (4, 3, 3, 3)).astype(np.float32)
    conv_b = rng.uniform(-0.1, 0.1, (4,)).astype(np.float32)
    features = 4 * (HEIGHT // 2) * (WIDTH // 2)
    gemm_w = rng.uniform(-0.2, 0.2, (DIM, features)).astype(np.float32)
    gemm_b = rng.uniform(-0.1, 0.1, (DIM,)).astype(np.float32)
    return conv_w, conv_b, gemm_w, gemm_b


def graph_model(input_shape, output_shape, conv_w, conv_b, gemm_w, gemm_b, flatten=True):
    nodes = [helper.make_node("Conv", ["face", "conv_w", "conv_b"], ["conv"], kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["conv"], ["relu"])]
    if flatten:
        nodes += [helper.make_node("Flatten", ["relu"], ["flat"], axis=1),
                  helper.make_node("Gemm", ["flat", "gemm_w", "gemm_b"], ["embedding"], transB=1)]
    else:
        nodes[-1] = helper.make_node("Relu", ["conv"], ["embedding"])
    initializers = [numpy_helper.from_array(conv_w, "conv_w"), numpy_helper.from_array(conv_b, "conv_b")]
    if flatten:
        initializers += [numpy_helper.from_array(gemm_w, "gemm_w"), numpy_helper.from_array(gemm_b, "gemm_b")]
    graph = helper.make_graph(nodes, "tiny-embedder",
                              [helper.make_tensor_value_info("face", TensorProto.FLOAT, input_shape)],
                              [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, output_shape)],
                              initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], producer_name="taconite-tests")
    model.ir_version = 6
    onnx.checker.check_model(model)
    return model


def reference(faces, conv_w, conv_b, gemm_w, gemm_b):
    """The forward in plain numpy: direct convolution, ReLU, row-major flatten, dense layer."""
    n = faces.shape[0]
    padded = np.zeros((n, 3, HEIGHT + 2, WIDTH + 2), np.float64)
    padded[:, :, 1:-1, 1:-1] = faces
    oh, ow = HEIGHT // 2, WIDTH // 2
    conv = np.zeros((n, 4, oh, ow), np.float64)
    for o in range(4):
        for y in range(oh):
            for x in range(ow):
                patch = padded[:, :, 2 * y:2 * y + 3, 2 * x:2 * x + 3]
                conv[:, o, y, x] = (patch * conv_w[o]).sum(axis=(1, 2, 3)) + conv_b[o]
    relu = np.maximum(conv, 0.0)
    return relu.reshape(n, -1) @ gemm_w.T.astype(np.float64) + gemm_b


def description(name, dim, order="BGR"):
    return {"format": "taconite-embedder/1", "name": name,
            "input": {"name": "face", "width": WIDTH, "height": HEIGHT, "channel_order": order,
                      "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]},
            "output": {"name": "embedding", "dim": dim}, "threshold": 0.42, "comment": "extra members are allowed"}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    w = weights(30)

    def save(model, name, desc=None):
        onnx.save(model, os.path.join(out, name + ".onnx"))
        if desc is not None:
            with open(os.path.join(out, name + ".json"), "w") as f:
                json.dump(desc, f, indent=1)

    save(graph_model([1, 3, HEIGHT, WIDTH], [1, DIM], *w), "tiny", description("tiny-test-embedder", DIM))
    faces = np.random.RandomState(7).uniform(-2.0, 2.0, (3, 3, HEIGHT, WIDTH)).astype(np.float32)
    faces.tofile(os.path.join(out, "reference_faces.f32"))
    reference(faces, *w).astype(np.float32).tofile(os.path.join(out, "reference_embeddings.f32"))

    # One defect each (their descriptions are otherwise tiny.json's).
    save(graph_model([1, 3, HEIGHT + 4, WIDTH], [1, DIM], *weights(30)), "wrong_size", description("x", DIM))
    one_channel = list(w)
    one_channel[0] = w[0][:, :1]
    save(graph_model([1, 1, HEIGHT, WIDTH], [1, DIM], *one_channel), "one_channel", description("x", DIM))
    save(graph_model([2, 3, HEIGHT, WIDTH], [2, DIM], *w), "batch_two", description("x", DIM))
    save(graph_model([1, 3, HEIGHT, WIDTH], [1, 4, HEIGHT // 2, WIDTH // 2], *w, flatten=False), "map_output",
         description("x", DIM))
    nan = list(w)
    nan[3] = np.full_like(w[3], np.nan)
    save(graph_model([1, 3, HEIGHT, WIDTH], [1, DIM], *nan), "nan_output", description("x", DIM))


if __name__ == "__main__":
    main()
