#include "cpu/cpu_executor.hpp"

#include <algorithm>

#include <oneapi/dnnl/dnnl.hpp>

#include "common/failure.hpp"
#include "cpu/fused_graph.hpp"
#include "cpu/network_cache.hpp"
#include "cpu/omp_threads.hpp"
#include "cpu/onednn_network.hpp"
#include "cpu/weight_store.hpp"
#include "replay/cpu_reference_device.hpp"
#include "taconite/embedder.hpp"
#include "replay/replay_executor.hpp"

namespace taconite::cpu {

namespace {

// Batches larger than this run as several passes: on the 2-core AVX2 machine batch 32 ran ~30 %
// fewer faces/s than batch 8 (its activations fall out of cache) for 4x the activation memory.
constexpr int kMaxBatch = 8;
// Networks kept for batch sizes other than 1 (each holds its own activation buffers): with the
// buckets 2, 4 and 8 every bucket stays built.
constexpr std::size_t kCachedBatchSizes = 3;

std::string_view to_string(ComputeType type) { return type == ComputeType::Bf16 ? kPrecisionBf16 : kPrecisionF32; }

class FusedCpuExecutor final : public CpuExecutor {
 public:
  FusedCpuExecutor(FusedGraph graph, ComputeType type, int threads)
      : graph_(std::move(graph)),
        type_(type),
        threads_(threads),
        engine_(dnnl::engine::kind::cpu, 0),
        weights_(graph_, engine_, type == ComputeType::Bf16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32,
                 threads),
        networks_(kCachedBatchSizes) {
    guarded_dnnl([&] { network(1); });
  }

  bool fused() const override { return true; }
  std::string precision() const override { return std::string(to_string(type_)); }
  // Every op's constants were copied into the WeightStore by the batch-1 network built above;
  // other batch sizes re-lay-out those copies.
  bool reads_bundle_tensors() const override { return false; }
  ComputeType compute_type() const override { return type_; }
  std::vector<int> cached_batch_sizes() const override { return networks_.sizes(); }

  std::string summary() const override {
    const OnednnNetwork& single = *networks_.single();  // built by the constructor
    return std::string(to_string(type_)) + " on oneDNN isa " + cpu_isa_name() + "; fused " + describe(graph_) +
           "; primitives: " + single.implementations() + "; weights " + std::to_string(weights_.bytes() >> 20) +
           " MiB, batch-1 activations " + std::to_string(single.activation_bytes() >> 20) + " MiB";
  }

  std::vector<float> forward(std::span<const bf16_t> input) override {
    std::vector<float> out;
    guarded_dnnl([&] { out = std::move(network(1).run({&input, 1}).front()); });
    return out;
  }

  std::vector<std::vector<float>> forward_batch(std::span<const std::span<const bf16_t>> inputs) override {
    std::vector<std::vector<float>> outputs;
    outputs.reserve(inputs.size());
    guarded_dnnl([&] {
      for (std::size_t at = 0; at < inputs.size(); at += kMaxBatch) {
        const std::size_t count = std::min<std::size_t>(kMaxBatch, inputs.size() - at);
        OnednnNetwork& padded = network(batch_bucket(static_cast<int>(count), kMaxBatch));
        for (auto& out : padded.run(inputs.subspan(at, count))) outputs.push_back(std::move(out));
      }
    });
    return outputs;
  }

 private:
  // Runs fn with oneDNN's OpenMP pool sized to our threads; oneDNN errors become Device failures.
  template <typename Fn>
  void guarded_dnnl(Fn&& fn) {
    ScopedOmpThreads scoped(threads_);
    try {
      fn();
    } catch (const dnnl::error& e) {
      fail(ErrorKind::Device, std::string("oneDNN (") + std::string(to_string(type_)) + " on isa " + cpu_isa_name() + "): " + e.what() +
                                  " (status " + std::to_string(static_cast<int>(e.status)) + ")");
    }
  }

  OnednnNetwork& network(int batch) {
    const dnnl::memory::data_type act =
        type_ == ComputeType::Bf16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
    return networks_.get(batch, [&](int size) { return std::make_unique<OnednnNetwork>(graph_, weights_, engine_, act, size); });
  }

  FusedGraph graph_;
  ComputeType type_;
  int threads_;
  dnnl::engine engine_;
  WeightStore weights_;
  NetworkCache<OnednnNetwork> networks_;
};

// The exact replay, presented as the `cpu` backend, with the reason it runs.
class ReplayFallbackExecutor final : public CpuExecutor {
 public:
  ReplayFallbackExecutor(const plan::Plan& plan, int threads, std::string reason)
      : replay_(replay::make_replay_executor(plan, replay::make_cpu_reference_device(threads), threads)),
        reason_(std::move(reason)) {}
  bool fused() const override { return false; }
  std::string precision() const override { return replay_->precision(); }
  ComputeType compute_type() const override { return ComputeType::F32; }
  std::string summary() const override { return "exact replay (not fused): " + reason_; }
  std::vector<float> forward(std::span<const bf16_t> input) override { return replay_->forward(input); }
  std::vector<std::vector<float>> forward_batch(std::span<const std::span<const bf16_t>> inputs) override {
    return replay_->forward_batch(inputs);
  }

 private:
  std::unique_ptr<Executor> replay_;
  std::string reason_;
};

}  // namespace

bool cpu_has_native_bf16() {
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto bf16 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
  return (isa & bf16) == bf16;  // the ISA values are nested bit sets; AMX includes AVX512-BF16
}

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

std::unique_ptr<CpuExecutor> make_cpu_executor(const plan::Plan& plan, const CpuOptions& options) {
  const int threads = std::max(options.threads, 1);
  Lowering lowering = lower_plan(plan);
  if (!lowering.graph) return std::make_unique<ReplayFallbackExecutor>(plan, threads, lowering.refusal);
  if (options.precision == CpuOptions::Precision::Auto && cpu_has_native_bf16()) {
    // bf16 is the preferred type here, not a requirement: should any bf16 primitive be
    // missing from this oneDNN, run the same network in f32 rather than fail the load.
    try {
      return std::make_unique<FusedCpuExecutor>(FusedGraph(*lowering.graph), ComputeType::Bf16, threads);
    } catch (const Failure&) {
    }
  }
  const bool bf16 = options.precision == CpuOptions::Precision::Bf16;
  return std::make_unique<FusedCpuExecutor>(std::move(*lowering.graph), bf16 ? ComputeType::Bf16 : ComputeType::F32,
                                            threads);
}

}  // namespace taconite::cpu
