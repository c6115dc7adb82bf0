// The f32 forward of the unfolded network, and the calibration of spec §9: the same forward run
// on a batch with every BatchNorm taking its running statistics from the activations that reach
// it, layer by layer.
#pragma once

#include <vector>

#include "fp32_ops.hpp"
#include "ir_network.hpp"

namespace taconite::mkbundle {

// Root-mean-square of the activations after the stem, each unit and the head, to show they stay O(1).
struct ActivationTrace {
  double stem_rms = 0.0;
  std::vector<double> unit_rms;
  double head_input_rms = 0.0;  // after the output BN2d, what the Linear sees
  double embedding_rms = 0.0;
};

// images: [n][3][112][112]. Sets every BN's running mean/var from this batch, in network order,
// each from the activations produced by the already-calibrated layers before it.
// Returns the batch's embeddings ([n][embedding_dim]).
std::vector<float> calibrate(IrNetwork& net, const Tensor4& images, ActivationTrace* trace = nullptr);

// Inference with the running statistics. Returns [n][embedding_dim] embeddings (not normalised).
std::vector<float> embed_fp32(const IrNetwork& net, const Tensor4& images, ActivationTrace* trace = nullptr);

}  // namespace taconite::mkbundle
