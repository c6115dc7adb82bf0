// IrEmbedder: the public face of the runtime. Owns the mapped bundle, its Plan and one
// Executor; converts every internal failure into an Error at this boundary.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
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
  // Copied at load: the bundle's bytes may be released once the backend is built.
  std::vector<numerics::bf16_t> recorded_input;
  std::map<std::string, std::vector<float>, std::less<>> f32_tensors;
  std::vector<std::string> diagnostics;
  std::vector<numerics::bf16_t> input_scratch;
  // TACONITE_TIMING=1 statistics
  bool timing = false;
  std::size_t forwards = 0;
  double forward_seconds = 0.0;
  double load_seconds = 0.0;

  // Ends the load: what the API still reads is copied, and the running engine stops depending on
  // tensors.bin (a private copy for backends that read it at every forward, else nothing).
  void detach_from_files() {
    const std::span<const numerics::bf16_t> recorded = plan.input_step().recorded;
    recorded_input.assign(recorded.begin(), recorded.end());
    const bundle::TensorStore& store = bundle.tensors();
    for (const auto& [name, info] : store.tensors())
      if (info.dtype == bundle::DType::F32) {
        const std::span<const float> values = store.f32(info);
        f32_tensors.emplace(name, std::vector<float>(values.begin(), values.end()));
      }
    if (backend.executor->reads_bundle_tensors()) bundle.tensors().copy_into_memory();
    else bundle.tensors().release();
  }

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
    const int threads = resolve_thread_count(options.threads);  // checked before any file is read
    auto impl = std::make_unique<Impl>();
    const char* timing = std::getenv("TACONITE_TIMING");
    impl->timing = timing != nullptr && std::string(timing) == "1";
    impl->bundle = bundle::Bundle::open(bundle_dir);
    impl->plan = plan::build_plan(impl->bundle);
    if (auto warning = plan::check_stem_zero_pattern(impl->plan)) impl->diagnostics.push_back(*warning);
    impl->backend = open_backend(impl->plan, options, threads);
    if (std::string note = impl->backend.executor->load_note(); !note.empty()) impl->diagnostics.push_back(note);
    impl->detach_from_files();
    impl->load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return IrEmbedder(std::move(impl));
  });
}

namespace {

// The engine a call runs on; a moved-from IrEmbedder has none, which is the caller's error.
IrEmbedder::Impl& live(const std::unique_ptr<IrEmbedder::Impl>& impl) {
  if (!impl) fail(ErrorKind::Input, "this IrEmbedder was moved from; load a bundle again");
  return *impl;
}

// Accessors cannot report an Error: a moved-from embedder or a failed allocation gives T{}.
template <typename T, typename Fn>
T value_or_empty(const std::unique_ptr<IrEmbedder::Impl>& impl, Fn&& fn) noexcept {
  if (!impl) return T{};
  try {
    return fn(*impl);
  } catch (...) {
    return T{};
  }
}

}  // namespace

Result<Embedding> IrEmbedder::embed(const FaceChw& face) {
  return guarded_call([&]() -> Embedding {
    Impl& engine = live(impl_);
    const std::vector<numerics::bf16_t> tiled = engine.tile(face);
    const std::span<const numerics::bf16_t> input(tiled);
    return std::move(engine.run({&input, 1}).front());
  });
}

Result<std::vector<Embedding>> IrEmbedder::embed_batch(std::span<const FaceChw> faces) {
  return guarded_call([&]() -> std::vector<Embedding> {
    Impl& engine = live(impl_);
    if (faces.empty()) return {};
    std::vector<std::vector<numerics::bf16_t>> tiled;
    tiled.reserve(faces.size());
    for (const FaceChw& face : faces) tiled.push_back(engine.tile(face));
    std::vector<std::span<const numerics::bf16_t>> inputs(tiled.begin(), tiled.end());
    return engine.run(inputs);
  });
}

Result<Embedding> IrEmbedder::embed_recorded() {
  return guarded_call([&]() -> Embedding {
    Impl& engine = live(impl_);
    const std::span<const numerics::bf16_t> input = engine.recorded_input;
    return std::move(engine.run({&input, 1}).front());
  });
}

InputDims IrEmbedder::input_dims() const {
  return value_or_empty<InputDims>(impl_, [](const Impl& i) { return InputDims{i.plan.input.c, i.plan.input.h, i.plan.input.w}; });
}
int IrEmbedder::embed_dim() const { return value_or_empty<int>(impl_, [](const Impl& i) { return i.plan.embed_dim; }); }
std::string IrEmbedder::model() const {
  return value_or_empty<std::string>(impl_, [](const Impl& i) { return i.plan.model; });
}
int IrEmbedder::num_conv_dispatches() const {
  return value_or_empty<int>(impl_, [](const Impl& i) { return i.plan.conv_dispatches; });
}
std::string IrEmbedder::backend() const {
  return value_or_empty<std::string>(impl_, [](const Impl& i) { return i.backend.executor->backend(); });
}
std::string IrEmbedder::precision() const {
  return value_or_empty<std::string>(impl_, [](const Impl& i) { return i.backend.executor->precision(); });
}
std::string IrEmbedder::backend_reason() const {
  return value_or_empty<std::string>(impl_, [](const Impl& i) { return i.backend.reason; });
}
const std::vector<std::string>& IrEmbedder::diagnostics() const {
  static const std::vector<std::string> none;
  return impl_ ? impl_->diagnostics : none;
}

std::string IrEmbedder::param(std::string_view name) const {
  return value_or_empty<std::string>(impl_, [&](const Impl& i) {
    const auto& params = i.bundle.manifest().params;
    auto it = params.find(name);
    return it == params.end() ? std::string() : it->second.value;
  });
}

std::vector<float> IrEmbedder::reference_f32(std::string_view name) const {
  return value_or_empty<std::vector<float>>(impl_, [&](const Impl& i) -> std::vector<float> {
    auto it = i.f32_tensors.find(name);
    return it == i.f32_tensors.end() ? std::vector<float>() : it->second;
  });
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
