// Applies a BorderCorrection (cpu/affine_fold.hpp) in place to a conv's output, in the layout and
// data type (f32 or bf16) the conv chose, for every image of the batch. It touches only the border
// pixels (e.g. 444 of 12544 at 112x112), so it runs on the calling thread.
#pragma once

#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "cpu/affine_fold.hpp"

namespace taconite::cpu {

class BorderFix {
 public:
  // Throws dnnl::error (status unimplemented) when `dst` is not a blocked f32/bf16 NCHW layout.
  BorderFix(const BorderCorrection& border, const dnnl::memory::desc& dst);
  void apply(const dnnl::memory& dst) const;

 private:
  const BorderCorrection& border_;
  bool bf16_;
  // Element offset of index i along n, h, w: blocked layouts are sums of per-dimension terms.
  std::vector<dnnl::memory::dim> n_, h_, w_;
  // Channels in runs of consecutive offsets (all of them in channels-last, one block in nChw16c),
  // so the inner loop is a contiguous one.
  struct ChannelRun {
    int first = 0, count = 0;
    dnnl::memory::dim offset = 0;
  };
  std::vector<ChannelRun> runs_;
};

}  // namespace taconite::cpu
