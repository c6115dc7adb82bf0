// The fused graph instantiated for one batch size: oneDNN primitives in execution order, the
// activations in the layouts the convs choose (blocked end to end), and activation buffers
// reused by liveness. Built once per batch size; run many times. Not thread-safe.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "cpu/fused_graph.hpp"
#include "cpu/weight_store.hpp"

namespace taconite::cpu {

class OnednnNetwork {
 public:
  // Throws dnnl::error when a primitive cannot be created (e.g. bf16 on a CPU without it).
  // compute_type f32 or bf16: the activations' type (bf16 keeps the residual stream in f32). s8:
  // int8 convs on f32 activations, each conv's input quantized per channel from its value's entry
  // in `input_ranges` (per value id, see run() and cpu/int8_scales.hpp; s8 only).
  OnednnNetwork(const FusedGraph& graph, WeightStore& weights, dnnl::engine engine,
                dnnl::memory::data_type compute_type, int batch,
                std::span<const std::vector<float>> input_ranges = {});
  ~OnednnNetwork();

  int batch() const { return batch_; }
  // inputs.size() <= batch(): each a tiled bf16 input buffer; returns one head output per input.
  // With `conv_input_ranges` (f32 networks: int8's calibration) it also gets, per value id, the
  // largest |x| per channel any conv read from that value (empty for values no conv reads).
  std::vector<std::vector<float>> run(std::span<const std::span<const bf16_t>> inputs,
                                      std::vector<std::vector<float>>* conv_input_ranges = nullptr);

  // The oneDNN implementation of every primitive, counted, e.g. "conv jit:avx2 x21, ...".
  std::string implementations() const;
  std::size_t activation_bytes() const { return activation_bytes_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int batch_;
  std::size_t activation_bytes_ = 0;
};

}  // namespace taconite::cpu
