// The unfolded AdaFace IR network (cvlface IR backbone, spec §9) with seeded random weights:
// real BatchNorm layers (running statistics filled in later by calibration), PReLU, strided
// convs, MaxPool/conv1x1 shortcuts, the Linear head and its BN1d. Plain f32, OIHW, channel-major.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace taconite::mkbundle {

enum class ModelKind { Ir18, Ir101, IrTiny };

std::optional<ModelKind> parse_model(std::string_view name);  // "ir18", "ir101", "ir-tiny"
std::string model_param_name(ModelKind kind);                  // "IR-18", "IR-101", "IR-tiny"

struct Conv2d {
  int in_channels = 0, out_channels = 0, kernel = 3, stride = 1;  // pad = kernel/2, no bias
  std::vector<float> weight;                                      // [out][in][k][k]
};

struct BatchNorm {
  int channels = 0;
  bool affine = true;           // BN1d of the head has no gamma/beta
  std::vector<float> gamma, beta, mean, var;
  float eps = 1e-5f;
  float scale(int c) const;     // gamma/sqrt(var+eps)
  float shift(int c) const;     // beta - mean*scale
};

struct PRelu {
  std::vector<float> alpha;  // one per channel
};

// BasicBlockIR(in, out, stride).
struct IrUnit {
  int in_channels = 0, out_channels = 0, stride = 1;
  int height = 0, width = 0;  // input spatial size
  BatchNorm bn1;              // residual: BN -> conv1 -> BN -> PReLU -> conv2(stride) -> BN
  Conv2d conv1;
  BatchNorm bn2;
  PRelu prelu;
  Conv2d conv2;
  BatchNorm bn3;              // the branch's last BN (small gain)
  bool conv_shortcut = false; // in != out: conv1x1(stride) + BN, else MaxPool2d(1, stride)
  Conv2d shortcut_conv;
  BatchNorm shortcut_bn;
};

struct Linear {
  int in_features = 0, out_features = 0;
  std::vector<float> weight;  // [out][in]
  std::vector<float> bias;
};

struct IrNetwork {
  ModelKind kind = ModelKind::IrTiny;
  std::string name = "IR-tiny";  // the bundle's `param model`
  int input_channels = 3, input_height = 112, input_width = 112;
  int stem_padded_channels = 8;  // the NPU stem reads 8 channels (3 real, 5 zero)
  Conv2d stem_conv;
  BatchNorm stem_bn;
  PRelu stem_prelu;
  std::vector<IrUnit> units;
  BatchNorm output_bn;  // BN2d(512)
  Linear fc;            // 512*7*7 -> 512
  BatchNorm feature_bn; // BN1d(512): affine=False in AdaFace, affine in InsightFace's iresnet
  int embedding_dim() const { return fc.out_features; }
};

struct InitOptions {
  std::uint64_t seed = 1;
  float branch_gain = 0.2f;  // gamma of each residual branch's last BN
};

// Seeded random weights; BN running statistics are placeholders (mean 0, var 1) until calibrated.
IrNetwork make_network(ModelKind kind, const InitOptions& options);

// Units per stage of each model.
std::vector<int> units_per_stage(ModelKind kind);

}  // namespace taconite::mkbundle
