#include "fp32_forward.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>

namespace taconite::mkbundle {

namespace {

double rms(const std::vector<float>& v) {
  double sum = 0.0;
  for (float x : v) sum += static_cast<double>(x) * x;
  return v.empty() ? 0.0 : std::sqrt(sum / static_cast<double>(v.size()));
}

void normalize(Tensor4& x, BatchNorm& bn) {  // calibrating
  calibrate_batchnorm(x, bn);
  batchnorm(x, bn);
}
void normalize(Tensor4& x, const BatchNorm& bn) { batchnorm(x, bn); }

// BN1d over a small batch: the per-feature mean comes from the batch; the variance of a few
// samples is too noisy on its own, so it is blended with the variance pooled over all features.
void calibrate_feature_bn(const std::vector<float>& features, int n, BatchNorm& bn) {
  const std::size_t dim = static_cast<std::size_t>(bn.channels);
  std::vector<double> var(dim);
  double pooled = 0.0;
  for (std::size_t j = 0; j < dim; ++j) {
    double sum = 0.0, sum_sq = 0.0;
    for (int i = 0; i < n; ++i) {
      const double v = features[static_cast<std::size_t>(i) * dim + j];
      sum += v;
      sum_sq += v * v;
    }
    const double mean = sum / n;
    bn.mean[j] = static_cast<float>(mean);
    var[j] = std::max(0.0, sum_sq / n - mean * mean);
    pooled += var[j];
  }
  pooled /= static_cast<double>(dim);
  for (std::size_t j = 0; j < dim; ++j) bn.var[j] = static_cast<float>(0.5 * var[j] + 0.5 * pooled);
}

// Unit is IrUnit (calibrating) or const IrUnit (inference).
template <typename Unit>
Tensor4 run_unit(Unit& u, const Tensor4& x) {
  Tensor4 r = x;
  normalize(r, u.bn1);
  r = conv2d(r, u.conv1);
  normalize(r, u.bn2);
  prelu(r, u.prelu);
  r = conv2d(r, u.conv2);
  normalize(r, u.bn3);
  Tensor4 shortcut;
  if (u.conv_shortcut) {
    shortcut = conv2d(x, u.shortcut_conv);
    normalize(shortcut, u.shortcut_bn);
  } else {
    shortcut = u.stride == 1 ? x : maxpool1(x, u.stride);
  }
  add_in_place(r, shortcut);
  return r;
}

// Net is IrNetwork (calibrating) or const IrNetwork (inference).
template <typename Net>
std::vector<float> run(Net& net, const Tensor4& images, ActivationTrace* trace) {
  constexpr bool calibrating = !std::is_const_v<Net>;
  Tensor4 x = conv2d(images, net.stem_conv);
  normalize(x, net.stem_bn);
  prelu(x, net.stem_prelu);
  if (trace) *trace = ActivationTrace{rms(x.data), {}, 0.0, 0.0};
  for (auto& unit : net.units) {
    x = run_unit(unit, x);
    if (trace) trace->unit_rms.push_back(rms(x.data));
  }
  normalize(x, net.output_bn);  // Dropout is the identity at inference
  if (trace) trace->head_input_rms = rms(x.data);
  std::vector<float> features = linear(x, net.fc);
  if constexpr (calibrating) calibrate_feature_bn(features, images.n, net.feature_bn);
  const std::size_t dim = static_cast<std::size_t>(net.embedding_dim());
  for (std::size_t i = 0; i < features.size(); ++i) {
    const std::size_t j = i % dim;
    features[i] = features[i] * net.feature_bn.scale(static_cast<int>(j)) + net.feature_bn.shift(static_cast<int>(j));
  }
  if (trace) trace->embedding_rms = rms(features);
  return features;
}

}  // namespace

std::vector<float> calibrate(IrNetwork& net, const Tensor4& images, ActivationTrace* trace) {
  return run(net, images, trace);
}

std::vector<float> embed_fp32(const IrNetwork& net, const Tensor4& images, ActivationTrace* trace) {
  return run(net, images, trace);
}

}  // namespace taconite::mkbundle
