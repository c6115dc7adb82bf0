#include "ir_network.hpp"

#include <cmath>

#include "rng.hpp"

namespace taconite::mkbundle {

std::optional<ModelKind> parse_model(std::string_view name) {
  if (name == "ir18") return ModelKind::Ir18;
  if (name == "ir101") return ModelKind::Ir101;
  if (name == "ir-tiny") return ModelKind::IrTiny;
  return std::nullopt;
}

std::string model_param_name(ModelKind kind) {
  switch (kind) {
    case ModelKind::Ir18: return "IR-18";
    case ModelKind::Ir101: return "IR-101";
    case ModelKind::IrTiny: return "IR-tiny";
  }
  return "IR";
}

std::vector<int> units_per_stage(ModelKind kind) {
  switch (kind) {
    case ModelKind::Ir18: return {2, 2, 2, 2};
    case ModelKind::Ir101: return {3, 13, 30, 3};
    case ModelKind::IrTiny: return {1, 1, 1, 1};
  }
  return {};
}

float BatchNorm::scale(int c) const {
  const float g = affine ? gamma[static_cast<std::size_t>(c)] : 1.0f;
  return g / std::sqrt(var[static_cast<std::size_t>(c)] + eps);
}

float BatchNorm::shift(int c) const {
  const float b = affine ? beta[static_cast<std::size_t>(c)] : 0.0f;
  return b - mean[static_cast<std::size_t>(c)] * scale(c);
}

namespace {

// He-normal weights (std sqrt(2/fan_in)), the usual init for convs followed by BN + PReLU.
Conv2d make_conv(Rng& rng, int in, int out, int kernel, int stride) {
  Conv2d conv{in, out, kernel, stride, {}};
  const double std_dev = std::sqrt(2.0 / (static_cast<double>(in) * kernel * kernel));
  conv.weight.resize(static_cast<std::size_t>(out) * in * kernel * kernel);
  for (float& w : conv.weight) w = static_cast<float>(rng.normal() * std_dev);
  return conv;
}

// gamma around `gain`, beta small; running statistics neutral until calibration.
BatchNorm make_bn(Rng& rng, int channels, float gain, bool affine = true) {
  BatchNorm bn;
  bn.channels = channels;
  bn.affine = affine;
  bn.mean.assign(static_cast<std::size_t>(channels), 0.0f);
  bn.var.assign(static_cast<std::size_t>(channels), 1.0f);
  if (affine) {
    bn.gamma.resize(static_cast<std::size_t>(channels));
    bn.beta.resize(static_cast<std::size_t>(channels));
    for (int c = 0; c < channels; ++c) {
      bn.gamma[static_cast<std::size_t>(c)] = static_cast<float>(gain * rng.uniform(0.8, 1.2));
      bn.beta[static_cast<std::size_t>(c)] = static_cast<float>(0.1 * gain * rng.normal());
    }
  }
  return bn;
}

PRelu make_prelu(Rng& rng, int channels) {
  PRelu p;
  p.alpha.resize(static_cast<std::size_t>(channels));
  for (float& a : p.alpha) a = static_cast<float>(rng.uniform(0.1, 0.35));
  return p;
}

}  // namespace

IrNetwork make_network(ModelKind kind, const InitOptions& options) {
  Rng root(options.seed);
  IrNetwork net;
  net.kind = kind;
  net.name = model_param_name(kind);
  Rng stem_rng = root.fork(1);
  net.stem_conv = make_conv(stem_rng, net.input_channels, 64, 3, 1);
  net.stem_bn = make_bn(stem_rng, 64, 1.0f);
  net.stem_prelu = make_prelu(stem_rng, 64);

  const int stage_channels[4] = {64, 128, 256, 512};
  const std::vector<int> per_stage = units_per_stage(kind);
  int in = 64, size = net.input_height;
  std::uint64_t unit_index = 0;
  for (std::size_t stage = 0; stage < per_stage.size(); ++stage) {
    for (int u = 0; u < per_stage[stage]; ++u) {
      Rng rng = root.fork(100 + unit_index++);
      IrUnit unit;
      unit.in_channels = in;
      unit.out_channels = stage_channels[stage];
      unit.stride = u == 0 ? 2 : 1;
      unit.height = unit.width = size;
      unit.bn1 = make_bn(rng, in, 1.0f);
      unit.conv1 = make_conv(rng, in, unit.out_channels, 3, 1);
      unit.bn2 = make_bn(rng, unit.out_channels, 1.0f);
      unit.prelu = make_prelu(rng, unit.out_channels);
      unit.conv2 = make_conv(rng, unit.out_channels, unit.out_channels, 3, unit.stride);
      unit.bn3 = make_bn(rng, unit.out_channels, options.branch_gain);
      unit.conv_shortcut = in != unit.out_channels;
      if (unit.conv_shortcut) {
        unit.shortcut_conv = make_conv(rng, in, unit.out_channels, 1, unit.stride);
        unit.shortcut_bn = make_bn(rng, unit.out_channels, 1.0f);
      }
      net.units.push_back(std::move(unit));
      in = stage_channels[stage];
      if (u == 0) size /= 2;
    }
  }

  Rng head_rng = root.fork(2);
  net.output_bn = make_bn(head_rng, in, 1.0f);
  net.fc.in_features = in * size * size;
  net.fc.out_features = 512;
  net.fc.weight.resize(static_cast<std::size_t>(net.fc.out_features) * net.fc.in_features);
  const double fc_std = 1.0 / std::sqrt(static_cast<double>(net.fc.in_features));
  for (float& w : net.fc.weight) w = static_cast<float>(head_rng.normal() * fc_std);
  net.fc.bias.resize(static_cast<std::size_t>(net.fc.out_features));
  for (float& b : net.fc.bias) b = static_cast<float>(0.1 * head_rng.normal());
  net.feature_bn = make_bn(head_rng, net.fc.out_features, 1.0f, /*affine=*/false);
  return net;
}

}  // namespace taconite::mkbundle
