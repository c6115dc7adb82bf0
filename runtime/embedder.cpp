// IrEmbedder: one Model and one Session behind the single-threaded convenience API.
#include "taconite/embedder.hpp"

#include "common/failure.hpp"
#include "common/guarded_call.hpp"

namespace taconite {

IrEmbedder::IrEmbedder(std::shared_ptr<const Model> model, Session session)
    : model_(std::move(model)), session_(std::move(session)) {}
IrEmbedder::IrEmbedder(IrEmbedder&&) noexcept = default;
IrEmbedder& IrEmbedder::operator=(IrEmbedder&&) noexcept = default;
IrEmbedder::~IrEmbedder() = default;

Result<IrEmbedder> IrEmbedder::load(const std::filesystem::path& bundle_dir, const LoadOptions& options) {
  Result<std::shared_ptr<const Model>> model = Model::load(bundle_dir, options);
  if (!model) return model.error();
  Result<Session> session = Session::create(model.value());
  if (!session) return session.error();
  return IrEmbedder(std::move(model).value(), std::move(session).value());
}

Result<Embedding> IrEmbedder::embed(const FaceChw& face) { return session_.embed(face); }
Result<std::vector<Embedding>> IrEmbedder::embed_batch(std::span<const FaceChw> faces) {
  return session_.embed_batch(faces);
}

InputDims IrEmbedder::input_dims() const { return model_ ? model_->input_dims() : InputDims{}; }
int IrEmbedder::embed_dim() const { return model_ ? model_->embed_dim() : 0; }
std::string IrEmbedder::model() const { return model_ ? model_->name() : std::string(); }
std::string IrEmbedder::backend() const { return model_ ? model_->backend() : std::string(); }
std::string IrEmbedder::backend_reason() const { return model_ ? model_->backend_reason() : std::string(); }
std::string IrEmbedder::precision() const { return model_ ? model_->precision() : std::string(); }
const std::vector<std::string>& IrEmbedder::diagnostics() const {
  static const std::vector<std::string> none;
  return model_ ? model_->diagnostics() : none;
}

}  // namespace taconite
