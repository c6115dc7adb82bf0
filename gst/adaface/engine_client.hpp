// The element's view of the inference engine: faces in, raw embeddings out, in order.
//
// The element talks to the engine only through EngineClient. open_engine_client() returns a client
// of the process's one engine for the (bundle, backend) pair (shared_engine.hpp): its worker
// threads, one per session of the one loaded model, serve every element using it and batch faces
// across streams. The pair is the bundle's
// canonical path (`dir`, `dir/` and `dir/./` are one bundle) and the backend actually running
// (`auto` shares the engine of the backend it resolves to). Contract: embed() is called
// from one streaming thread at a time per client; info() is immutable after open.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "taconite/model.hpp"

namespace taconite::gst {

// The most sessions (worker threads, each with its own per-call state) one shared engine runs.
inline constexpr int kMaxEngineSessions = 16;

struct EngineRequest {
  std::string bundle;             // bundle directory or ONNX file
  std::string model_proc;         // an ONNX model's description ("" = beside the model)
  std::string backend = "auto";   // runtime backend name
  int threads = 0;                // CPU worker threads per call (0 = runtime default)
  Precision precision = Precision::Auto;  // the cpu backend's numerics
  int sessions = 1;               // sessions of the model run concurrently, 1..kMaxEngineSessions
};

struct EngineInfo {
  std::string model;    // the bundle's model name ("" when it has none)
  std::string backend;  // the backend actually running
  std::string precision;  // its numerics: "f32", "bf16", "int8" or "bf16-exact" (Model::precision)
  std::string backend_reason;
  int embed_dim = 0;
  int input_width = 0;
  int input_height = 0;
  // How faces are normalised for the model (Model::preprocessing(); channel-order=auto follows its order).
  Preprocessing preprocessing;
  std::vector<std::string> diagnostics;  // non-fatal findings of the load
};

// Cross-stream batching: at most `max_faces` faces per engine call; wait at most `timeout` for
// other streams' faces once a request is queued.
struct BatchPolicy {
  unsigned max_faces = 1;
  std::chrono::microseconds timeout{0};
};

class SharedEngine;

class EngineClient {
 public:
  virtual ~EngineClient() = default;
  virtual const EngineInfo& info() const = 0;
  // Raw (not normalised) embeddings, one per face, in the faces' order.
  virtual Result<std::vector<Embedding>> embed(std::span<const FaceChw> faces) = 0;
  // Another client of the same loaded model with its own per-call state (a Session: no weight
  // copy), for another worker of the shared engine; thread-safe. An engine that has no such
  // thing returns an error (the default) and is served by one worker.
  virtual Result<std::unique_ptr<EngineClient>> another_session() const;
  // Shared-engine clients only: how this client's requests are batched with other streams'.
  virtual void set_batching(const BatchPolicy&) {}
  // Shared-engine clients only (callable from any thread): sticky until resume(): a queued, not
  // yet started embed() returns an error at once, and so does every embed() submitted meanwhile
  // (the element is flushing or stopping).
  virtual void cancel() {}
  // Clears cancel() (FLUSH_STOP, pad activation).
  virtual void resume() {}
  // What of this client's request the live shared engine does not honour (e.g. other `threads`
  // or `sessions` than it was loaded with), for the element to warn about; empty when everything is as asked.
  virtual const std::string& sharing_note() const;
};

// Returns a client of the process's shared engine for (bundle, backend), loading it (through the
// opener installed with set_engine_opener, else a Model and a Session) when none is alive. Loads
// of different keys run concurrently; requests for a key being loaded wait for that one load and
// share its engine or its error. A bundle path that cannot be resolved is an Io error naming it;
// `sessions` outside 1..kMaxEngineSessions is an Input error.
Result<std::unique_ptr<EngineClient>> open_engine_client(const EngineRequest& request);

// The live shared engine for `request` (opened by the current opener), or nullptr; for tests.
std::shared_ptr<SharedEngine> find_shared_engine(const EngineRequest& request);

// Replaces how the engine behind the shared engines is opened, process-wide (tests install fake
// or slow engines); an empty function restores the default. Takes effect at the next
// READY->PAUSED; engines opened before keep serving the elements that use them.
using EngineOpener = std::function<Result<std::unique_ptr<EngineClient>>(const EngineRequest&)>;
void set_engine_opener(EngineOpener opener);

}  // namespace taconite::gst
