// The network's constants in oneDNN memory, prepared once and shared by every batch size's
// network: conv weights in the layout the conv primitive prefers (unpacked once from the bundle,
// with a folded input affine applied (cpu/affine_fold.hpp), re-laid-out from that copy if another
// batch size prefers another layout), per-channel vectors as f32 (a folded conv's bias and border
// correction), and the head's weights. Each constant is read from the bundle once, when the
// first (batch-1) network asks for it: later networks only use the copies, because the bundle's
// bytes are released after the load. Shared by every session of a model: each call is serialised
// by an internal lock (calls happen while a session builds a network, not while it runs one).
#pragma once

#include <map>
#include <mutex>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "cpu/affine_fold.hpp"
#include "cpu/fused_graph.hpp"

namespace taconite::cpu {

// Bundle: the real constants. Placeholder: the conv and head weights (and a folded affine's bias
// and border values) are zeros in the same layouts, not read from the bundle: a network with the
// real one's primitives and (nearly, see placeholder_weights) its speed, built in a fraction of
// the time, for timing the candidate numerics of `precision = auto` (cpu/numerics_choice.hpp).
enum class WeightContents { Bundle, Placeholder };

class WeightStore {
 public:
  WeightStore(const FusedGraph& graph, dnnl::engine engine, dnnl::memory::data_type weight_type, int threads,
              WeightContents contents);

  // What a conv primitive reads besides its input: weights in layout `want`; its f32 bias {oc}
  // (empty memory when the conv has none); the border correction of its folded input affine
  // (null when it has none or every tap of every output pixel is inside the input).
  struct ConvConstants {
    dnnl::memory weights, bias;
    const BorderCorrection* border = nullptr;
  };
  ConvConstants conv(int op, const dnnl::memory::desc& want);
  // int8 (weight type s8) only: conv op `op`'s weights (its input affine folded in) divided by
  // `input_multipliers` per input channel (cpu/int8_scales.hpp), and the scale per output channel
  // by which they are then multiplied and rounded to s8 (returned). Call before conv(op, ...): the
  // conv primitive's output scales need them. The first call's multipliers stay.
  std::vector<float> conv_weight_scales(int op, std::span<const float> input_multipliers);
  // The weights of conv / head op `op` in layout `want` (a conv's with its input affine folded in).
  dnnl::memory weights(int op, const dnnl::memory::desc& want);
  // Per-channel f32 vector (shape {n}) from bf16 values; cached by the span's address (not read again).
  dnnl::memory channel_vector(std::span<const bf16_t> values);
  // Per-channel f32 vector shaped {1, c, 1, 1} in layout `want` (binary / PReLU operands).
  dnnl::memory channel_tensor(std::span<const bf16_t> values, const dnnl::memory::desc& want);
  // The head's f32 bias {n}.
  dnnl::memory head_bias(int op);
  // A constant f32 vector of `n` copies of `value` (batch-norm mean / variance).
  dnnl::memory constant(std::size_t n, float value);

  std::size_t bytes() const;

 private:
  dnnl::memory first_weights(int op, const dnnl::memory::desc& want);
  dnnl::memory placeholder_weights(int op, const dnnl::memory::desc& want);
  void record_fold(int op, AffineFold terms);
  // The conv's plain OIHW weights in the compute type, ready for one reorder (in scratch_).
  void* plain_conv_weights(int op, const FusedOp& conv, int in_channels, std::size_t elements);
  // The type of the plain weights the bundle's are widened to: f32 for s8 (quantized by the reorder).
  dnnl::memory::data_type plain_type() const;
  dnnl::memory keep(dnnl::memory m);

  const FusedGraph& graph_;
  dnnl::engine engine_;
  dnnl::memory::data_type weight_type_;
  int threads_;
  WeightContents contents_;
  std::map<int, std::vector<dnnl::memory>> weights_;  // by op index, one per layout
  std::map<std::pair<const void*, int>, dnnl::memory> vectors_;
  std::map<const void*, std::vector<dnnl::memory>> tensors_;  // per-channel tensors, one per layout
  std::map<std::pair<std::size_t, float>, dnnl::memory> constants_;
  struct Fold {
    AffineFold terms;
    dnnl::memory bias;
  };
  std::vector<dnnl::memory> placeholders_;  // WeightContents::Placeholder: one per weights layout
  std::map<int, Fold> folds_;  // by op index: convs with an input affine (node-based: pointers stay valid)
  std::size_t bytes_ = 0;
  mutable std::mutex lock_;
  std::vector<float> scratch_;  // plain OIHW weights (f32 or bf16) of one conv while it is re-laid-out
  std::vector<bf16_t> narrowed_;  // a folded conv's weights rounded to bf16 (bf16 compute only)
  int last_conv_ = -1;                     // op index of the graph's last conv
  std::map<int, std::vector<float>> int8_scales_;  // by conv op index (s8 weights only)
  int scratch_op_ = -1;  // the conv whose plain f32 weights scratch_ holds (s8: scales, then weights)
};

}  // namespace taconite::cpu
