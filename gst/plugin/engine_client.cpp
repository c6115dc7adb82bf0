#include "engine_client.hpp"

#include <map>
#include <mutex>
#include <utility>

#include "shared_engine.hpp"

namespace taconite::gst {

namespace {

// One IrEmbedder owned by the client; only the shared engine's worker thread calls embed().
class PrivateEngineClient final : public EngineClient {
 public:
  explicit PrivateEngineClient(IrEmbedder embedder) : embedder_(std::move(embedder)) {
    info_.model = embedder_.model();
    info_.backend = embedder_.backend();
    info_.backend_reason = embedder_.backend_reason();
    info_.precision = embedder_.precision();
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
unsigned long long opener_generation = 0;  // a new opener never reuses engines of an older one
EngineOpener& installed_opener() {
  static EngineOpener opener;
  return opener;
}

// The live shared engines by (bundle, backend, opener generation); held (and loads done) under
// registry_lock so two elements starting together load one engine.
std::mutex registry_lock;
std::map<std::string, std::weak_ptr<SharedEngine>>& registry() {
  static std::map<std::string, std::weak_ptr<SharedEngine>> engines;
  return engines;
}

Result<std::unique_ptr<EngineClient>> open_private_engine(const EngineRequest& request) {
  LoadOptions options;
  options.backend = request.backend;
  options.threads = request.threads;
  Result<IrEmbedder> loaded = IrEmbedder::load(request.bundle, options);
  if (!loaded) return loaded.error();
  return std::unique_ptr<EngineClient>(std::make_unique<PrivateEngineClient>(std::move(loaded).value()));
}

std::string registry_key(const EngineRequest& request, unsigned long long generation) {
  return request.bundle + '\n' + request.backend + '\n' + std::to_string(generation);
}

}  // namespace

std::shared_ptr<SharedEngine> find_shared_engine(const EngineRequest& request) {
  unsigned long long generation = 0;
  {
    std::lock_guard<std::mutex> guard(opener_lock);
    generation = opener_generation;
  }
  std::lock_guard<std::mutex> guard(registry_lock);
  auto it = registry().find(registry_key(request, generation));
  return it == registry().end() ? nullptr : it->second.lock();
}

Result<std::unique_ptr<EngineClient>> open_engine_client(const EngineRequest& request) {
  EngineOpener opener;
  unsigned long long generation = 0;
  {
    std::lock_guard<std::mutex> guard(opener_lock);
    opener = installed_opener();
    generation = opener_generation;
  }
  const std::string key = registry_key(request, generation);
  std::lock_guard<std::mutex> guard(registry_lock);
  auto& engines = registry();
  for (auto it = engines.begin(); it != engines.end();) it = it->second.expired() ? engines.erase(it) : std::next(it);
  if (auto alive = engines.find(key); alive != engines.end())
    if (std::shared_ptr<SharedEngine> engine = alive->second.lock()) return make_shared_client(std::move(engine));

  Result<std::unique_ptr<EngineClient>> inner = opener ? opener(request) : open_private_engine(request);
  if (!inner) return inner.error();
  std::shared_ptr<SharedEngine> engine = make_shared_engine(std::move(inner).value());
  engines[key] = engine;
  return make_shared_client(std::move(engine));
}

void set_engine_opener(EngineOpener opener) {
  std::lock_guard<std::mutex> guard(opener_lock);
  installed_opener() = std::move(opener);
  ++opener_generation;
}

}  // namespace taconite::gst
