// An executor runs a validated Plan for a backend: the replay executor (with a ConvDevice) or
// the fused oneDNN network. IrEmbedder owns exactly one.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "numerics/bf16.hpp"

namespace taconite {

class Executor {
 public:
  virtual ~Executor() = default;

  virtual std::string backend() const = 0;

  // The numerics that run (IrEmbedder::precision): kPrecisionF32 / kPrecisionBf16 for the fused
  // cpu network's compute type, kPrecisionBf16Exact for the replay.
  virtual std::string precision() const = 0;

  // Whether forward() reads the Plan's tensor views (the bundle's bytes) after construction. When
  // false, the load releases the bundle's bytes; when true it keeps a private copy of them.
  virtual bool reads_bundle_tensors() const { return true; }

  // Something the user should know about how this backend runs the bundle (e.g. the cpu backend
  // fell back to the slow exact replay); empty when there is nothing to say.
  virtual std::string load_note() const { return {}; }

  // `input` is the input step's buffer: tiled bf16 [h][c/8][w][8]. Returns the head output.
  // Throws Failure(Device) when a device call fails; never fails on bundle content.
  virtual std::vector<float> forward(std::span<const numerics::bf16_t> input) = 0;

  // Several inputs; the default runs them one by one.
  virtual std::vector<std::vector<float>> forward_batch(std::span<const std::span<const numerics::bf16_t>> inputs) {
    std::vector<std::vector<float>> outputs;
    outputs.reserve(inputs.size());
    for (const auto& input : inputs) outputs.push_back(forward(input));
    return outputs;
  }
};

}  // namespace taconite
