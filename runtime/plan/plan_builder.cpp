// build_plan(): walks the manifest's step records in order, tracking which buffers exist with
// which shapes, and turns each record into a typed step after every check of spec §4 (plus this
// project's extra checks). Every failure names manifest.txt:<line> and quotes the line.
#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <unordered_map>

#include "bundle/text_lines.hpp"
#include "common/failure.hpp"
#include "plan/plan.hpp"

namespace taconite::plan {

std::string to_string(const Dims& dims) {
  return "(c=" + std::to_string(dims.c) + ", h=" + std::to_string(dims.h) + ", w=" + std::to_string(dims.w) + ")";
}

const InputStep& Plan::input_step() const {
  for (const Step& step : steps)
    if (const auto* input = std::get_if<InputStep>(&step)) return *input;
  fail(ErrorKind::Bundle, "plan has no input step");  // unreachable after build_plan
}

namespace {

using bundle::ManifestRecord;
using bundle::TensorInfo;

constexpr std::int64_t kMaxDim = 1 << 20;
constexpr std::int64_t kMaxId = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMinId = std::numeric_limits<std::int64_t>::min() + 1;

struct BufferState {
  Slot slot;
  Dims dims;
  int defined_at;
};

// A conv whose first record has been seen and whose last has not.
struct OpenConv {
  int first_line;
  std::string first_text;  // quoted if the conv is never closed
  std::int64_t in, out;
  int oc, oh, ow, owp;
  std::vector<bool> groups_used;  // by input channel group (8 channels)
  std::size_t slice_elements = 0; // the records' input slices so far, together
};

class PlanBuilder {
 public:
  explicit PlanBuilder(const bundle::Bundle& bundle) : bundle_(bundle) {}

  Plan build() {
    const bundle::Manifest& manifest = bundle_.manifest();
    if (auto it = manifest.params.find("model"); it != manifest.params.end()) plan_.model = it->second.value;
    // Callers read the channel order through IrEmbedder::param(); a value they cannot act on is an error here.
    if (auto it = manifest.params.find("input_channel_order");
        it != manifest.params.end() && it->second.value != "RGB" && it->second.value != "BGR")
      fail_param("input_channel_order", it->second, "RGB or BGR");
    if (auto it = manifest.params.find("npu_kernels"); it != manifest.params.end()) {
      if (it->second.value != "none") fail_param("npu_kernels", it->second, "none (the only value defined)");
      plan_.npu_kernels = false;
    }
    for (const ManifestRecord& record : manifest.steps) add_step(record);
    finish();
    return std::move(plan_);
  }

 private:
  [[noreturn]] static void fail_param(const std::string& name, const bundle::ParamRecord& param,
                                      const std::string& allowed) {
    fail(ErrorKind::Bundle, bundle::located_message(bundle::kManifestFile, param.line, param.text,
                                                    "param " + name + " must be " + allowed));
  }

  void add_step(const ManifestRecord& r) {
    if (head_line_ != 0)
      r.fail_here("step after the head (line " + std::to_string(head_line_) + "); the head must be the last step");
    if (open_conv_ && r.tag != "conv")
      r.fail_here("conv started at line " + std::to_string(open_conv_->first_line) + " has no last=1 record before this step");
    if (r.tag == "input") add_input(r);
    else if (r.tag == "conv") add_conv(r);
    else if (r.tag == "affine") add_affine(r);
    else if (r.tag == "prelu_bias") add_prelu_bias(r);
    else if (r.tag == "bias") add_bias(r);
    else if (r.tag == "subsample") add_subsample(r);
    else if (r.tag == "add") add_add(r);
    else if (r.tag == "head") add_head(r);
    else r.fail_here("unknown step " + r.tag);
  }

  // ---- fields ----
  static std::int64_t id(const ManifestRecord& r, std::string_view key) { return r.require_int(key, kMinId, kMaxId); }
  static int dim(const ManifestRecord& r, std::string_view key, int min = 1) {
    return static_cast<int>(r.require_int(key, min, kMaxDim));
  }
  static Dims dims(const ManifestRecord& r) { return {dim(r, "c"), dim(r, "h"), dim(r, "w")}; }

