// taconite::IrEmbedder: one Model and one Session in one object, for callers with a single thread
// (the CLI, scripts, the first program). Everything here forwards to taconite/model.hpp, whose
// contracts apply; several threads should share one Model and hold a Session each instead.
//
// An IrEmbedder is movable, not copyable, and NOT safe for concurrent calls. On a moved-from
// IrEmbedder the embed calls return an Input error and the accessors return empty values.
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "taconite/error.hpp"
#include "taconite/model.hpp"

namespace taconite {

class TACONITE_API IrEmbedder {
 public:
  // Model::load then Session::create; errors as those.
  static Result<IrEmbedder> load(const std::filesystem::path& bundle_dir, const LoadOptions& options = {});

  IrEmbedder(IrEmbedder&&) noexcept;
  IrEmbedder& operator=(IrEmbedder&&) noexcept;
  IrEmbedder(const IrEmbedder&) = delete;
  IrEmbedder& operator=(const IrEmbedder&) = delete;
  ~IrEmbedder();

  Result<Embedding> embed(const FaceChw& face);                                // Session::embed
  Result<std::vector<Embedding>> embed_batch(std::span<const FaceChw> faces);  // Session::embed_batch

  InputDims input_dims() const;         // Model::input_dims
  int embed_dim() const;                // Model::embed_dim
  std::string model() const;            // Model::name: the bundle's `param model`, or ""
  std::string backend() const;          // Model::backend
  std::string backend_reason() const;   // Model::backend_reason
  std::string precision() const;        // Model::precision
  const std::vector<std::string>& diagnostics() const;  // Model::diagnostics

  // The model and session inside (nullptr / an empty session after a move), e.g. to add sessions
  // for other threads or for taconite/inspect.hpp.
  const std::shared_ptr<const Model>& shared_model() const noexcept { return model_; }
  Session& session() noexcept { return session_; }

 private:
  IrEmbedder(std::shared_ptr<const Model> model, Session session);
  std::shared_ptr<const Model> model_;
  Session session_;
};

}  // namespace taconite
