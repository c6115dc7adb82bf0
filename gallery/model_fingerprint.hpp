// The identity of a bundle's model for a gallery: a SHA-256 over manifest.txt and the weight
// tensors (name, dtype, dims and bytes of every tensors.txt record not named ref.*). Reference
// tensors (recorded inputs and embeddings) do not change what the model computes, so re-recording
// them keeps the fingerprint; any weight or dispatch change gives another one.
#pragma once

#include <filesystem>
#include <string>

#include "taconite/error.hpp"

namespace taconite::gallery {

struct ModelFingerprint {
  std::string sha256;  // 64 lowercase hex digits
  std::string model;   // the manifest's `param model` (e.g. "IR-18"), "" when absent
};

// Reads manifest.txt, tensors.txt and tensors.bin of `bundle_dir`. Errors: Io (a file missing or
// unreadable, named), Bundle (a tensors.txt record that is malformed or reaches past tensors.bin,
// named by line).
Result<ModelFingerprint> fingerprint_bundle(const std::filesystem::path& bundle_dir);

}  // namespace taconite::gallery