  const TensorInfo& tensor(const ManifestRecord& r, std::string_view key, bundle::DType dtype, std::uint64_t count) {
    const std::string name = r.require(key);
    const TensorInfo* info = bundle_.tensors().find(name);
    if (info == nullptr) r.fail_here("tensor '" + name + "' (" + std::string(key) + ") is not in tensors.txt");
    if (info->dtype != dtype)
      r.fail_here("tensor '" + name + "' (" + std::string(key) + ") is " + bundle::to_string(info->dtype) + " at " +
                  info->location() + ", expected " + bundle::to_string(dtype));
    if (count != 0 && info->count != count)
      r.fail_here("tensor '" + name + "' (" + std::string(key) + ") has " + std::to_string(info->count) +
                  " elements at " + info->location() + ", expected " + std::to_string(count));
    return *info;
  }
  std::span<const bf16_t> bf16(const ManifestRecord& r, std::string_view key, std::uint64_t count) {
    return bundle_.tensors().bf16(tensor(r, key, bundle::DType::BF16, count));
  }

  // ---- buffers ----
  const BufferState& read(const ManifestRecord& r, std::string_view key, const Dims& expected) {
    const std::int64_t buffer = id(r, key);
    auto it = buffers_.find(buffer);
    if (it == buffers_.end())
      r.fail_here("buffer " + std::to_string(buffer) + " (" + std::string(key) + ") is read before any step defines it");
    if (it->second.dims != expected)
      r.fail_here("buffer " + std::to_string(buffer) + " (" + std::string(key) + ") is " + to_string(it->second.dims) +
                  " (defined at line " + std::to_string(it->second.defined_at) + "), this step expects " +
                  to_string(expected));
    return it->second;
  }

  Slot define(const ManifestRecord& r, std::int64_t buffer, const Dims& shape) {
    auto it = buffers_.find(buffer);
    Slot slot;
    if (it == buffers_.end()) {
      slot = static_cast<Slot>(plan_.slot_elements.size());
      plan_.slot_elements.push_back(0);
      buffers_.emplace(buffer, BufferState{slot, shape, r.line});
    } else {
      slot = it->second.slot;
      it->second = BufferState{slot, shape, r.line};
    }
    std::size_t& held = plan_.slot_elements[static_cast<std::size_t>(slot)];
    if (shape.elements() > held) {
      charge(r, (shape.elements() - held) * sizeof(bf16_t));
      held = shape.elements();
    }
    return slot;
  }

  void charge(const ManifestRecord& r, std::size_t bytes) {
    if (bytes > kMaxActivationBytes - plan_.activation_bytes)
      r.fail_here("activation memory would exceed " + std::to_string(kMaxActivationBytes >> 30) + " GiB");
    plan_.activation_bytes += bytes;
  }

  void grow_scratch(const ManifestRecord& r, std::size_t& current, std::size_t elements, std::size_t element_bytes) {
    if (elements > current) {
      charge(r, (elements - current) * element_bytes);
      current = elements;
    }
  }

  // ---- steps ----
  void add_input(const ManifestRecord& r) {
    if (input_line_ != 0) r.fail_here("second input step (the first is at line " + std::to_string(input_line_) + ")");
    const Dims d = dims(r);
    if (d.c % 8 != 0) r.fail_here("input c=" + std::to_string(d.c) + " is not a multiple of 8");
    InputStep step{0, d, bf16(r, "tensor", d.elements())};
    step.buf = define(r, id(r, "buf"), d);
    input_line_ = r.line;
    plan_.input = d;
    plan_.steps.emplace_back(step);
  }

