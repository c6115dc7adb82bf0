// The `cpu` backend: the Plan lowered to a fused oneDNN network (cpu/fused_graph.hpp), or, when
// the lowering does not recognise the plan's structure, the exact replay (cpu-reference device)
// step by step: never a guessed answer.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/executor.hpp"
#include "plan/plan.hpp"

namespace taconite::cpu {

enum class ComputeType { F32, Bf16 };

struct CpuOptions {
  // Auto: bf16 where the CPU computes it natively (AVX512-BF16 or AMX), else f32.
  enum class Precision { Auto, F32, Bf16 } precision = Precision::Auto;
  int threads = 1;
};

class CpuExecutor : public Executor {
 public:
  std::string backend() const override { return "cpu"; }
  virtual bool fused() const = 0;                // false: running the exact replay fallback
  virtual ComputeType compute_type() const = 0;
  virtual std::string summary() const = 0;       // precision, lowering, oneDNN implementations
  // The batch sizes with a built network, batch 1 first, then most recently used first (none
  // for the replay fallback); see cpu/network_cache.hpp.
  virtual std::vector<int> cached_batch_sizes() const { return {}; }
  std::string load_note() const override { return fused() ? std::string() : summary(); }
};

// True when the CPU computes bf16 natively (oneDNN's effective ISA has AVX512-BF16 or AMX).
bool cpu_has_native_bf16();
std::string cpu_isa_name();

// Throws Failure(Device) when oneDNN cannot build the network (e.g. bf16 forced on a CPU whose
// oneDNN has no bf16 kernels).
std::unique_ptr<CpuExecutor> make_cpu_executor(const plan::Plan& plan, const CpuOptions& options);

}  // namespace taconite::cpu
