#include "backend_registry.hpp"

#include <functional>

#include "common/failure.hpp"
#ifdef TACONITE_HAVE_ONEDNN
#include "cpu/cpu_executor.hpp"
#endif
#include "replay/replay_executor.hpp"
#ifdef TACONITE_HAVE_NPU_DIRECT
#include "npu/direct/npu_direct_device.hpp"
#endif
#ifdef TACONITE_HAVE_XRT
#include "npu/xrt/npu_xrt_device.hpp"
#endif

namespace taconite {

namespace {

// A backend ready to run, and (cpu only) how it runs when that needs saying.
struct Prepared {
  std::unique_ptr<PreparedBackend> backend;
  std::string note;
};

using Factory = std::function<Prepared(const plan::Plan&, const Settings&)>;

struct BackendEntry {
  std::string_view name;
  Factory open;
};

#ifdef TACONITE_HAVE_ONEDNN
// The fused oneDNN network, or the exact replay (never a guessed answer) when the lowering does not
// recognise the plan's structure.
Prepared open_cpu(const plan::Plan& plan, const Settings& settings) {
  cpu::Lowering lowering = cpu::lower_plan(plan);
  if (!lowering.graph)
    return {replay::make_exact_replay_backend(plan, settings.threads), "exact replay (not fused): " + lowering.refusal};
  cpu::CpuOptions options;
  options.threads = settings.threads;
  if (settings.precision == Precision::F32) options.precision = cpu::CpuOptions::Precision::F32;
  if (settings.precision == Precision::Bf16) options.precision = cpu::CpuOptions::Precision::Bf16;
  if (settings.precision == Precision::Int8) options.precision = cpu::CpuOptions::Precision::Int8;
  return {cpu::make_cpu_backend(std::move(*lowering.graph), options), {}};
}
#endif

// In `auto` preference order: NPU backends first, then the fast CPU backend, then the exact one.
std::vector<BackendEntry> backend_table() {
  std::vector<BackendEntry> table;
#ifdef TACONITE_HAVE_NPU_DIRECT
  table.push_back({kBackendNpuDirect, [](const plan::Plan& plan, const Settings& settings) {
                     return Prepared{replay::make_device_replay_backend(
                                         plan, npu::make_npu_direct_device(plan, settings.npu), settings.threads),
                                     {}};
                   }});
#endif
#ifdef TACONITE_HAVE_XRT
  table.push_back({kBackendNpuXrt, [](const plan::Plan& plan, const Settings& settings) {
                     return Prepared{replay::make_device_replay_backend(
                                         plan, npu::make_npu_xrt_device(plan, settings.npu), settings.threads),
                                     {}};
                   }});
#endif
#ifdef TACONITE_HAVE_ONEDNN
  table.push_back({kBackendCpu, open_cpu});
#endif
  table.push_back({kBackendCpuReference, [](const plan::Plan& plan, const Settings& settings) {
                     return Prepared{replay::make_exact_replay_backend(plan, settings.threads), {}};
                   }});
  return table;
}

OpenedBackend opened(Prepared prepared, std::string_view name, std::string reason) {
  const std::string why = prepared.backend->precision_reason();
  if (!why.empty()) reason += "; " + why;
  reason += "; precision " + prepared.backend->precision();
  return {std::move(prepared.backend), std::string(name), std::move(reason), std::move(prepared.note)};
}

std::string joined_names(const std::vector<BackendEntry>& table) {
  std::string names;
  for (const BackendEntry& entry : table) names += (names.empty() ? "" : ", ") + std::string(entry.name);
  return names;
}

bool is_bundle_backend_name(std::string_view name) {
  return name == kBackendCpu || name == kBackendCpuReference || name == kBackendNpuDirect || name == kBackendNpuXrt;
}

}  // namespace

std::vector<std::string> compiled_backends() {
  try {
    std::vector<std::string> names;
    for (const BackendEntry& entry : backend_table()) names.emplace_back(entry.name);
#ifdef TACONITE_HAVE_OPENCV_DNN
    names.emplace_back(kBackendOpenCvDnn);
#endif
    return names;
  } catch (...) {  // only allocation can fail here; the API lets no exception out
    return {};
  }
}

OpenedBackend open_backend(const plan::Plan& plan, const Settings& settings) {
  const std::vector<BackendEntry> table = backend_table();
  const std::string& requested = settings.backend;
  if (requested == kBackendAuto) {
    std::string skipped;
    for (const BackendEntry& entry : table) {
      try {
        Prepared prepared = entry.open(plan, settings);
        std::string reason = "auto: " + std::string(entry.name);
        reason += skipped.empty() ? " (first compiled backend)" : " (" + skipped + ")";
        return opened(std::move(prepared), entry.name, std::move(reason));
      } catch (const Failure& failure) {
        skipped += (skipped.empty() ? "" : "; ") + std::string(entry.name) + " unavailable: " + failure.error().message;
      } catch (const std::exception& e) {  // e.g. a library error: still try the next backend
        skipped += (skipped.empty() ? "" : "; ") + std::string(entry.name) + " unavailable: " + e.what();
      }
    }
    fail(ErrorKind::Device, "no backend could be opened: " + skipped);
  }
  for (const BackendEntry& entry : table)
    if (entry.name == requested) return opened(entry.open(plan, settings), entry.name, "requested");
  if (requested == kBackendOpenCvDnn)
    fail(ErrorKind::Input, "backend 'opencv-dnn' runs ONNX files, not bundles; for a bundle choose one of " +
                               joined_names(table) + " (or auto)");
  const bool known = is_bundle_backend_name(requested);
  fail(ErrorKind::Device, "backend '" + requested + "' " +
                              (known ? "is not compiled into this build" : "is unknown") +
                              "; compiled backends: " + joined_names(table) + " (or auto)");
}

OpenedBackend choose_onnx_backend(const std::filesystem::path& model, const Settings& settings) {
  const std::string& requested = settings.backend;
  if (requested == kBackendAuto || requested == kBackendOpenCvDnn) {
    OpenedBackend backend;
    backend.name = kBackendOpenCvDnn;
    backend.reason = requested == kBackendAuto ? "auto: opencv-dnn (the model is an ONNX file)" : "requested";
    backend.reason += "; precision " + std::string(kPrecisionF32);
    return backend;
  }
  if (is_bundle_backend_name(requested))
    fail(ErrorKind::Input, "backend '" + requested + "' runs AdaFace bundles and cannot run the ONNX file " +
                               model.string() + "; use backend opencv-dnn (or auto)");
  fail(ErrorKind::Device, "backend '" + requested + "' is unknown; an ONNX file runs on opencv-dnn (or auto)");
}

}  // namespace taconite
