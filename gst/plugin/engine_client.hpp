// The element's view of the inference engine: faces in, raw embeddings out, in order.
//
// The element talks to the engine only through EngineClient, so the engine's ownership can change
// (today: one IrEmbedder per element, owned by its streaming thread; later: one shared engine per
// bundle+backend served by a worker thread that batches faces across streams) without touching
// the element. Contract: embed() is called from one streaming thread at a time; info() is
// immutable after open.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "taconite/embedder.hpp"

namespace taconite::gst {

struct EngineRequest {
  std::string bundle;             // bundle directory
  std::string backend = "auto";   // runtime backend name
  int threads = 0;                // CPU worker threads (0 = runtime default)
};

struct EngineInfo {
  std::string model;    // the bundle's model name ("" when it has none)
  std::string backend;  // the backend actually running
  std::string backend_reason;
  int embed_dim = 0;
  int input_width = 0;
  int input_height = 0;
  std::vector<std::string> diagnostics;  // non-fatal findings of the load
};

class EngineClient {
 public:
  virtual ~EngineClient() = default;
  virtual const EngineInfo& info() const = 0;
  // Raw (not normalised) embeddings, one per face, in the faces' order.
  virtual Result<std::vector<Embedding>> embed(std::span<const FaceChw> faces) = 0;
};

// Loads the bundle and returns a client owning a private engine (or what the opener installed
// with set_engine_opener returns).
Result<std::unique_ptr<EngineClient>> open_engine_client(const EngineRequest& request);

// Replaces how elements open their engine, process-wide (tests install fake or slow engines);
// an empty function restores the default. Takes effect at the next READY->PAUSED.
using EngineOpener = std::function<Result<std::unique_ptr<EngineClient>>(const EngineRequest&)>;
void set_engine_opener(EngineOpener opener);

}  // namespace taconite::gst
