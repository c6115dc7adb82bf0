#!/usr/bin/env python3
"""Writes a valid ONNX model that is not YuNet (one 3x3 conv, output `features`), for the
detector's wrong-model test: it must be refused by its missing outputs, not crash."""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

weights = numpy_helper.from_array(np.ones((4, 3, 3, 3), dtype=np.float32), name="w")
conv = helper.make_node("Conv", ["input", "w"], ["features"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
graph = helper.make_graph([conv], "not-yunet",
                          [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, None, None])],
                          [helper.make_tensor_value_info("features", TensorProto.FLOAT, [1, 4, None, None])], [weights])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
model.ir_version = 7
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
