// The identity of a model for a gallery. A bundle's: a SHA-256 over manifest.txt and the weight
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

// Any model taconite::Model::load takes: a bundle directory (fingerprint_bundle), or an ONNX file
// (a path ending in .onnx)
// and its description (`model_proc`, default the model's path with .json): a SHA-256 over the ONNX
// file's bytes and the description's members that change the embeddings (input: name, width,
// height, channel_order, mean, std; output: name, dim; compact JSON, so layout does not count);
// its name and threshold do not (a re-tuned threshold keeps the gallery), `model` is its name.
// Nothing is validated beyond that (Model::load does). Errors: Io (a file missing or unreadable,
// named), Bundle (a file too large, or a description that is not a JSON object, named); Input (a
// description given for a bundle).
Result<ModelFingerprint> fingerprint_model(const std::filesystem::path& model,
                                           const std::filesystem::path& model_proc = {});

}  // namespace taconite::gallery
