// The two real ONNX face embedders of ../shared/realfaces/models and their taconite-embedder/1
// descriptions (docs/models.md), loaded through the public taconite::Model as any user's ONNX model.
// Shared by the real-face bench and tests.
#pragma once

#include <array>
#include <filesystem>
#include <memory>

#include "taconite/model.hpp"

namespace taconite::realfaces {

struct RealEmbedder {
  const char* label;        // short name for tables: "foamliu-128", "faceplugin-512"
  const char* file;         // under models/
  const char* description;  // its taconite-embedder/1 description (no threshold: that is what is measured)
  int dim;
};

extern const std::array<RealEmbedder, 2> kRealEmbedders;

// Links `root`/models/`e.file` into `scratch` (an existing directory) beside its description, as a
// user lays them out, and loads it with `threads` threads. Errors: the load's, or an Io error naming
// the scratch file that could not be written.
Result<std::shared_ptr<const Model>> load_real_embedder(const RealEmbedder& e, const std::filesystem::path& root,
                                                        const std::filesystem::path& scratch, int threads);

}  // namespace taconite::realfaces
