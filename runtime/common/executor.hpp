// The two halves of a backend. A PreparedBackend is the backend-ready model: weights in the layout
// it runs, devices open; immutable after construction (or internally synchronised) and shared by
// every session of a Model. An Executor is one session's per-call state (activations, staging,
// networks per batch size): one per Session, never used by two threads at once.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "numerics/bf16.hpp"

namespace taconite {

class Executor {
 public:
  virtual ~Executor() = default;

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

class PreparedBackend {
 public:
  virtual ~PreparedBackend() = default;

  // The numerics that run (Model::precision): kPrecisionF32 / kPrecisionBf16 for the fused cpu
  // network's compute type, kPrecisionBf16Exact for the replay.
  virtual std::string precision() const = 0;
  // Why these numerics run, when the backend chose them (cpu `auto`: what it measured); "" if it did not.
  virtual std::string precision_reason() const { return {}; }

  // Whether executors read the Plan's tensor views (the bundle's bytes) after construction. When
  // false, the load releases the bundle's bytes; when true it keeps a private copy of them.
  virtual bool reads_bundle_tensors() const { return true; }

  // A new session's state. Thread-safe: sessions are created from any thread. Throws Failure.
  virtual std::unique_ptr<Executor> new_executor() const = 0;
};

}  // namespace taconite
