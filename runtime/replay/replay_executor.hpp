// Replays a Plan step by step: exact host glue (numerics/host_glue) between conv dispatches,
// one ConvDevice::run per conv record (spec §4, §5.1).
#pragma once

#include <memory>

#include "common/executor.hpp"
#include "plan/plan.hpp"
#include "replay/conv_device.hpp"

namespace taconite::replay {

// The exact replay on the CPU (cpu-reference): each session gets its own cpu-reference device, so
// sessions run concurrently. The plan must outlive the backend and its executors.
std::unique_ptr<PreparedBackend> make_exact_replay_backend(const plan::Plan& plan, int threads);

// The replay on one `device` (an NPU) that every session shares: a session holds the device for a
// whole forward, so forwards of concurrent sessions take turns on its one queue.
std::unique_ptr<PreparedBackend> make_device_replay_backend(const plan::Plan& plan, std::unique_ptr<ConvDevice> device,
                                                            int threads);

// One executor owning `device` (tests and benches that drive a device directly).
std::unique_ptr<Executor> make_replay_executor(const plan::Plan& plan, std::unique_ptr<ConvDevice> device,
                                               int threads);

}  // namespace taconite::replay
