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
#include "onnx/onnx_model.hpp"
#include "plan/plan.hpp"
#include "taconite/model.hpp"

namespace taconite {

struct Model::Impl {
  // A bundle's model: bundle, plan and backend.prepared; an ONNX model: onnx (and backend's name
  // and reason), the bundle and plan left empty.
  bundle::Bundle bundle;
  plan::Plan plan;
  OpenedBackend backend;
  std::shared_ptr<const onnx::OnnxModel> onnx;
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
  std::unique_ptr<Executor> executor;         // a bundle's model
  std::unique_ptr<onnx::OnnxSession> onnx;    // an ONNX model
  std::uint64_t forwards = 0;
  std::uint64_t forward_nanoseconds = 0;

  ~Impl();
  // Runs the executor on tiled inputs and counts the time. Throws Failure(Input) for an ONNX model's session.
  std::vector<std::vector<float>> run(std::span<const std::span<const numerics::bf16_t>> inputs);
  // Runs the ONNX session on faces and counts the time.
  std::vector<Embedding> run_onnx(std::span<const FaceChw> faces);
};

namespace detail {

struct Access {
  static const Model::Impl& of(const Model& model) { return *model.impl_; }
  // The session's state; throws Failure(Input) for a moved-from session.
  static Session::Impl& of(Session& session);
};

}  // namespace detail

}  // namespace taconite
