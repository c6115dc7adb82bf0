// taconite-postop-probe: which oneDNN implementation each fusion the cpu backend could use gets on
// this machine (impl_info_str; "ref:any" / "ref_int8:any" = the reference, ~100x slower). One line
// per case; run under ONEDNN_MAX_CPU_ISA=... for other machine kinds. See docs/backends.md.
//   taconite-postop-probe
#include <cstdio>
#include <string>

#include <oneapi/dnnl/dnnl.hpp>

namespace {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

const char* name(dt t) { return t == dt::f32 ? "f32" : t == dt::bf16 ? "bf16" : "u8"; }

// A 3x3 (or 1x1) conv 64 -> 64 at 56x56, batch 1, with `ops` as its post-ops.
std::string conv_impl(dnnl::engine& engine, dt type, tag layout, int kernel, const dnnl::post_ops& ops) {
  const dt weights = type == dt::u8 ? dt::s8 : type, out = type == dt::u8 ? dt::f32 : type;
  const dnnl::memory::desc src({1, 64, 56, 56}, type, layout), wei({64, 64, kernel, kernel}, weights, tag::any),
      dst({1, 64, 56, 56}, out, layout), bias({64}, dt::f32, tag::a);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  const dnnl::memory::dim pad = kernel / 2;
  try {
    const dnnl::convolution_forward::primitive_desc pd(
        {dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, wei, bias, dst, {1, 1}, {pad, pad},
         {pad, pad}},
        attr, engine);
    return pd.impl_info_str();
  } catch (const dnnl::error& e) {
    return std::string("none (") + e.what() + ")";
  }
}

}  // namespace

int main() {
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::post_ops none, prelu_channel, prelu_scalar, sum_prelu, full_add;
  prelu_channel.append_prelu(1 << 1);
  prelu_scalar.append_prelu(0);
  sum_prelu.append_sum(1.0f);
  sum_prelu.append_prelu(1 << 1);
  full_add.append_binary(dnnl::algorithm::binary_add, dnnl::memory::desc({1, 64, 56, 56}, dt::f32, tag::any));
  const struct {
    const char* what;
    const dnnl::post_ops& ops;
  } cases[] = {{"no post-op", none},
               {"prelu per channel", prelu_channel},
               {"prelu scalar", prelu_scalar},
               {"sum + prelu", sum_prelu},
               {"binary_add full tensor", full_add}};
  for (dt type : {dt::f32, dt::bf16, dt::u8})
    for (tag layout : {tag::any, tag::nhwc, tag::nChw16c})
      for (int kernel : {3, 1})
        for (const auto& c : cases)
          std::printf("conv%dx%d %s %s, %s: %s\n", kernel, kernel, name(type),
                      layout == tag::any ? "any" : layout == tag::nhwc ? "nhwc" : "nChw16c", c.what,
                      conv_impl(engine, type, layout, kernel, c.ops).c_str());
  // The head (inner product) with a PReLU post-op.
  dnnl::primitive_attr attr;
  attr.set_post_ops(prelu_channel);
  const dnnl::inner_product_forward::primitive_desc ip(
      {dnnl::prop_kind::forward_inference, dnnl::memory::desc({1, 512, 7, 7}, dt::f32, tag::any),
       dnnl::memory::desc({512, 512, 7, 7}, dt::f32, tag::any), dnnl::memory::desc({1, 512}, dt::f32, tag::nc)},
      attr, engine);
  std::printf("inner product f32, prelu per channel: %s\n", ip.impl_info_str());
  return 0;
}
