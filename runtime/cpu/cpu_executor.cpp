#include "cpu/cpu_executor.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <functional>
#include <new>
#include <utility>

#include <oneapi/dnnl/dnnl.hpp>

#include "common/failure.hpp"
#include "cpu/fused_graph.hpp"
#include "cpu/network_cache.hpp"
#include "cpu/omp_threads.hpp"
#include "cpu/onednn_network.hpp"
#include "cpu/weight_store.hpp"
#include "taconite/model.hpp"

namespace taconite::cpu {

namespace {

// Batches larger than this run as several passes: on the 2-core AVX2 machine batch 32 ran ~30 %
// fewer faces/s than batch 8 (its activations fall out of cache) for 4x the activation memory.
// Networks with Winograd convs run face by face (cpu/fused_graph.hpp: make_winograd_variant).
constexpr int kMaxBatch = 8;
// Networks kept for batch sizes other than 1 (each holds its own activation buffers): with the
// buckets 2, 4 and 8 every bucket stays built.
constexpr std::size_t kCachedBatchSizes = 3;

dnnl::memory::data_type dnnl_type(ComputeType type) {
  switch (type) {
    case ComputeType::Bf16: return dnnl::memory::data_type::bf16;
    case ComputeType::Int8: return dnnl::memory::data_type::s8;
    case ComputeType::F32: break;
  }
  return dnnl::memory::data_type::f32;
}

// Runs fn with oneDNN's OpenMP pool sized to `threads`; oneDNN errors become Device failures.
template <typename Fn>
void guarded_dnnl(ComputeType type, int threads, Fn&& fn) {
  ScopedOmpThreads scoped(threads);
  try {
    fn();
  } catch (const dnnl::error& e) {
    fail(ErrorKind::Device, std::string("oneDNN (") + std::string(to_string(type)) + " on isa " + cpu_isa_name() +
                                "): " + e.what() + " (status " + std::to_string(static_cast<int>(e.status)) + ")");
  }
}

// What every session of one backend reads: immutable, except the WeightStore's own locked cache.
struct FusedShared {
  FusedShared(FusedGraph g, ComputeType t, int n, WeightContents contents, std::vector<std::vector<float>> ranges)
      : graph(std::move(g)), type(t), threads(n),
        max_batch(t == ComputeType::F32 && std::ranges::any_of(graph.ops, [](const FusedOp& op) { return op.winograd; })
                      ? 1
                      : kMaxBatch),
        input_ranges(std::move(ranges)), engine(dnnl::engine::kind::cpu, 0),
        weights(graph, engine, dnnl_type(t), n, contents) {}
  FusedGraph graph;
  ComputeType type;
  int threads;
  int max_batch;
  std::vector<std::vector<float>> input_ranges;  // int8: every conv input's calibrated ranges, by value id
  dnnl::engine engine;  // thread-safe; each network has its own stream
  mutable WeightStore weights;
};

class FusedCpuSession final : public CpuSession {
 public:
  explicit FusedCpuSession(std::shared_ptr<const FusedShared> shared)
      : shared_(std::move(shared)), networks_(kCachedBatchSizes) {
    guarded_dnnl(shared_->type, shared_->threads, [&] { network(1); });
  }

  std::vector<int> cached_batch_sizes() const override { return networks_.sizes(); }
  const WeightStore& weights() const override { return shared_->weights; }
  OnednnNetwork& single() { return network(1); }  // built by the constructor
  const OnednnNetwork& single() const { return *networks_.single(); }

  std::vector<float> forward(std::span<const bf16_t> input) override {
    std::vector<float> out;
    guarded_dnnl(shared_->type, shared_->threads, [&] { out = std::move(network(1).run({&input, 1}).front()); });
    return out;
  }

  std::vector<std::vector<float>> forward_batch(std::span<const std::span<const bf16_t>> inputs) override {
    std::vector<std::vector<float>> outputs;
    outputs.reserve(inputs.size());
    guarded_dnnl(shared_->type, shared_->threads, [&] {
      const std::size_t most = static_cast<std::size_t>(shared_->max_batch);
      for (std::size_t at = 0; at < inputs.size(); at += most) {
        const std::size_t count = std::min(most, inputs.size() - at);
        OnednnNetwork& padded = network(batch_bucket(static_cast<int>(count), shared_->max_batch));
        for (auto& out : padded.run(inputs.subspan(at, count))) outputs.push_back(std::move(out));
      }
    });
    return outputs;
  }

 private:
  OnednnNetwork& network(int batch) {
    return networks_.get(batch, [&](int size) {
      return std::make_unique<OnednnNetwork>(shared_->graph, shared_->weights, shared_->engine,
                                             dnnl_type(shared_->type), size, shared_->input_ranges);
    });
  }

