// Model and Session: the public face of the runtime. Every internal failure becomes an Error at
// this boundary (guarded_call); accessors that cannot report one return empty values.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "common/failure.hpp"
#include "common/guarded_call.hpp"
#include "common/settings.hpp"
#include "model_impl.hpp"
#include "numerics/host_glue.hpp"
#include "plan/packing_check.hpp"

namespace taconite {

namespace {

// The colour channels a face carries (RGB); the input step may pad them (spec §8).
constexpr int kFaceChannels = 3;

double seconds(std::uint64_t nanoseconds) { return static_cast<double>(nanoseconds) * 1e-9; }

// Ends the load: what the API still reads is copied, and the running backend stops depending on
// tensors.bin (a private copy for backends that read it at every forward, else nothing).
void detach_from_files(Model::Impl& model) {
  const std::span<const numerics::bf16_t> recorded = model.plan.input_step().recorded;
  model.recorded_input.assign(recorded.begin(), recorded.end());
  const bundle::TensorStore& store = model.bundle.tensors();
  for (const auto& [name, info] : store.tensors())
    if (info.dtype == bundle::DType::F32) {
      const std::span<const float> values = store.f32(info);
      model.f32_tensors.emplace(name, std::vector<float>(values.begin(), values.end()));
    }
  if (model.backend.prepared->reads_bundle_tensors()) model.bundle.tensors().copy_into_memory();
  else model.bundle.tensors().release();
}

// Checks a caller's face against the input step and tiles it (spec §8).
std::vector<numerics::bf16_t> tile(const plan::Plan& plan, const FaceChw& face) {
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

// Accessors cannot report an Error: a failed allocation gives T{}.
template <typename T, typename Fn>
T value_or_empty(Fn&& fn) noexcept {
  try {
    return fn();
  } catch (...) {
    return T{};
  }
}

}  // namespace

const char* to_string(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::Io: return "io";
    case ErrorKind::Bundle: return "bundle";
    case ErrorKind::Device: return "device";
    case ErrorKind::Input: return "input";
  }
  return "unknown";
}

// --- Model ---

Model::Impl::~Impl() {
  if (timing) {
    const std::uint64_t faces = forwards.load();
    const double total = seconds(forward_nanoseconds.load());
    std::fprintf(stderr, "taconite: backend=%s load=%.3fs faces=%llu forward_total=%.3fs forward_mean=%.2fms\n",
                 backend.name.empty() ? "none" : backend.name.c_str(), load_seconds,
                 static_cast<unsigned long long>(faces), total, faces ? 1e3 * total / static_cast<double>(faces) : 0.0);
  }
}

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

Result<std::shared_ptr<const Model>> Model::load(const std::filesystem::path& path, const LoadOptions& options) {
  return guarded_call([&]() -> std::shared_ptr<const Model> {
    const auto start = std::chrono::steady_clock::now();
    const Settings settings = resolve_settings(options);  // checked before any file is read
    auto impl = std::make_unique<Impl>();
    if (onnx::is_onnx_path(path)) {
      impl->backend = choose_onnx_backend(path, settings);
      const std::filesystem::path description =
          options.model_proc.empty() ? onnx::default_description_path(path) : options.model_proc;
      impl->onnx = onnx::load_onnx_model(path, description, settings.threads);
      impl->diagnostics = impl->onnx->diagnostics();
      impl->timing = settings.timing;
      impl->load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return std::shared_ptr<const Model>(new Model(std::move(impl)));
    }
    if (!options.model_proc.empty())
      fail(ErrorKind::Input, "a model description (" + options.model_proc.string() + ") is for an ONNX model; " +
                                 path.string() + " is a bundle directory, which describes itself");
    impl->bundle = bundle::Bundle::open(path);
    impl->plan = plan::build_plan(impl->bundle);
    if (auto warning = plan::check_stem_zero_pattern(impl->plan)) impl->diagnostics.push_back(*warning);
    impl->backend = open_backend(impl->plan, settings);
    if (!impl->backend.note.empty()) impl->diagnostics.push_back(impl->backend.note);
    detach_from_files(*impl);
    impl->timing = settings.timing;
    impl->load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return std::shared_ptr<const Model>(new Model(std::move(impl)));
  });
}

InputDims Model::input_dims() const {
  if (impl_->onnx) {
    const Preprocessing& p = impl_->onnx->description().preprocessing;
    return {kFaceChannels, p.height, p.width};
  }
  const plan::Dims& d = impl_->plan.input;
  return {std::min(kFaceChannels, d.c), d.h, d.w};
}
int Model::embed_dim() const { return impl_->onnx ? impl_->onnx->description().dim : impl_->plan.embed_dim; }
std::string Model::name() const {
  return value_or_empty<std::string>([&] { return impl_->onnx ? impl_->onnx->description().name : impl_->plan.model; });
}
Preprocessing Model::preprocessing() const {
  if (impl_->onnx) return impl_->onnx->description().preprocessing;
  // cvlface's normalisation, the bundle format's contract (bundle-format.md §8).
  Preprocessing p;
  p.width = impl_->plan.input.w;
  p.height = impl_->plan.input.h;
  const auto& params = impl_->bundle.manifest().params;  // input_channel_order is RGB or BGR (plan_builder)
  const auto order = params.find("input_channel_order");
  p.channel_order = order != params.end() && order->second.value == "BGR" ? PlaneOrder::Bgr : PlaneOrder::Rgb;
  p.mean = {0.5f, 0.5f, 0.5f};
  p.std_dev = {0.5f, 0.5f, 0.5f};
  return p;
}
std::optional<double> Model::recommended_threshold() const {
  return impl_->onnx ? impl_->onnx->description().threshold : std::nullopt;
}
Result<std::optional<double>> Model::read_recommended_threshold(const std::filesystem::path& path,
                                                                const std::filesystem::path& model_proc) {
  return guarded_call([&]() -> std::optional<double> {
    if (!onnx::is_onnx_path(path)) return std::nullopt;
    return onnx::read_embedder_description(model_proc.empty() ? onnx::default_description_path(path) : model_proc)
        .threshold;
  });
}
std::string Model::backend() const {
  return value_or_empty<std::string>([&] { return impl_->backend.name; });
}
std::string Model::backend_reason() const {
  return value_or_empty<std::string>([&] { return impl_->backend.reason; });
}
std::string Model::precision() const {
  return value_or_empty<std::string>(
      [&] { return impl_->onnx ? std::string(kPrecisionF32) : impl_->backend.prepared->precision(); });
}
const std::vector<std::string>& Model::diagnostics() const { return impl_->diagnostics; }

// --- Session ---

Session::Impl::~Impl() {
  if (model && forwards > 0) {
    const Model::Impl& shared = detail::Access::of(*model);
    shared.forwards += forwards;
    shared.forward_nanoseconds += forward_nanoseconds;
  }
}

std::vector<std::vector<float>> Session::Impl::run(std::span<const std::span<const numerics::bf16_t>> inputs) {
  if (!executor) fail(ErrorKind::Input, "this session's model is an ONNX file, not a bundle: it has no tiled input");
  const auto start = std::chrono::steady_clock::now();
  auto outputs = inputs.size() == 1 ? std::vector<std::vector<float>>{executor->forward(inputs[0])}
                                    : executor->forward_batch(inputs);
  forward_nanoseconds += static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  forwards += inputs.size();
  return outputs;
}

std::vector<Embedding> Session::Impl::run_onnx(std::span<const FaceChw> faces) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<Embedding> outputs = onnx->embed(faces);
  forward_nanoseconds += static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  forwards += faces.size();
  return outputs;
}

