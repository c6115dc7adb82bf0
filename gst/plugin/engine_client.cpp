#include "engine_client.hpp"

#include <mutex>
#include <utility>

namespace taconite::gst {

namespace {

// One IrEmbedder owned by the client; only the element's streaming thread calls embed().
class PrivateEngineClient final : public EngineClient {
 public:
  explicit PrivateEngineClient(IrEmbedder embedder) : embedder_(std::move(embedder)) {
    info_.model = embedder_.model();
    info_.backend = embedder_.backend();
    info_.backend_reason = embedder_.backend_reason();
    info_.embed_dim = embedder_.embed_dim();
    info_.input_width = embedder_.input_dims().width;
    info_.input_height = embedder_.input_dims().height;
    info_.diagnostics = embedder_.diagnostics();
  }

  const EngineInfo& info() const override { return info_; }

  Result<std::vector<Embedding>> embed(std::span<const FaceChw> faces) override {
    if (faces.size() == 1) {
      Result<Embedding> one = embedder_.embed(faces[0]);
      if (!one) return one.error();
      std::vector<Embedding> out;
      out.push_back(std::move(one).value());
      return out;
    }
    return embedder_.embed_batch(faces);
  }

 private:
  IrEmbedder embedder_;
  EngineInfo info_;
};

std::mutex opener_lock;
EngineOpener& installed_opener() {
  static EngineOpener opener;
  return opener;
}

Result<std::unique_ptr<EngineClient>> open_private_engine(const EngineRequest& request) {
  LoadOptions options;
  options.backend = request.backend;
  options.threads = request.threads;
  Result<IrEmbedder> loaded = IrEmbedder::load(request.bundle, options);
  if (!loaded) return loaded.error();
  return std::unique_ptr<EngineClient>(std::make_unique<PrivateEngineClient>(std::move(loaded).value()));
}

}  // namespace

Result<std::unique_ptr<EngineClient>> open_engine_client(const EngineRequest& request) {
  EngineOpener opener;
  {
    std::lock_guard<std::mutex> guard(opener_lock);
    opener = installed_opener();
  }
  return opener ? opener(request) : open_private_engine(request);
}

void set_engine_opener(EngineOpener opener) {
  std::lock_guard<std::mutex> guard(opener_lock);
  installed_opener() = std::move(opener);
}

}  // namespace taconite::gst
