#include "cpu/border_fix.hpp"

#include <type_traits>

#include "numerics/bf16.hpp"

namespace taconite::cpu {

namespace {

using dim = dnnl::memory::dim;

// The offset contribution of each index along dimension `d` of a blocked layout: the outer index
// times the dimension's stride, plus its position inside the inner blocks (innermost block first,
// as oneDNN lays them out).
std::vector<dim> offsets_along(const dnnl_memory_desc_t& md, int d) {
  const dnnl_blocking_desc_t& b = md.format_desc.blocking;
  dim block = 1;
  for (int k = 0; k < b.inner_nblks; ++k)
    if (b.inner_idxs[k] == d) block *= b.inner_blks[k];
  std::vector<dim> out(static_cast<std::size_t>(md.dims[d]));
  for (dim i = 0; i < md.dims[d]; ++i) {
    dim offset = (i / block) * b.strides[d], pos = i % block, inner_stride = 1;
    for (int k = b.inner_nblks - 1; k >= 0; --k) {
      if (b.inner_idxs[k] == d) {
        offset += (pos % b.inner_blks[k]) * inner_stride;
        pos /= b.inner_blks[k];
      }
      inner_stride *= b.inner_blks[k];
    }
    out[static_cast<std::size_t>(i)] = offset;
  }
  return out;
}

template <typename T>
void add_run(T* values, const float* add, int count) {
  for (int c = 0; c < count; ++c) {
    if constexpr (std::is_same_v<T, float>) {
      values[c] += add[c];
    } else {
      values[c] = numerics::f32_to_bf16(numerics::bf16_to_f32(values[c]) + add[c]);
    }
  }
}

}  // namespace

BorderFix::BorderFix(const BorderCorrection& border, const dnnl::memory::desc& dst)
    : border_(border), bf16_(dst.data_type() == dnnl::memory::data_type::bf16) {
  const dnnl_memory_desc_t& md = dst.data;
  bool supported = md.format_kind == dnnl_blocked && md.ndims == 4 && md.dims[1] == border.oc &&
                   (bf16_ || dst.data_type() == dnnl::memory::data_type::f32);
  for (const BorderCorrection::Pixel& p : border.pixels)
    supported = supported && p.y >= 0 && p.y < md.dims[2] && p.x >= 0 && p.x < md.dims[3];
  if (!supported) throw dnnl::error(dnnl_unimplemented, "border correction: conv output is not a blocked f32/bf16 NCHW layout");
  n_ = offsets_along(md, 0);
  h_ = offsets_along(md, 2);
  w_ = offsets_along(md, 3);
  for (dim& offset : n_) offset += md.offset0;
  const std::vector<dim> channel = offsets_along(md, 1);
  for (int c = 0; c < border.oc; ++c) {
    const dim offset = channel[static_cast<std::size_t>(c)];
    if (!runs_.empty() && runs_.back().offset + runs_.back().count == offset) {
      ++runs_.back().count;
    } else {
      runs_.push_back({c, 1, offset});
    }
  }
}

void BorderFix::apply(const dnnl::memory& dst) const {
  const auto add_all = [&](auto* data) {
    const std::size_t oc = static_cast<std::size_t>(border_.oc);
    for (const dim image : n_)
      for (const BorderCorrection::Pixel& p : border_.pixels) {
        const dim pixel = image + h_[static_cast<std::size_t>(p.y)] + w_[static_cast<std::size_t>(p.x)];
        const float* add = &border_.corrections[static_cast<std::size_t>(p.table) * oc];
        for (const ChannelRun& run : runs_) add_run(data + pixel + run.offset, add + run.first, run.count);
      }
  };
  if (bf16_) {
    add_all(static_cast<numerics::bf16_t*>(dst.get_data_handle()));
  } else {
    add_all(static_cast<float*>(dst.get_data_handle()));
  }
}

}  // namespace taconite::cpu
