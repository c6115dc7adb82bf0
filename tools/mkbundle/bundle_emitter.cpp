#include "bundle_emitter.hpp"

#include <cmath>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string_view>

#include "numerics/bf16.hpp"
#include "numerics/tiled_layout.hpp"
#include "numerics/weight_packing.hpp"
#include "placeholder_kernel.hpp"
#include "placeholder_xclbin.hpp"
#include "tensor_file.hpp"

namespace taconite::mkbundle {

int padded_width(int width) { return (width + 3) / 4 * 4; }

namespace {

namespace fs = std::filesystem;
using numerics::bf16_t;
using numerics::f32_to_bf16;

struct Dims {
  int c, h, w;
};

// One manifest line: `tag k=v k=v ...`.
class Record {
 public:
  explicit Record(std::string tag) : text_(std::move(tag)) {}
  Record& operator()(std::string_view key, long long value) { return (*this)(key, std::to_string(value)); }
  Record& operator()(std::string_view key, const std::string& value) {
    text_.append(" ").append(key).append("=").append(value);
    return *this;
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// Buffer ids are recycled once dead, so later steps redefine ids with new shapes (the format allows it).
class BufferIds {
 public:
  int take() {
    if (free_.empty()) return next_++;
    const int id = *free_.begin();
    free_.erase(free_.begin());
    return id;
  }
  void release(int id) { free_.insert(id); }

 private:
  std::set<int> free_;
  int next_ = 0;
};

class Emitter {
 public:
  Emitter(const fs::path& dir, const EmitOptions& options)
      : dir_(dir), options_(options), tensors_(dir, TensorFileWriter::Mode::Create) {}

  EmitSummary run(const IrNetwork& net, const Tensor4& image, const std::vector<float>& cpu_embedding) {
    int x = emit_input(net, image);
    x = emit_stem(net, x);
    Dims d{64, net.input_height, net.input_width};
    for (std::size_t u = 0; u < net.units.size(); ++u) x = emit_unit(net.units[u], "body." + std::to_string(u), x, d);
    emit_head(net, x, d);
    tensors_.add_f32("ref.input_chw", {3, static_cast<std::size_t>(image.h), static_cast<std::size_t>(image.w)},
                     {image.image(0), static_cast<std::size_t>(3) * image.plane()});
    tensors_.add_f32("ref.cpu_embedding", {cpu_embedding.size()}, cpu_embedding);
    tensors_.close();
    write_kernels();
    write_manifest(net);
    return {static_cast<int>(steps_.size()), conv_records_, convs_, static_cast<int>(contexts_.size()),
            tensors_.data_bytes()};
  }

 private:
  void step(const Record& r) { steps_.push_back(r.text()); }

  std::string add_vector(const std::string& name, const std::vector<float>& values) {
    std::vector<bf16_t> bits(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) bits[i] = f32_to_bf16(values[i]);
    tensors_.add_bf16(name, {values.size()}, bits);
    return name;
  }
  static std::vector<float> scales(const BatchNorm& bn) {
    std::vector<float> v(static_cast<std::size_t>(bn.channels));
    for (int c = 0; c < bn.channels; ++c) v[static_cast<std::size_t>(c)] = bn.scale(c);
    return v;
  }
  static std::vector<float> shifts(const BatchNorm& bn) {
    std::vector<float> v(static_cast<std::size_t>(bn.channels));
    for (int c = 0; c < bn.channels; ++c) v[static_cast<std::size_t>(c)] = bn.shift(c);
    return v;
  }

  // conv weights with the following BN's scale folded in, input channels padded to `in_channels`.
  static std::vector<float> fold(const Conv2d& conv, const BatchNorm& bn, int in_channels) {
    const std::size_t kk = static_cast<std::size_t>(conv.kernel) * conv.kernel;
    std::vector<float> w(static_cast<std::size_t>(conv.out_channels) * in_channels * kk, 0.0f);
    for (int o = 0; o < conv.out_channels; ++o) {
      const float s = bn.scale(o);
      for (int i = 0; i < conv.in_channels; ++i)
        for (std::size_t t = 0; t < kk; ++t)
          w[(static_cast<std::size_t>(o) * in_channels + i) * kk + t] =
              conv.weight[(static_cast<std::size_t>(o) * conv.in_channels + i) * kk + t] * s;
    }
    return w;
  }

  std::string context(const ConvDescriptor& d) {
    const std::string key = "conv" + std::to_string(d.kernel) + "x" + std::to_string(d.kernel) + "_i" +
                            std::to_string(d.icg) + "_o" + std::to_string(d.oc) + "_" + std::to_string(d.h) + "x" +
                            std::to_string(d.w) + "_p" + std::to_string(d.wp) + "_" + std::to_string(d.owp);
    if (contexts_.emplace(key, d).second) context_order_.push_back(key);
    return key;
  }

  // One network conv as one `conv` record per input-channel group (spec §5.1), at stride 1.
  void emit_conv(const std::string& name, int in, const Dims& d, const std::vector<float>& w, int oc, int kernel,
                 int out) {
    const int wp = padded_width(d.w);
    const std::vector<ChannelGroup> groups = group_input_channels({d.c, oc, kernel, wp, wp}, options_.grouping);
    const std::size_t kk = static_cast<std::size_t>(kernel) * kernel;
    ++convs_;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const ChannelGroup group = groups[g];
      const numerics::ConvWeightShape shape{static_cast<std::size_t>(oc), static_cast<std::size_t>(group.icg),
                                            static_cast<std::size_t>(kernel)};
      std::vector<bf16_t> oihw(shape.elements()), packed(shape.elements());
      for (std::size_t o = 0; o < shape.out_channels; ++o)
        for (std::size_t i = 0; i < shape.in_channels; ++i)
          for (std::size_t t = 0; t < kk; ++t)
            oihw[(o * shape.in_channels + i) * kk + t] =
                f32_to_bf16(w[(o * static_cast<std::size_t>(d.c) + 8 * static_cast<std::size_t>(group.c0) + i) * kk + t]);
      numerics::pack_conv_weights(shape, oihw, packed);
      const std::string wt =
          groups.size() == 1 ? name + ".weight" : name + ".weight.in" + std::to_string(8 * group.c0);
      tensors_.add_bf16(wt, {shape.out_channels / 8, shape.in_channels / 8, shape.kernel, shape.kernel, 8, 8}, packed);
      const std::string ctx = context({static_cast<std::uint32_t>(kernel), static_cast<std::uint32_t>(group.icg),
                                       static_cast<std::uint32_t>(oc), static_cast<std::uint32_t>(d.h),
                                       static_cast<std::uint32_t>(d.w), static_cast<std::uint32_t>(wp),
                                       static_cast<std::uint32_t>(wp)});
      step(Record("conv")("in", in)("ict", d.c)("h", d.h)("w", d.w)("c0", group.c0)("icg", group.icg)("wp", wp)(
          "oc", oc)("oh", d.h)("ow", d.w)("owp", wp)("ctx", ctx)("insts", "kernels/" + ctx + ".insts.bin")("wt", wt)(
          "out", out)("first", g == 0 ? 1 : 0)("last", g + 1 == groups.size() ? 1 : 0));
      ++conv_records_;
    }
  }

  int emit_input(const IrNetwork& net, const Tensor4& image) {
    const int c = net.stem_padded_channels, h = net.input_height, w = net.input_width;
    if (image.n != 1 || image.c != net.input_channels || image.h != h || image.w != w)
      throw std::logic_error("emit_bundle: the reference image must be one 3x112x112 face");
    std::vector<bf16_t> tiled(static_cast<std::size_t>(c) * h * w, 0);
    for (int ch = 0; ch < image.c; ++ch)
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          tiled[numerics::tiled_index(static_cast<std::size_t>(c), static_cast<std::size_t>(w), static_cast<std::size_t>(ch),
                                      static_cast<std::size_t>(y), static_cast<std::size_t>(x))] =
              f32_to_bf16(image.image(0)[(static_cast<std::size_t>(ch) * h + y) * w + x]);
    tensors_.add_bf16("ref.input", {static_cast<std::size_t>(h), static_cast<std::size_t>(c / 8),
                                    static_cast<std::size_t>(w), 8}, tiled);
    const int buf = ids_.take();
    step(Record("input")("buf", buf)("c", c)("h", h)("w", w)("tensor", "ref.input"));
    return buf;
  }

  int emit_stem(const IrNetwork& net, int input) {
    const Dims d{net.stem_padded_channels, net.input_height, net.input_width};
    const int out = ids_.take();
    emit_conv("input_layer.0", input, d, fold(net.stem_conv, net.stem_bn, d.c), 64, 3, out);
    step(Record("prelu_bias")("buf", out)("c", 64)("h", d.h)("w", d.w)(
        "alpha", add_vector("input_layer.2.weight", net.stem_prelu.alpha))(
        "bias", add_vector("input_layer.1.shift", shifts(net.stem_bn))));
    ids_.release(input);
    return out;
  }

  // BasicBlockIR: returns the buffer holding the unit's output; d becomes the output dims.
  int emit_unit(const IrUnit& u, const std::string& name, int x, Dims& d) {
    const int oc = u.out_channels, s = u.stride;
    const std::string res = name + ".res_layer", sc = name + ".shortcut_layer";
    // leading BN: its own buffer, the shortcut needs the un-normalised input
    const int normed = ids_.take();
    step(Record("affine")("in", x)("out", normed)("c", d.c)("h", d.h)("w", d.w)(
        "scale", add_vector(res + ".0.scale", scales(u.bn1)))("shift", add_vector(res + ".0.shift", shifts(u.bn1))));
    // conv1 + BN + PReLU
    const int mid = ids_.take();
    emit_conv(res + ".1", normed, d, fold(u.conv1, u.bn2, d.c), oc, 3, mid);
    ids_.release(normed);
    const Dims md{oc, d.h, d.w};
    step(Record("prelu_bias")("buf", mid)("c", oc)("h", d.h)("w", d.w)(
        "alpha", add_vector(res + ".3.weight", u.prelu.alpha))("bias", add_vector(res + ".2.shift", shifts(u.bn2))));
    // conv2 (stride 1) + BN, then the stride as a subsample (in place)
    const int branch = ids_.take();
    emit_conv(res + ".4", mid, md, fold(u.conv2, u.bn3, oc), oc, 3, branch);
    ids_.release(mid);
    step(Record("bias")("buf", branch)("c", oc)("h", d.h)("w", d.w)("bias", add_vector(res + ".5.shift", shifts(u.bn3))));
    const Dims od{oc, d.h / s, d.w / s};
    if (s != 1) step(Record("subsample")("in", branch)("out", branch)("c", oc)("h", d.h)("w", d.w)("stride", s));

    int shortcut = x;
    if (u.conv_shortcut) {
      // conv1x1 + BN; the subsample goes before the conv for 128/512-wide stages and after it
      // for the 256-wide one, so bundles exercise both (spec §9: both are exact).
      const bool subsample_first = s != 1 && oc != 256;
      int conv_in = x;
      Dims cd = d;
      if (subsample_first) {
        conv_in = ids_.take();
        step(Record("subsample")("in", x)("out", conv_in)("c", d.c)("h", d.h)("w", d.w)("stride", s));
        cd = {d.c, d.h / s, d.w / s};
      }
      shortcut = ids_.take();
      emit_conv(sc + ".0", conv_in, cd, fold(u.shortcut_conv, u.shortcut_bn, d.c), oc, 1, shortcut);
      if (conv_in != x) ids_.release(conv_in);
      step(Record("bias")("buf", shortcut)("c", oc)("h", cd.h)("w", cd.w)(
          "bias", add_vector(sc + ".1.shift", shifts(u.shortcut_bn))));
      if (s != 1 && !subsample_first)
        step(Record("subsample")("in", shortcut)("out", shortcut)("c", oc)("h", cd.h)("w", cd.w)("stride", s));
    } else if (s != 1) {
      shortcut = ids_.take();  // MaxPool2d(1, s)
      step(Record("subsample")("in", x)("out", shortcut)("c", d.c)("h", d.h)("w", d.w)("stride", s));
    }
    const int out = ids_.take();
    step(Record("add")("a", branch)("b", shortcut)("out", out)("c", oc)("h", od.h)("w", od.w));
    ids_.release(branch);
    if (shortcut != x) ids_.release(shortcut);
    ids_.release(x);
    d = od;
    return out;
  }

  // BN2d -> flatten -> Linear -> BN1d folded into one head (spec §9).
  void emit_head(const IrNetwork& net, int x, const Dims& d) {
    const std::size_t hw = static_cast<std::size_t>(d.h) * d.w, k = static_cast<std::size_t>(d.c) * hw;
    const std::size_t n = static_cast<std::size_t>(net.fc.out_features);
    if (k != static_cast<std::size_t>(net.fc.in_features)) throw std::logic_error("emit_bundle: head size mismatch");
    std::vector<bf16_t> bt(k * n);
    std::vector<float> b2(n);
    const std::vector<float> s2 = scales(net.output_bn), t2 = shifts(net.output_bn);
#pragma omp parallel for schedule(static)
    for (std::size_t j = 0; j < n; ++j) {
      const BatchNorm& bn1 = net.feature_bn;
      const double gamma = bn1.affine ? bn1.gamma[j] : 1.0, beta = bn1.affine ? bn1.beta[j] : 0.0;
      const double s1 = gamma / std::sqrt(static_cast<double>(bn1.var[j]) + bn1.eps);
      const float* wrow = net.fc.weight.data() + j * k;
      double acc = net.fc.bias[j];
      for (std::size_t i = 0; i < k; ++i) {
        const std::size_t ch = i / hw;
        acc += static_cast<double>(wrow[i]) * t2[ch];
        bt[i * n + j] = f32_to_bf16(static_cast<float>(s1 * wrow[i] * s2[ch]));
      }
      b2[j] = static_cast<float>(s1 * (acc - bn1.mean[j]) + beta);
    }
    tensors_.add_bf16("output_layer.head.bT", {k, n}, bt);
    tensors_.add_f32("output_layer.head.b2", {n}, b2);
    step(Record("head")("in", x)("c", d.c)("h", d.h)("w", d.w)("k", static_cast<long long>(k))(
        "n", static_cast<long long>(n))("bT", "output_layer.head.bT")("b2", "output_layer.head.b2"));
  }

  void write_kernels() {
    const fs::path kernels = dir_ / "kernels";
    fs::create_directories(kernels);
    for (const std::string& key : context_order_) {
      const auto words = encode_descriptor(contexts_.at(key));
      const fs::path insts = kernels / (key + ".insts.bin");
      std::ofstream out(insts, std::ios::binary | std::ios::trunc);
      for (std::uint32_t word : words) {
        const char bytes[4] = {static_cast<char>(word & 0xff), static_cast<char>((word >> 8) & 0xff),
                               static_cast<char>((word >> 16) & 0xff), static_cast<char>((word >> 24) & 0xff)};
        out.write(bytes, 4);
      }
      out.close();
      if (!out) throw std::runtime_error(insts.string() + ": cannot write");
      PlaceholderXclbin spec;
      spec.identity = key;
      write_placeholder_xclbin(kernels / (key + ".xclbin"), spec);
    }
  }

  void write_manifest(const IrNetwork& net) {
    const fs::path path = dir_ / "manifest.txt";
    std::ofstream out(path, std::ios::trunc);
    out << "# " << options_.comment << "\n";
    out << "version 1\n";
    out << "param model " << net.name << "\n";
    out << "param embedding_dim " << net.embedding_dim() << "\n";
    for (const auto& [name, value] : options_.params) out << "param " << name << " " << value << "\n";
    for (const std::string& key : context_order_) out << "xclbin " << key << " kernels/" << key << ".xclbin MLIR_AIE\n";
    for (const std::string& line : steps_) out << line << "\n";
    out.close();
    if (!out) throw std::runtime_error(path.string() + ": cannot write");
  }

  fs::path dir_;
  EmitOptions options_;
  TensorFileWriter tensors_;
  BufferIds ids_;
  std::vector<std::string> steps_;
  std::map<std::string, ConvDescriptor> contexts_;
  std::vector<std::string> context_order_;
  int conv_records_ = 0, convs_ = 0;
};

}  // namespace

EmitSummary emit_bundle(const IrNetwork& net, const Tensor4& image, const std::vector<float>& cpu_embedding,
                        const std::filesystem::path& dir, const EmitOptions& options) {
  return Emitter(dir, options).run(net, image, cpu_embedding);
}

}  // namespace taconite::mkbundle
