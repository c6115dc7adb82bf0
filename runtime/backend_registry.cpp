#include "backend_registry.hpp"

#include <functional>

#include "common/failure.hpp"
#ifdef TACONITE_HAVE_ONEDNN
#include "cpu/cpu_executor.hpp"
#endif
#include "replay/cpu_reference_device.hpp"
#include "replay/replay_executor.hpp"
#ifdef TACONITE_HAVE_NPU_DIRECT
#include "npu/direct/npu_direct_device.hpp"
#endif
#ifdef TACONITE_HAVE_XRT
#include "npu/xrt/npu_xrt_device.hpp"
#endif

namespace taconite {

namespace {

using Factory = std::function<std::unique_ptr<Executor>(const plan::Plan&, const LoadOptions&, int threads)>;

struct BackendEntry {
  std::string_view name;
  Factory open;
};

// In `auto` preference order: NPU backends first, then the fast CPU backend, then the exact one.
std::vector<BackendEntry> backend_table() {
  std::vector<BackendEntry> table;
#ifdef TACONITE_HAVE_NPU_DIRECT
  table.push_back({kBackendNpuDirect, [](const plan::Plan& plan, const LoadOptions&, int threads) {
                     return replay::make_replay_executor(plan, npu::make_npu_direct_device(plan), threads);
                   }});
#endif
#ifdef TACONITE_HAVE_XRT
  table.push_back({kBackendNpuXrt, [](const plan::Plan& plan, const LoadOptions&, int threads) {
                     return replay::make_replay_executor(plan, npu::make_npu_xrt_device(plan), threads);
                   }});
#endif
#ifdef TACONITE_HAVE_ONEDNN
  table.push_back({kBackendCpu, [](const plan::Plan& plan, const LoadOptions& options, int threads) {
                     cpu::CpuOptions cpu_options;
                     cpu_options.threads = threads;
                     if (options.precision == Precision::F32) cpu_options.precision = cpu::CpuOptions::Precision::F32;
                     return std::unique_ptr<Executor>(cpu::make_cpu_executor(plan, cpu_options));
                   }});
#endif
  table.push_back({kBackendCpuReference, [](const plan::Plan& plan, const LoadOptions&, int threads) {
                     return replay::make_replay_executor(plan, replay::make_cpu_reference_device(threads), threads);
                   }});
  return table;
}

OpenedBackend with_note(OpenedBackend opened) {
  opened.reason += "; precision " + opened.executor->precision();
  if (std::string note = opened.executor->load_note(); !note.empty()) opened.reason += "; " + note;
  return opened;
}

std::string joined_names(const std::vector<BackendEntry>& table) {
  std::string names;
  for (const BackendEntry& entry : table) names += (names.empty() ? "" : ", ") + std::string(entry.name);
  return names;
}

}  // namespace

std::vector<std::string> compiled_backends() {
  try {
    std::vector<std::string> names;
    for (const BackendEntry& entry : backend_table()) names.emplace_back(entry.name);
    return names;
  } catch (...) {  // only allocation can fail here; the API lets no exception out
    return {};
  }
}

OpenedBackend open_backend(const plan::Plan& plan, const LoadOptions& options, int threads) {
  const std::vector<BackendEntry> table = backend_table();
  if (options.backend == kBackendAuto) {
    std::string skipped;
    for (const BackendEntry& entry : table) {
      try {
        auto executor = entry.open(plan, options, threads);
        std::string reason = "auto: " + std::string(entry.name);
        reason += skipped.empty() ? " (first compiled backend)" : " (" + skipped + ")";
        return with_note({std::move(executor), reason});
      } catch (const Failure& failure) {
        skipped += (skipped.empty() ? "" : "; ") + std::string(entry.name) + " unavailable: " + failure.error().message;
      } catch (const std::exception& e) {  // e.g. a library error: still try the next backend
        skipped += (skipped.empty() ? "" : "; ") + std::string(entry.name) + " unavailable: " + e.what();
      }
    }
    fail(ErrorKind::Device, "no backend could be opened: " + skipped);
  }
  for (const BackendEntry& entry : table)
    if (entry.name == options.backend) return with_note({entry.open(plan, options, threads), "requested"});
  const bool known = options.backend == kBackendCpu || options.backend == kBackendCpuReference ||
                     options.backend == kBackendNpuDirect || options.backend == kBackendNpuXrt;
  fail(ErrorKind::Device, "backend '" + options.backend + "' " +
                              (known ? "is not compiled into this build" : "is unknown") +
                              "; compiled backends: " + joined_names(table) + " (or auto)");
}

}  // namespace taconite
