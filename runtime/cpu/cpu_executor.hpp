// The fast `cpu` backend: the Plan lowered to a fused oneDNN network (cpu/fused_graph.hpp). The
// backend holds the weights (one WeightStore, shared by every session); a session holds its own
// networks per batch size (primitives and activations). Plans the lowering refuses are not this
// file's business: the backend registry runs them on the exact replay.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/executor.hpp"
#include "cpu/fused_graph.hpp"
#include "cpu/numerics_choice.hpp"

namespace taconite::cpu {

struct CpuOptions {
  // Auto: the fastest of f32, bf16 and f32 on Winograd convs (each where oneDNN builds it), measured
  // at load on the model's own batch-1 network (cpu/numerics_choice.hpp). F32: direct convolutions.
  // Int8: only when asked (docs/backends.md#int8).
  enum class Precision { Auto, F32, Bf16, Int8 } precision = Precision::Auto;
  int threads = 1;
};

class WeightStore;

// One session's networks. Not thread-safe.
class CpuSession : public Executor {
 public:
  // The batch sizes with a built network, batch 1 first, then most recently used first; see
  // cpu/network_cache.hpp.
  virtual std::vector<int> cached_batch_sizes() const = 0;
  // The weights the networks read (the backend's: sessions never copy them).
  virtual const WeightStore& weights() const = 0;
};

class CpuBackend : public PreparedBackend {
 public:
  virtual ComputeType compute_type() const = 0;
  virtual std::string summary() const = 0;  // precision and why, lowering, oneDNN implementations
  virtual const WeightStore& weights() const = 0;
  virtual std::unique_ptr<CpuSession> new_session() const = 0;
  std::unique_ptr<Executor> new_executor() const override { return new_session(); }
};

std::string cpu_isa_name();

// Prepares the weights of `graph` (reading the bundle's bytes once, at this call; for `auto` after
// timing the candidate numerics). The graph points into its plan, which must outlive the backend
// and its sessions. Throws Failure(Device) when oneDNN cannot build the network (e.g. bf16 forced
// on a CPU whose oneDNN has no bf16 kernels).
std::unique_ptr<CpuBackend> make_cpu_backend(FusedGraph graph, const CpuOptions& options);

}  // namespace taconite::cpu
