// Where taconite-run's components are made: the one place to add one (MQTT / Home Assistant,
// snapshots, the event history, the web page). Each is a PipelineObserver the Runner feeds.
#pragma once

#include <memory>
#include <vector>

#include "config.hpp"
#include "pipeline_observer.hpp"
#include "taconite/error.hpp"

namespace taconite::app {

// The components `config` asks for, in the order they are called. An error (naming the config key)
// when one cannot be made: taconite-run then does not start.
Result<std::vector<std::unique_ptr<PipelineObserver>>> make_components(const Config& config);

}  // namespace taconite::app
