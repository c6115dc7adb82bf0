// An ONNX face embedder behind taconite::Model / Session: the model half (immutable, shared by the
// sessions) and the session half (one per Session: its own network instance). Implemented with
// OpenCV DNN (opencv_dnn_model.cpp, the opencv-dnn backend) when the build has OpenCV's dnn module,
// else every load fails saying so (onnx_unavailable.cpp). No OpenCV type appears here.
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "onnx/embedder_description.hpp"
#include "onnx/onnx_path.hpp"
#include "taconite/model.hpp"

namespace taconite::onnx {

class OnnxSession {
 public:
  virtual ~OnnxSession() = default;
  // One embedding per face, in order. Throws Failure(Input) for a face of the wrong shape or with a
  // value that is not finite, Failure(Device) for a failed forward or an output that is not finite.
  virtual std::vector<Embedding> embed(std::span<const FaceChw> faces) = 0;
};

class OnnxModel {
 public:
  virtual ~OnnxModel() = default;
  virtual const EmbedderDescription& description() const = 0;
  virtual const std::vector<std::string>& diagnostics() const = 0;
  // Thread-safe. Throws Failure(Device) when the network cannot be instantiated.
  virtual std::unique_ptr<OnnxSession> new_session() const = 0;
};

// Reads the ONNX file (a regular file of at most kMaxModelBytes) and its description, parses the
// network, checks it against the description and probes it once (and whether it batches). `threads`
// is OpenCV's thread count (process-wide). Throws Failure: Io (a file unreadable, named), Bundle
// (the model or the description malformed or not matching, naming the file and the field), Device
// (no opencv-dnn in this build).
std::shared_ptr<const OnnxModel> load_onnx_model(const std::filesystem::path& model,
                                                 const std::filesystem::path& description, int threads);

}  // namespace taconite::onnx