  std::shared_ptr<const FusedShared> shared_;
  NetworkCache<OnednnNetwork> networks_;
};

class FusedCpuBackend final : public CpuBackend {
 public:
  // Int8: `input_ranges` from calibrate_int8().
  FusedCpuBackend(FusedGraph graph, ComputeType type, int threads, WeightContents contents = WeightContents::Bundle,
                  std::vector<std::vector<float>> input_ranges = {})
      : shared_(std::make_shared<FusedShared>(std::move(graph), type, threads, contents, std::move(input_ranges))) {
    // A first session reads every constant from the bundle into the WeightStore (later sessions,
    // of any batch size, use those copies: the bundle's bytes are released after the load) and
    // tells which primitives run.
    const FusedCpuSession first(shared_);
    const std::string primitives = first.single().implementations();
    runs_winograd_ = primitives.find("wino") != std::string::npos;
    summary_ = " on oneDNN isa " + cpu_isa_name() + "; fused " + describe(shared_->graph) + "; primitives: " +
               primitives + "; weights " + std::to_string(shared_->weights.bytes() >> 20) +
               " MiB, batch-1 activations per session " + std::to_string(first.single().activation_bytes() >> 20) +
               " MiB";
  }

  void set_precision_reason(std::string reason) { reason_ = std::move(reason); }
  bool runs_winograd() const { return runs_winograd_; }

  std::string precision() const override { return std::string(to_string(shared_->type)); }
  std::string precision_reason() const override { return reason_; }
  bool reads_bundle_tensors() const override { return false; }
  ComputeType compute_type() const override { return shared_->type; }
  std::string summary() const override {
    return precision() + (reason_.empty() ? "" : " (" + reason_ + ")") + summary_;
  }
  const WeightStore& weights() const override { return shared_->weights; }
  std::unique_ptr<CpuSession> new_session() const override { return std::make_unique<FusedCpuSession>(shared_); }
  FusedCpuSession fused_session() const { return FusedCpuSession(shared_); }