  void add_conv(const ManifestRecord& r) {
    ConvStep s{};
    s.line = r.line;
    s.ict = dim(r, "ict");
    s.h = dim(r, "h");
    s.w = dim(r, "w");
    const std::int64_t in = id(r, "in"), out = id(r, "out");
    s.in = read(r, "in", {s.ict, s.h, s.w}).slot;
    s.c0 = dim(r, "c0", 0);
    s.icg = dim(r, "icg");
    s.wp = dim(r, "wp");
    s.oc = dim(r, "oc");
    s.oh = dim(r, "oh");
    s.ow = dim(r, "ow");
    s.owp = dim(r, "owp");
    s.first = r.require_flag("first");
    s.last = r.require_flag("last");
    if (s.icg % 8 != 0) r.fail_here("icg=" + std::to_string(s.icg) + " is not a multiple of 8");
    if (8 * static_cast<std::int64_t>(s.c0) + s.icg > s.ict)
      r.fail_here("channel group 8*c0+icg=" + std::to_string(8 * static_cast<std::int64_t>(s.c0) + s.icg) +
                  " exceeds ict=" + std::to_string(s.ict));
    if (s.oc % 8 != 0) r.fail_here("oc=" + std::to_string(s.oc) + " is not a multiple of 8");
    if (s.wp < s.w) r.fail_here("wp=" + std::to_string(s.wp) + " is smaller than w=" + std::to_string(s.w));
    if (s.owp < s.ow) r.fail_here("owp=" + std::to_string(s.owp) + " is smaller than ow=" + std::to_string(s.ow));
    if (s.oh != s.h || s.ow != s.w)
      r.fail_here("conv output " + std::to_string(s.oh) + "x" + std::to_string(s.ow) + " differs from its input " +
                  std::to_string(s.h) + "x" + std::to_string(s.w) + " (NPU convs run at stride 1)");

    const std::uint64_t oc_icg = static_cast<std::uint64_t>(s.oc) * static_cast<std::uint64_t>(s.icg);
    const std::string wt_name = r.require("wt");
    const TensorInfo& wt = tensor(r, "wt", bundle::DType::BF16, 0);
    if (wt.count == oc_icg * 9) s.kernel = 3;
    else if (wt.count == oc_icg) s.kernel = 1;
    else
      r.fail_here("cannot infer the kernel size: wt '" + wt_name + "' has " + std::to_string(wt.count) +
                  " elements, expected oc*icg*9=" + std::to_string(oc_icg * 9) + " (3x3) or oc*icg=" +
                  std::to_string(oc_icg) + " (1x1)");
    s.weights = bundle_.tensors().bf16(wt);
    s.context = context_for(r);

    const std::size_t conv_slices = track_conv_group(r, s, in, out);
    grow_scratch(r, plan_.max_slice_elements, conv_slices, sizeof(bf16_t));
    // The two dispatch outputs (bf16) and the conv's f32 accumulator have the same element count.
    grow_scratch(r, plan_.max_dispatch_elements, static_cast<std::size_t>(s.oh) * s.oc * s.owp,
                 2 * sizeof(bf16_t) + sizeof(float));
    if (s.last) s.out = define(r, out, {s.oc, s.oh, s.ow});
    else s.out = -1;
    ++plan_.conv_dispatches;
    plan_.steps.emplace_back(s);
  }

  // Checks the record against its conv's first; returns the conv's slice elements so far.
  std::size_t track_conv_group(const ManifestRecord& r, const ConvStep& s, std::int64_t in, std::int64_t out) {
    if (s.first) {
      if (open_conv_) r.fail_here("first=1 while the conv started at line " + std::to_string(open_conv_->first_line) + " is not finished");
      open_conv_ = OpenConv{r.line, r.text, in, out, s.oc, s.oh, s.ow, s.owp, std::vector<bool>(static_cast<std::size_t>(s.ict / 8))};
    } else if (!open_conv_) {
      r.fail_here("first=0 but no conv is open (its first=1 record is missing)");
    } else {
      const OpenConv& c = *open_conv_;
      auto mismatch = [&](const char* field) {
        r.fail_here(std::string("conv record disagrees on '") + field + "' with its first record at line " +
                    std::to_string(c.first_line));
      };
      if (in != c.in) mismatch("in");
      if (out != c.out) mismatch("out");
      if (s.oc != c.oc) mismatch("oc");
      if (s.oh != c.oh) mismatch("oh");
      if (s.ow != c.ow) mismatch("ow");
      if (s.owp != c.owp) mismatch("owp");
    }
    std::vector<bool>& used = open_conv_->groups_used;
    const std::size_t first_group = static_cast<std::size_t>(s.c0), groups = static_cast<std::size_t>(s.icg / 8);
    for (std::size_t g = first_group; g < first_group + groups; ++g) {
      if (g >= used.size() || used[g])
        r.fail_here("input channel group " + std::to_string(g) + " is already covered by an earlier record of the conv started at line " +
                    std::to_string(open_conv_->first_line));
      used[g] = true;
    }
    const std::size_t slices = open_conv_->slice_elements += static_cast<std::size_t>(s.h) * s.icg * s.wp;
    if (s.last) open_conv_.reset();
    return slices;
  }

