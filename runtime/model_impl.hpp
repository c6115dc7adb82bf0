// The private state behind taconite::Model and taconite::Session, for the library's own files
// (model.cpp, inspect.cpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend_registry.hpp"
#include "bundle/bundle.hpp"
#include "common/executor.hpp"
#include "plan/plan.hpp"
#include "taconite/model.hpp"

namespace taconite {

struct Model::Impl {
  bundle::Bundle bundle;
  plan::Plan plan;
  OpenedBackend backend;
  // Copied at load: the bundle's bytes may be released once the backend is built.
  std::vector<numerics::bf16_t> recorded_input;
  std::map<std::string, std::vector<float>, std::less<>> f32_tensors;
  std::vector<std::string> diagnostics;
  // Timing statistics (LoadOptions::timing), summed over every session when it ends.
  bool timing = false;
  double load_seconds = 0.0;
  mutable std::atomic<std::uint64_t> forwards{0};
  mutable std::atomic<std::uint64_t> forward_nanoseconds{0};

  ~Impl();
};

struct Session::Impl {
  std::shared_ptr<const Model> model;
  std::unique_ptr<Executor> executor;
  std::uint64_t forwards = 0;
  std::uint64_t forward_nanoseconds = 0;

  ~Impl();
  // Runs the executor on tiled inputs and counts the time.
  std::vector<std::vector<float>> run(std::span<const std::span<const numerics::bf16_t>> inputs);
};

namespace detail {

struct Access {
  static const Model::Impl& of(const Model& model) { return *model.impl_; }
  // The session's state; throws Failure(Input) for a moved-from session.
  static Session::Impl& of(Session& session);
};

}  // namespace detail

}  // namespace taconite