Session::Impl& detail::Access::of(Session& session) {
  if (!session.impl_) fail(ErrorKind::Input, "this Session was moved from; create a new one from the model");
  return *session.impl_;
}

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

Result<Session> Session::create(std::shared_ptr<const Model> model) {
  return guarded_call([&]() -> Session {
    if (!model) fail(ErrorKind::Input, "Session::create needs a loaded model, got none");
    auto impl = std::make_unique<Impl>();
    const Model::Impl& shared = detail::Access::of(*model);
    if (shared.onnx) impl->onnx = shared.onnx->new_session();
    else impl->executor = shared.backend.prepared->new_executor();
    impl->model = std::move(model);
    return Session(std::move(impl));
  });
}

Result<Embedding> Session::embed(const FaceChw& face) {
  return guarded_call([&]() -> Embedding {
    Impl& session = detail::Access::of(*this);
    if (session.onnx) return std::move(session.run_onnx({&face, 1}).front());
    const std::vector<numerics::bf16_t> tiled = tile(detail::Access::of(*session.model).plan, face);
    const std::span<const numerics::bf16_t> input(tiled);
    return std::move(session.run({&input, 1}).front());
  });
}

Result<std::vector<Embedding>> Session::embed_batch(std::span<const FaceChw> faces) {
  return guarded_call([&]() -> std::vector<Embedding> {
    Impl& session = detail::Access::of(*this);
    if (faces.empty()) return {};
    if (session.onnx) return session.run_onnx(faces);
    const plan::Plan& plan = detail::Access::of(*session.model).plan;
    std::vector<std::vector<numerics::bf16_t>> tiled;
    tiled.reserve(faces.size());
    for (const FaceChw& face : faces) tiled.push_back(tile(plan, face));
    std::vector<std::span<const numerics::bf16_t>> inputs(tiled.begin(), tiled.end());
    return session.run(inputs);
  });
}

const std::shared_ptr<const Model>& Session::model() const noexcept {
  static const std::shared_ptr<const Model> none;
  return impl_ ? impl_->model : none;
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