 private:
  std::shared_ptr<const FusedShared> shared_;
  std::string summary_, reason_;
  bool runs_winograd_ = false;
};

// A deterministic input for the timing race: values in [-1, 1) like a preprocessed face (all zeros
// would let activations collapse; timings of oneDNN's convs do not depend on the values otherwise),
// times `amplitude`.
std::vector<bf16_t> noise_input(const FusedGraph& graph, float amplitude = 1.0f) {
  const plan::Dims& d = graph.values[static_cast<std::size_t>(graph.input_value)];
  std::vector<bf16_t> input(d.elements());
  std::uint32_t state = 12345;
  for (bf16_t& v : input) {
    state = state * 1664525u + 1013904223u;
    v = numerics::f32_to_bf16(amplitude * (static_cast<float>(state >> 8) / static_cast<float>(1u << 23) - 1.0f));
  }
  return input;
}

// One candidate of `auto`'s race with placeholder weights, or null with `why` where it cannot be
// built: bf16 without AVX512-BF16 (its first conv fails), Winograd without AVX-512 (every conv fell
// back to direct), or either failing otherwise (e.g. Winograd's larger weights not allocated).
// Direct f32 failing is the load's failure (it is thrown).
std::unique_ptr<FusedCpuBackend> placeholder_candidate(const FusedGraph& graph, const CandidateTimes& candidate,
                                                       int threads, std::string& why) {
  const bool direct_f32 = candidate.type == ComputeType::F32 && !candidate.winograd;
  try {
    auto backend = std::make_unique<FusedCpuBackend>(FusedGraph(graph), candidate.type, threads, WeightContents::Placeholder);
    if (!candidate.winograd || backend->runs_winograd()) return backend;
    why = "oneDNN builds no Winograd conv on isa " + cpu_isa_name();
  } catch (const Failure& failure) {
    if (direct_f32) throw;
    why = failure.error().message;
  } catch (const std::bad_alloc&) {
    if (direct_f32) throw;
    why = "out of memory";
  }
  return nullptr;
}

// `auto`: f32, bf16 and f32's Winograd variant (each where oneDNN builds it) raced on their
// batch-1 networks with placeholder weights (same primitives and speed, no bundle reads), then
// the winner built for real. The placeholder networks' primitives stay in oneDNN's primitive
// cache, so the real build reuses them.
std::unique_ptr<CpuBackend> make_fastest_backend(FusedGraph graph, int threads) {
  FusedGraph winograd_graph(graph);
  make_winograd_variant(winograd_graph);
  std::vector<CandidateTimes> candidates;
  std::vector<std::unique_ptr<FusedCpuBackend>> backends;
  std::string left_out;
  for (const CandidateTimes& candidate : {CandidateTimes{ComputeType::F32, {}, false}, CandidateTimes{ComputeType::Bf16, {}, false},
                                          CandidateTimes{ComputeType::F32, {}, true}}) {
    std::string why;
    auto backend = placeholder_candidate(candidate.winograd ? winograd_graph : graph, candidate, threads, why);
    if (backend) {
      candidates.push_back(candidate);
      backends.push_back(std::move(backend));
    } else {
      left_out += (left_out.empty() ? "" : "; ") + std::string(to_string(candidate.type)) +
                  (candidate.winograd ? "-winograd: " : ": ") + why;
    }
  }
  if (candidates.size() == 1) {
    backends.clear();
    auto f32 = std::make_unique<FusedCpuBackend>(std::move(graph), ComputeType::F32, threads);
    f32->set_precision_reason("auto: f32, the only candidate (" + left_out + ")");
    return f32;
  }
  const std::vector<bf16_t> input = noise_input(graph);
  std::vector<std::unique_ptr<CpuSession>> sessions;
  std::vector<std::function<void()>> forwards;
  for (const auto& backend : backends) sessions.push_back(backend->new_session());
  for (const auto& session : sessions) forwards.push_back([&session, &input] { session->forward(input); });
  std::vector<std::vector<double>> times = race(forwards, RaceLimits{});
  for (std::size_t i = 0; i < candidates.size(); ++i) candidates[i].ms = std::move(times[i]);
  sessions.clear();
  backends.clear();
  const NumericsChoice choice = choose_numerics(candidates);
  auto chosen = std::make_unique<FusedCpuBackend>(choice.winograd ? std::move(winograd_graph) : std::move(graph),
                                                  choice.type, threads);
  chosen->set_precision_reason(left_out.empty() ? choice.reason : choice.reason + " (not raced: " + left_out + ")");
  return chosen;
}

// int8's calibration: the f32 network's per-channel range of every conv input over the bundle's
// recorded input (the exporter's face; the noise where a bundle records none) and `noise`. The face
// alone left channels at what one face happened to reach, and other faces clipped (real faces,
// IR-18: cosine to f32 down to 0.969); the noise excites every channel. Also returns f32's
// embedding of the face. The f32 network is freed before int8's weights are made.
struct Calibration {
  std::vector<std::vector<float>> ranges;
  std::vector<float> f32_embedding;
};

Calibration calibrate_int8(const FusedGraph& graph, int threads, std::span<const bf16_t> face,
                           std::span<const bf16_t> noise) {
  const FusedCpuBackend f32(FusedGraph(graph), ComputeType::F32, threads);
  FusedCpuSession session = f32.fused_session();
  Calibration calibration;
  guarded_dnnl(ComputeType::F32, threads, [&] {
    calibration.f32_embedding = std::move(session.single().run({&face, 1}, &calibration.ranges).front());
    std::vector<std::vector<float>> noise_ranges;
    session.single().run({&noise, 1}, &noise_ranges);
    for (std::size_t v = 0; v < calibration.ranges.size(); ++v)
      for (std::size_t c = 0; c < calibration.ranges[v].size(); ++c)
        calibration.ranges[v][c] = std::max(calibration.ranges[v][c], noise_ranges[v][c]);
  });
  return calibration;
}

// Explicit `precision = int8` only: `auto` never picks it (on real faces it stays ~0.996-0.999 from
// f32, short of the 0.999 issue 32 asks of any numerics `auto` may pick; docs/performance.md).
std::unique_ptr<CpuBackend> make_int8_backend(FusedGraph graph, int threads) {
  const std::vector<bf16_t> noise = noise_input(graph, 0.5f);
  const std::span<const bf16_t> face = graph.recorded_input.empty() ? std::span<const bf16_t>(noise) : graph.recorded_input;
  Calibration calibration = calibrate_int8(graph, threads, face, noise);
  auto int8 = std::make_unique<FusedCpuBackend>(std::move(graph), ComputeType::Int8, threads, WeightContents::Bundle,
                                                std::move(calibration.ranges));
  char reason[160];
  std::snprintf(reason, sizeof reason, "calibrated at load; cosine to f32 on the bundle's recorded input %.5f",
                taconite::cosine(int8->fused_session().forward(face), calibration.f32_embedding));
  int8->set_precision_reason(reason);
  return int8;
}

}  // namespace

std::string cpu_isa_name() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: return "other (" + std::to_string(static_cast<int>(dnnl::get_effective_cpu_isa())) + ")";
  }
}

std::unique_ptr<CpuBackend> make_cpu_backend(FusedGraph graph, const CpuOptions& options) {
  const int threads = std::max(options.threads, 1);
  if (options.precision == CpuOptions::Precision::Auto) return make_fastest_backend(std::move(graph), threads);
  if (options.precision == CpuOptions::Precision::Int8) return make_int8_backend(std::move(graph), threads);
  const bool bf16 = options.precision == CpuOptions::Precision::Bf16;
  return std::make_unique<FusedCpuBackend>(std::move(graph), bf16 ? ComputeType::Bf16 : ComputeType::F32, threads);
}

}  // namespace taconite::cpu
