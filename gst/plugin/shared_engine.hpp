// One engine per (bundle, backend) per process, served by one worker thread.
//
// Every taconiteadaface element that asks for the same bundle and backend gets a client of the
// same SharedEngine: one loaded model, one device queue (the NPU has 16 hardware contexts and one
// command queue; a second engine would thrash them). Each element's streaming thread submits its
// frame's faces and waits for them, so per-stream order is the element's own; the worker gathers
// the faces of every waiting stream into one embed() call (cross-stream batching) up to the
// oldest request's batch size, waiting at most its batch timeout for more streams, and never
// waiting when every attached stream already has a request queued.
#pragma once

#include <chrono>
#include <memory>

#include "engine_client.hpp"

namespace taconite::gst {

class SharedEngine;

// Wraps `inner` (the engine actually loaded) in a new shared engine with its worker thread.
std::shared_ptr<SharedEngine> make_shared_engine(std::unique_ptr<EngineClient> inner);

// A new client (one per element) of `engine`.
std::unique_ptr<EngineClient> make_shared_client(std::shared_ptr<SharedEngine> engine);

// How many faces the engine has embedded in how many embed() calls (for tests and benches).
struct SharedEngineStats {
  unsigned long long calls = 0;
  unsigned long long faces = 0;
  unsigned long long largest_batch = 0;
};
SharedEngineStats shared_engine_stats(const SharedEngine& engine);

// Requests queued and not yet taken by the worker (tests wait on it).
std::size_t shared_engine_queued(const SharedEngine& engine);

}  // namespace taconite::gst
