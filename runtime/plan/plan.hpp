// The validated, typed form of a bundle's steps (spec §4). Built once at load; after a
// successful build a forward cannot fail on bundle content. Knows no devices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "bundle/bundle.hpp"
#include "numerics/bf16.hpp"

namespace taconite::plan {

using numerics::bf16_t;

struct Dims {
  int c = 0, h = 0, w = 0;
  std::size_t elements() const { return static_cast<std::size_t>(c) * h * w; }
  friend bool operator==(const Dims&, const Dims&) = default;
};
std::string to_string(const Dims& dims);

// Buffers are referred to by dense slot numbers (the manifest's ids may be any integers).
using Slot = int;

struct InputStep {
  Slot buf;
  Dims dims;
  std::span<const bf16_t> recorded;  // the input step's tensor (tiled bf16)
};

// One NPU dispatch (one `conv` record).
struct ConvStep {
  Slot in;
  int ict, h, w;   // input buffer dims
  int c0, icg;     // this dispatch's channel groups: channels 8*c0 .. 8*c0+icg-1
  int wp;          // padded input width of the slice
  Slot out;
  int oc, oh, ow, owp;
  int kernel;      // 1 or 3 (inferred from wt's element count)
  int context;     // index into Plan::contexts
  std::span<const bf16_t> weights;  // packed as spec §5.3, exactly as stored
  bool first, last;
  int line;        // manifest line, for device error messages
};

struct AffineStep {
  Slot in, out;
  Dims dims;
  std::span<const bf16_t> scale, shift;
};

struct PreluBiasStep {
  Slot buf;
  Dims dims;
  std::span<const bf16_t> alpha, bias;
};

struct BiasStep {
  Slot buf;
  Dims dims;
  std::span<const bf16_t> bias;
};

struct SubsampleStep {
  Slot in, out;
  Dims dims;  // of the input
  int stride;
  Dims out_dims() const { return {dims.c, dims.h / stride, dims.w / stride}; }
};

struct AddStep {
  Slot a, b, out;
  Dims dims;
};

struct HeadStep {
  Slot in;
  Dims dims;
  std::size_t k, n;
  std::span<const bf16_t> weights_t;  // bT, row-major [k][n]
  std::span<const float> bias;        // b2, n values
};

using Step = std::variant<InputStep, ConvStep, AffineStep, PreluBiasStep, BiasStep, SubsampleStep, AddStep, HeadStep>;

// A hardware context (`xclbin` record) used by at least one conv.
struct KernelContext {
  std::string key;
  std::filesystem::path xclbin;   // resolved inside the bundle (may not exist for CPU backends)
  std::string kernel_name;
  std::filesystem::path insts;    // the one instruction stream its convs use
  int xclbin_line = 0;
  int first_conv_line = 0;
};

struct Plan {
  std::vector<Step> steps;             // in file order; the last is the HeadStep
  std::vector<KernelContext> contexts; // in order of first use
  std::vector<std::size_t> slot_elements;  // most elements each slot ever holds (for allocation)
  std::size_t max_slice_elements = 0;      // largest sum of one conv's input slices [h][icg/8][wp][8]
  std::size_t max_dispatch_elements = 0;   // largest conv dispatch output [oh][oc/8][owp][8] (= accumulator)
  Dims input;
  int embed_dim = 0;
  int conv_dispatches = 0;
  std::string model;                   // `param model`, or ""
  bool npu_kernels = true;             // false for `param npu_kernels none`: kernels/ are placeholders
  std::size_t activation_bytes = 0;    // slots + slice + dispatch output + f32 accumulator, bounded

  const InputStep& input_step() const;
  const HeadStep& head() const { return std::get<HeadStep>(steps.back()); }
};

// Bound on activation memory a manifest may ask for (spec §4: a hostile manifest must not make
// the loader allocate without limit).
inline constexpr std::size_t kMaxActivationBytes = std::size_t{4} << 30;

// Validates every step of the bundle; throws Failure(Bundle) naming manifest.txt:<line>.
Plan build_plan(const bundle::Bundle& bundle);

}  // namespace taconite::plan
