// The one place backends are named, chosen and their policy decided: which backends this build
// has, `auto`'s order, and the cpu backend running the exact replay when the lowering refuses a
// plan (reported once, as a load diagnostic).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/executor.hpp"
#include "common/settings.hpp"
#include "plan/plan.hpp"

namespace taconite {

struct OpenedBackend {
  std::shared_ptr<const PreparedBackend> prepared;
  std::string name;    // the backend that runs (kBackend*)
  std::string reason;  // why it runs (for `auto`: what was skipped), and its precision
  std::string note;    // how it runs the bundle when the user should know (e.g. the cpu fallback); "" if nothing
};

// Throws Failure(Device) for an unknown, not-compiled or unopenable backend; the message lists
// the compiled ones; Failure(Input) for opencv-dnn, which runs ONNX files only. The plan must
// outlive the backend.
OpenedBackend open_backend(const plan::Plan& plan, const Settings& settings);

// The backend for the ONNX file `model`: opencv-dnn for `auto` and `opencv-dnn` (its name and
// reason; prepared stays empty: runtime/onnx/ runs it). Throws Failure(Input) for a bundle backend,
// Failure(Device) for an unknown name.
OpenedBackend choose_onnx_backend(const std::filesystem::path& model, const Settings& settings);

}  // namespace taconite
