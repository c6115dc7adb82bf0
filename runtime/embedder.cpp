// IrEmbedder: the public face of the runtime. Owns the mapped bundle, its Plan and one
// Executor; converts every internal failure into an Error at this boundary.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "backend_registry.hpp"
#include "bundle/bundle.hpp"
#include "common/failure.hpp"
#include "common/guarded_call.hpp"
#include "common/threading.hpp"
#include "numerics/host_glue.hpp"
#include "plan/packing_check.hpp"
#include "plan/plan.hpp"
#include "taconite/embedder.hpp"

namespace taconite {

const char* to_string(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::Io: return "io";
    case ErrorKind::Bundle: return "bundle";
    case ErrorKind::Device: return "device";
    case ErrorKind::Input: return "input";
  }
  return "unknown";
}

struct IrEmbedder::Impl {
  bundle::Bundle bundle;
  plan::Plan plan;
  OpenedBackend backend;
  std::vector<std::string> diagnostics;
  std::vector<numerics::bf16_t> input_scratch;
  // TACONITE_TIMING=1 statistics
  bool timing = false;
  std::size_t forwards = 0;
  double forward_seconds = 0.0;
  double load_seconds = 0.0;

  ~Impl() {
    if (timing)
      std::fprintf(stderr, "taconite: backend=%s load=%.3fs faces=%zu forward_total=%.3fs forward_mean=%.2fms\n",
                   backend.executor ? backend.executor->backend().c_str() : "none", load_seconds, forwards,
                   forward_seconds, forwards ? 1e3 * forward_seconds / static_cast<double>(forwards) : 0.0);
  }

  std::vector<std::vector<float>> run(std::span<const std::span<const numerics::bf16_t>> inputs) {
    const auto start = std::chrono::steady_clock::now();
    auto outputs = inputs.size() == 1 ? std::vector<std::vector<float>>{backend.executor->forward(inputs[0])}
                                      : backend.executor->forward_batch(inputs);
    forward_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    forwards += inputs.size();
    return outputs;
  }

  // Checks a caller's face against the input step and tiles it (spec §8).
  std::vector<numerics::bf16_t> tile(const FaceChw& face) const {
    const plan::Dims& d = plan.input;
    if (face.height != d.h || face.width != d.w)
      fail(ErrorKind::Input, "face is " + std::to_string(face.width) + "x" + std::to_string(face.height) +
                                 ", the bundle expects " + std::to_string(d.w) + "x" + std::to_string(d.h));
    if (face.channels < 1 || face.channels > d.c)
      fail(ErrorKind::Input, "face has " + std::to_string(face.channels) + " channels, the bundle takes 1.." +
                                 std::to_string(d.c) + " (RGB is 3)");
    const std::size_t expected = static_cast<std::size_t>(face.channels) * d.h * d.w;
    if (face.data.size() != expected)
      fail(ErrorKind::Input, "face data holds " + std::to_string(face.data.size()) + " floats, expected " +
                                 std::to_string(expected) + " (channels*height*width, CHW)");
    std::vector<numerics::bf16_t> tiled(d.elements());
    numerics::tile_input(face.data, face.channels, {d.c, d.h, d.w}, tiled);
    return tiled;
  }
};

IrEmbedder::IrEmbedder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
IrEmbedder::IrEmbedder(IrEmbedder&&) noexcept = default;
IrEmbedder& IrEmbedder::operator=(IrEmbedder&&) noexcept = default;
IrEmbedder::~IrEmbedder() = default;

Result<IrEmbedder> IrEmbedder::load(const std::filesystem::path& bundle_dir, const LoadOptions& options) {
  return guarded_call([&]() -> IrEmbedder {
    const auto start = std::chrono::steady_clock::now();
    auto impl = std::make_unique<Impl>();
    const char* timing = std::getenv("TACONITE_TIMING");
    impl->timing = timing != nullptr && std::string(timing) == "1";
    impl->bundle = bundle::Bundle::open(bundle_dir);
    impl->plan = plan::build_plan(impl->bundle);
    if (auto warning = plan::check_stem_zero_pattern(impl->plan)) impl->diagnostics.push_back(*warning);
    impl->backend = open_backend(impl->plan, options, resolve_thread_count(options.threads));
    impl->load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return IrEmbedder(std::move(impl));
  });
}

Result<Embedding> IrEmbedder::embed(const FaceChw& face) {
  return guarded_call([&]() -> Embedding {
    const std::vector<numerics::bf16_t> tiled = impl_->tile(face);
    const std::span<const numerics::bf16_t> input(tiled);
    return std::move(impl_->run({&input, 1}).front());
  });
}

Result<std::vector<Embedding>> IrEmbedder::embed_batch(std::span<const FaceChw> faces) {
  return guarded_call([&]() -> std::vector<Embedding> {
    if (faces.empty()) return {};
    std::vector<std::vector<numerics::bf16_t>> tiled;
    tiled.reserve(faces.size());
    for (const FaceChw& face : faces) tiled.push_back(impl_->tile(face));
    std::vector<std::span<const numerics::bf16_t>> inputs(tiled.begin(), tiled.end());
    return impl_->run(inputs);
  });
}

Result<Embedding> IrEmbedder::embed_recorded() {
  return guarded_call([&]() -> Embedding {
    const std::span<const numerics::bf16_t> input = impl_->plan.input_step().recorded;
    return std::move(impl_->run({&input, 1}).front());
  });
}

InputDims IrEmbedder::input_dims() const { return {impl_->plan.input.c, impl_->plan.input.h, impl_->plan.input.w}; }
int IrEmbedder::embed_dim() const { return impl_->plan.embed_dim; }
std::string IrEmbedder::model() const { return impl_->plan.model; }
int IrEmbedder::num_conv_dispatches() const { return impl_->plan.conv_dispatches; }
std::string IrEmbedder::backend() const { return impl_->backend.executor->backend(); }
std::string IrEmbedder::backend_reason() const { return impl_->backend.reason; }
const std::vector<std::string>& IrEmbedder::diagnostics() const { return impl_->diagnostics; }

std::string IrEmbedder::param(std::string_view name) const {
  const auto& params = impl_->bundle.manifest().params;
  auto it = params.find(name);
  return it == params.end() ? std::string() : it->second.value;
}

std::vector<float> IrEmbedder::reference_f32(std::string_view name) const {
  const bundle::TensorInfo* info = impl_->bundle.tensors().find(name);
  if (info == nullptr || info->dtype != bundle::DType::F32) return {};
  const std::span<const float> values = impl_->bundle.tensors().f32(*info);
  return {values.begin(), values.end()};
}

double cosine(std::span<const float> a, std::span<const float> b) noexcept {
  if (a.size() != b.size() || a.empty()) return 0.0;
  double dot = 0.0, na = 0.0, nb = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
  }
  if (na == 0.0 || nb == 0.0) return 0.0;
  return dot / (std::sqrt(na) * std::sqrt(nb));
}

}  // namespace taconite
