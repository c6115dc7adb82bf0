// One engine per (bundle, backend) per process, served by one worker thread per session.
//
// Every taconiteadaface element that asks for the same bundle and backend gets a client of the
// same SharedEngine: one loaded model, one device queue (the NPU has 16 hardware contexts and one
// command queue; a second engine would thrash them). The engine runs `sessions` workers, each
// with its own session of that model (its own per-call state, the weights shared), all taking
// batches from one queue: on the CPU backends they run concurrently; on the NPU backends they
// share the resident contexts and take turns on the device's one queue (no more throughput).
// Each element's streaming thread submits its frame's faces and waits for them, so it has at most
// one request in flight and per-stream order is the element's own, whichever worker runs it.
// One idle worker at a time gathers the faces of the waiting streams into one embed() call
// (cross-stream batching) up to the oldest request's batch size, waiting at most its batch
// timeout for more streams; once it has taken its batch the next idle worker gathers what
// remains. It never waits when no other stream is expected to submit: every client that is not
// flushing or stopping (cancel()) already has a request queued or running, or let a batch time
// out waiting for it and has not since submitted while another stream's request was queued (an
// idle, EOS or slow stream, or one downstream of another element on the same engine, costs the
// others one timeout, not one per frame).
//
// A failing batch of several requests is retried one request at a time, so one stream's bad
// face or one transient device error fails only the request that really fails; an exception
// thrown by the engine fails the requests of that call and the worker keeps serving.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "engine_client.hpp"

namespace taconite::gst {

class SharedEngine;

// Wraps `inner` (the engine actually loaded, with `threads` as requested) in a new shared engine
// with `sessions` workers (clamped to 1..kMaxEngineSessions): `inner` and sessions-1 clients from
// inner->another_session(); an engine that has fewer gets fewer workers (stats().sessions).
std::shared_ptr<SharedEngine> make_shared_engine(std::unique_ptr<EngineClient> inner, int threads = 0,
                                                 int sessions = 1);

// A new client (one per element) of `engine`; `note` is its sharing_note() (empty: none).
std::unique_ptr<EngineClient> make_shared_client(std::shared_ptr<SharedEngine> engine, std::string note = {});

// The CPU threads and sessions `engine` was loaded with (as requested: 0 threads = runtime default).
int shared_engine_threads(const SharedEngine& engine);
int shared_engine_sessions(const SharedEngine& engine);

// How many faces the engine has embedded in how many embed() calls, in total over its sessions
// (for tests and benches).
struct SharedEngineStats {
  unsigned sessions = 0;            // workers running, each with its own session
  unsigned peak_concurrent = 0;     // the most batches ever running at once (at most `sessions`)
  unsigned long long calls = 0;
  unsigned long long faces = 0;
  unsigned long long largest_batch = 0;
  unsigned long long timeouts = 0;  // batches run because the oldest request's timeout expired
  unsigned long long retries = 0;   // failed batches of several requests retried one by one
};
SharedEngineStats shared_engine_stats(const SharedEngine& engine);

// Requests queued and not yet taken by a worker (tests wait on it).
std::size_t shared_engine_queued(const SharedEngine& engine);

}  // namespace taconite::gst