  int context_for(const ManifestRecord& r) {
    const std::string key = r.require("ctx");
    const auto& xclbins = bundle_.manifest().xclbins;
    auto xclbin = xclbins.find(key);
    if (xclbin == xclbins.end()) r.fail_here("ctx '" + key + "' names no xclbin record");
    const std::filesystem::path insts = bundle_.resolve_inside(r.require("insts"), r.line, r.text, true);
    if (auto known = context_index_.find(key); known != context_index_.end()) {
      KernelContext& ctx = plan_.contexts[static_cast<std::size_t>(known->second)];
      if (ctx.insts != insts)
        r.fail_here("ctx '" + key + "' uses a second instruction stream; line " + std::to_string(ctx.first_conv_line) +
                    " uses '" + ctx.insts.filename().string() + "' (one stream per ctx)");
      return known->second;
    }
    const bundle::XclbinRecord& x = xclbin->second;
    KernelContext ctx{key, bundle_.resolve_inside(x.file, x.line, x.text, false), x.kernel_name, insts, x.line, r.line};
    const int index = static_cast<int>(plan_.contexts.size());
    plan_.contexts.push_back(std::move(ctx));
    context_index_.emplace(key, index);
    return index;
  }

  void add_affine(const ManifestRecord& r) {
    const Dims d = dims(r);
    AffineStep s{read(r, "in", d).slot, 0, d, bf16(r, "scale", d.c), bf16(r, "shift", d.c)};
    s.out = define(r, id(r, "out"), d);
    plan_.steps.emplace_back(s);
  }

  void add_prelu_bias(const ManifestRecord& r) {
    const Dims d = dims(r);
    plan_.steps.emplace_back(PreluBiasStep{read(r, "buf", d).slot, d, bf16(r, "alpha", d.c), bf16(r, "bias", d.c)});
  }

  void add_bias(const ManifestRecord& r) {
    const Dims d = dims(r);
    plan_.steps.emplace_back(BiasStep{read(r, "buf", d).slot, d, bf16(r, "bias", d.c)});
  }

  void add_subsample(const ManifestRecord& r) {
    const Dims d = dims(r);
    SubsampleStep s{read(r, "in", d).slot, 0, d, dim(r, "stride")};
    if (s.stride > d.h || s.stride > d.w)
      r.fail_here("stride " + std::to_string(s.stride) + " leaves an empty buffer from " + to_string(d));
    s.out = define(r, id(r, "out"), s.out_dims());
    plan_.steps.emplace_back(s);
  }

  void add_add(const ManifestRecord& r) {
    const Dims d = dims(r);
    AddStep s{read(r, "a", d).slot, read(r, "b", d).slot, 0, d};
    s.out = define(r, id(r, "out"), d);
    plan_.steps.emplace_back(s);
  }

  void add_head(const ManifestRecord& r) {
    const Dims d = dims(r);
    HeadStep s{read(r, "in", d).slot, d, 0, 0, {}, {}};
    const std::int64_t k = r.require_int("k", 1, kMaxId);
    if (static_cast<std::uint64_t>(k) != d.elements())
      r.fail_here("k=" + std::to_string(k) + " differs from c*h*w=" + std::to_string(d.elements()));
    s.k = static_cast<std::size_t>(k);
    s.n = static_cast<std::size_t>(r.require_int("n", 1, kMaxDim));
    s.weights_t = bf16(r, "bT", static_cast<std::uint64_t>(s.k) * s.n);
    s.bias = bundle_.tensors().f32(tensor(r, "b2", bundle::DType::F32, s.n));
    plan_.embed_dim = static_cast<int>(s.n);
    head_line_ = r.line;
    plan_.steps.emplace_back(s);
  }

  void finish() {
    const std::string manifest(bundle::kManifestFile);
    if (open_conv_)
      fail(ErrorKind::Bundle, bundle::located_message(manifest, open_conv_->first_line, open_conv_->first_text,
                                                      "conv has no last=1 record"));
    if (input_line_ == 0) fail(ErrorKind::Bundle, manifest + ": no input step");
    if (head_line_ == 0) fail(ErrorKind::Bundle, manifest + ": no head step (the head must be the last step)");
  }

  const bundle::Bundle& bundle_;
  Plan plan_;
  std::unordered_map<std::int64_t, BufferState> buffers_;
  std::map<std::string, int, std::less<>> context_index_;
  std::optional<OpenConv> open_conv_;
  int input_line_ = 0;
  int head_line_ = 0;
};

}  // namespace

Plan build_plan(const bundle::Bundle& bundle) { return PlanBuilder(bundle).build(); }

}  // namespace taconite::plan
