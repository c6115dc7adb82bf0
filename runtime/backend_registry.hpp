// Which backends this build has, and opening one by name (or `auto`) for a loaded Plan.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/executor.hpp"
#include "plan/plan.hpp"
#include "taconite/embedder.hpp"

namespace taconite {

struct OpenedBackend {
  std::unique_ptr<Executor> executor;
  std::string reason;  // why this backend runs (shown by the API and the CLI)
};

// Throws Failure(Device) for an unknown, not-compiled or unopenable backend; the message lists
// the compiled ones.
OpenedBackend open_backend(const plan::Plan& plan, const LoadOptions& options, int threads);

}  // namespace taconite
