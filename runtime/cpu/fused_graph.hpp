// The lowering of a validated Plan into a graph of fused ops for the oneDNN network (no oneDNN
// here: pure structure, so the matcher is testable on its own).
//
// Values are single-assignment activations (the manifest's buffers may be redefined; values
// never are). Fusions applied, each only when its preconditions hold exactly:
//   - the records of one conv (first..last) become one conv over all input channels;
//   - affine -> 3x3 conv (the affine's output read by that conv alone): the conv reads the affine's
//     input and carries the scale/shift (in_scale, in_shift), which the network folds into its
//     weights, bias and a border correction (cpu/affine_fold.hpp: exact, padding included);
//   - conv -> bias / prelu_bias: the bias becomes the conv's bias, PReLU an in-place pass after it;
//   - conv -> subsample(s), and subsample(s) -> 1x1 conv: one strided conv (exact when h, w % s == 0);
//   - add(conv output, other): a sum post-op, the conv writing into `other`'s buffer.
// Anything outside these patterns makes the lowering refuse the whole plan (the executor then
// runs the exact replay): the result is never a guess.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "numerics/bf16.hpp"
#include "plan/plan.hpp"

namespace taconite::cpu {

using numerics::bf16_t;

enum class OpKind { Input, Conv, Affine, Bias, Add, Subsample, Head };

struct FusedOp {
  OpKind kind = OpKind::Input;
  std::vector<int> inputs;  // value ids read (Add: two)
  int output = -1;          // value id defined (-1 for Head)
  int step = 0;             // 1-based position of the op's first step in manifest order
  int line = 0;             // Conv: manifest line of its first record

  // Conv
  std::vector<const plan::ConvStep*> records;  // the input-channel-group records, in file order
  int kernel = 0, stride = 1, oc = 0;
  std::span<const bf16_t> bias;   // Conv / Bias
  std::span<const bf16_t> alpha;  // Conv: PReLU after the bias (empty: none)
  int sum_input = -1;             // Conv: value added by a sum post-op; the output reuses its buffer
  // Conv: an affine applied to the input before its zero padding (empty: none), i.e. the conv
  // computes conv(pad0(x * in_scale + in_shift)) over input channels.
  std::span<const bf16_t> in_scale, in_shift;
  bool winograd = false;  // f32 networks: oneDNN's Winograd algorithm (make_winograd_variant)

  // Affine
  std::span<const bf16_t> scale, shift;
  // Head
  const plan::HeadStep* head = nullptr;
  bool bf16_input = false;  // f32 networks: the head reads its input rounded to bf16 (make_winograd_variant)

  bool removed = false;  // fused into another op
};

struct FusedGraph {
  std::vector<plan::Dims> values;  // dims of every value
  std::vector<FusedOp> ops;        // in execution order, removed ops already dropped
  int input_value = 0;
  std::span<const bf16_t> recorded_input;  // the input step's tensor (tiled): int8's calibration face

  // Number of ops of each kind, for summaries and tests.
  int count(OpKind kind) const;
};

struct Lowering {
  std::optional<FusedGraph> graph;
  std::string refusal;  // why the plan was not lowered (names manifest.txt:<line>); empty on success
};

Lowering lower_plan(const plan::Plan& plan);

// f32's Winograd variant: oneDNN's Winograd algorithm, fewer multiplications than direct
// convolution (oneDNN 2.6 has it for f32 on AVX-512 only), for every 3x3 stride-1 conv over >= 16
// input channels (the stem over the image's channels is faster direct). Where bf16 is slow it is the
// only way f32 gets near ONNX Runtime: f32's direct convs already run near the FMA peak
// (docs/performance.md). Its cost: weights 1.8-4x larger per conv (IR-101: 248 -> 401 MiB), and a
// layout that cannot be re-laid-out for another batch size, so its networks run batches face by face
// (faster than direct convs at batch 8 anyway). `precision = auto` races it beside f32 and bf16
// (cpu_executor.cpp); an explicit `f32` stays direct. Sets FusedOp::winograd on those convs (a conv
// whose neighbours' layouts leave oneDNN no Winograd implementation still runs direct), and
// FusedOp::bf16_input on the head: it reads its input rounded to bf16 against the bundle's bf16
// weights kept in bf16, half the weight traffic of the largest primitive left (IR-18 on the Xeon's
// ISA: 1.9 -> 1.0 ms per face; cosine to an f32 head ~1 - 1e-6).
void make_winograd_variant(FusedGraph& graph);

// One line per op kind, e.g. "conv 21 (strided 5, sum 8), affine 8, ...".
std::string describe(const FusedGraph& graph);

}  // namespace taconite::cpu
