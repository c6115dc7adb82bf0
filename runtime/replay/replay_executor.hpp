// Replays a Plan step by step: exact host glue (numerics/host_glue) between conv dispatches,
// one ConvDevice::run per conv record (spec §4, §5.1).
#pragma once

#include <memory>
#include <string>

#include "common/executor.hpp"
#include "plan/plan.hpp"
#include "replay/conv_device.hpp"

namespace taconite::replay {

std::unique_ptr<Executor> make_replay_executor(const plan::Plan& plan, std::unique_ptr<ConvDevice> device,
                                               int threads);

}  // namespace taconite::replay
