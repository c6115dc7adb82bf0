// One camera's pipeline, as gst-launch-1.0 arguments: what --print shows and what the runner builds
// (gst_parse_launchv of the same words), so the two never differ.
#pragma once

#include <string>
#include <vector>

#include "config.hpp"

namespace taconite::app {

// Element names the runner looks up in the built pipeline.
inline constexpr const char* kPublishElementName = "publish";

// The chain of docs/app.md ("What runs") for `camera` with the model, detector and gallery of `config`.
std::vector<std::string> pipeline_words(const Config& config, const CameraConfig& camera);

// "gst-launch-1.0 -e WORD ..." with each word quoted for a POSIX shell where it needs it.
std::string gst_launch_line(const std::vector<std::string>& words);

}  // namespace taconite::app
