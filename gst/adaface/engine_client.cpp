#include "engine_client.hpp"

#include <condition_variable>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "shared_engine.hpp"

namespace taconite::gst {

namespace {

// The shared engine's view of a loaded Model: one Session, which only one worker thread of the
// shared engine uses; another_session() gives the next worker its own Session of the same Model.
class ModelEngineClient final : public EngineClient {
 public:
  ModelEngineClient(std::shared_ptr<const Model> model, Session session)
      : model_(std::move(model)), session_(std::move(session)) {
    info_.model = model_->name();
    info_.backend = model_->backend();
    info_.backend_reason = model_->backend_reason();
    info_.precision = model_->precision();
    info_.embed_dim = model_->embed_dim();
    info_.input_width = model_->input_dims().width;
    info_.input_height = model_->input_dims().height;
    info_.preprocessing = model_->preprocessing();
    info_.diagnostics = model_->diagnostics();
  }

  const EngineInfo& info() const override { return info_; }

  Result<std::vector<Embedding>> embed(std::span<const FaceChw> faces) override {
    if (faces.size() == 1) {
      Result<Embedding> one = session_.embed(faces[0]);
      if (!one) return one.error();
      std::vector<Embedding> out;
      out.push_back(std::move(one).value());
      return out;
    }
    return session_.embed_batch(faces);
  }

  Result<std::unique_ptr<EngineClient>> another_session() const override {
    Result<Session> session = Session::create(model_);
    if (!session) return session.error();
    return std::unique_ptr<EngineClient>(std::make_unique<ModelEngineClient>(model_, std::move(session).value()));
  }

 private:
  std::shared_ptr<const Model> model_;
  Session session_;
  EngineInfo info_;
};

std::mutex opener_lock;
unsigned long long opener_generation = 0;  // a new opener never reuses engines of an older one
EngineOpener& installed_opener() {
  static EngineOpener opener;
  return opener;
}

// One load in progress: every request for its key waits for it and shares its engine or error.
struct Load {
  bool done = false;
  std::shared_ptr<SharedEngine> engine;
  std::optional<Error> error;
};

struct Entry {
  std::weak_ptr<SharedEngine> engine;
  std::shared_ptr<Load> loading;
};

// The live shared engines by (canonical bundle, backend, opener generation): under the requested
// backend and under the one that actually runs, so `auto` and the backend it picked share one
// engine. Loads run outside the lock (one slow load does not hold up other bundles').
std::mutex registry_lock;
std::condition_variable load_finished;
std::map<std::string, Entry>& registry() {
  static std::map<std::string, Entry> engines;
  return engines;
}

Result<std::unique_ptr<EngineClient>> open_model_engine(const EngineRequest& request) {
  LoadOptions options;
  options.backend = request.backend;
  options.threads = request.threads;
  options.precision = request.precision;
  options.model_proc = request.model_proc;
  Result<std::shared_ptr<const Model>> model = Model::load(request.bundle, options);
  if (!model) return model.error();
  Result<Session> session = Session::create(model.value());
  if (!session) return session.error();
  return std::unique_ptr<EngineClient>(
      std::make_unique<ModelEngineClient>(std::move(model).value(), std::move(session).value()));
}

Result<std::string> canonical_bundle(const std::string& bundle) {
  std::error_code error;
  const std::filesystem::path path = std::filesystem::canonical(bundle, error);
  if (error) return Error{ErrorKind::Io, "cannot resolve the bundle path '" + bundle + "': " + error.message()};
  return path.string();
}

// The model's identity in the registry: its canonical path, and its description's when one is given
// (one ONNX file with two descriptions is two models).
Result<std::string> canonical_model(const EngineRequest& request) {
  Result<std::string> model = canonical_bundle(request.bundle);
  if (!model || request.model_proc.empty()) return model;
  std::error_code error;
  const std::filesystem::path proc = std::filesystem::canonical(request.model_proc, error);
  if (error)
    return Error{ErrorKind::Io, "cannot resolve the model description path '" + request.model_proc + "': " +
                                    error.message()};
  return model.value() + "\nmodel-proc " + proc.string();
}

std::string registry_key(const std::string& bundle, const std::string& backend, unsigned long long generation) {
  return bundle + '\n' + backend + '\n' + std::to_string(generation);
}

std::shared_ptr<SharedEngine> live_locked(const std::string& key) {
  auto it = registry().find(key);
  return it == registry().end() ? nullptr : it->second.engine.lock();
}

// The live engine serving `backend` for the bundle. `auto` takes the engine an earlier `auto`
// load resolved to, else one of the backend auto tries first (auto would pick that one).
std::shared_ptr<SharedEngine> find_locked(const std::string& bundle, const std::string& backend,
                                          unsigned long long generation) {
  std::shared_ptr<SharedEngine> engine = live_locked(registry_key(bundle, backend, generation));
  if (engine || backend != kBackendAuto) return engine;
  const std::vector<std::string> preferred = compiled_backends();
  return preferred.empty() ? nullptr : live_locked(registry_key(bundle, preferred.front(), generation));
}

std::unique_ptr<EngineClient> client_of(std::shared_ptr<SharedEngine> engine, const EngineRequest& request) {
  std::string note;
  if (const int loaded = shared_engine_threads(*engine); loaded != request.threads)
    note = "threads=" + std::to_string(request.threads) + " is not used: the shared engine for this bundle and backend " +
           "was loaded with threads=" + std::to_string(loaded) + " by another element (0 = runtime default)";
  if (const int loaded = shared_engine_sessions(*engine); loaded != request.sessions)
    note += (note.empty() ? "" : "; ") + ("sessions=" + std::to_string(request.sessions)) +
            " is not used: the shared engine for this bundle and backend was loaded with sessions=" +
            std::to_string(loaded) + " by another element";
  return make_shared_client(std::move(engine), std::move(note));
}

unsigned long long current_generation(EngineOpener* opener) {
  std::lock_guard<std::mutex> guard(opener_lock);
  if (opener) *opener = installed_opener();
  return opener_generation;
}

}  // namespace

Result<std::unique_ptr<EngineClient>> EngineClient::another_session() const {
  return Error{ErrorKind::Device, "this engine cannot run more than one session"};
}

const std::string& EngineClient::sharing_note() const {
  static const std::string none;
  return none;
}

std::shared_ptr<SharedEngine> find_shared_engine(const EngineRequest& request) {
  const unsigned long long generation = current_generation(nullptr);
  Result<std::string> bundle = canonical_model(request);
  if (!bundle) return nullptr;
  std::lock_guard<std::mutex> guard(registry_lock);
  return find_locked(bundle.value(), request.backend, generation);
}

Result<std::unique_ptr<EngineClient>> open_engine_client(const EngineRequest& request) {
  if (request.sessions < 1 || request.sessions > kMaxEngineSessions)
    return Error{ErrorKind::Input, "sessions=" + std::to_string(request.sessions) + " is outside 1.." +
                                       std::to_string(kMaxEngineSessions)};
  EngineOpener opener;
  const unsigned long long generation = current_generation(&opener);
  Result<std::string> canonical = canonical_model(request);
  if (!canonical) return canonical.error();
  const std::string& bundle = canonical.value();
  const std::string key = registry_key(bundle, request.backend, generation);

  std::unique_lock<std::mutex> guard(registry_lock);
  auto& engines = registry();
  for (auto it = engines.begin(); it != engines.end();)
    it = it->second.engine.expired() && !it->second.loading ? engines.erase(it) : std::next(it);
  while (!find_locked(bundle, request.backend, generation) && engines[key].loading) {
    const std::shared_ptr<Load> load = engines[key].loading;
    load_finished.wait(guard, [&] { return load->done; });
    if (load->error) return *load->error;
    if (load->engine) return client_of(load->engine, request);
  }
  if (std::shared_ptr<SharedEngine> engine = find_locked(bundle, request.backend, generation))
    return client_of(std::move(engine), request);

  const auto load = std::make_shared<Load>();
  engines[key].loading = load;
  guard.unlock();
  std::shared_ptr<SharedEngine> loaded;
  std::string backend;  // the one actually running
  try {
    Result<std::unique_ptr<EngineClient>> inner = opener ? opener(request) : open_model_engine(request);
    if (inner) {
      backend = inner.value()->info().backend;
      loaded = make_shared_engine(std::move(inner).value(), request.threads, request.sessions);
    } else {
      load->error = inner.error();
    }
  } catch (const std::exception& e) {
    load->error = Error{ErrorKind::Device, std::string("loading the engine failed with an exception: ") + e.what()};
  } catch (...) {  // the requests waiting for this load must never wait forever
    load->error = Error{ErrorKind::Device, "loading the engine failed with an unknown exception"};
  }

  guard.lock();
  std::shared_ptr<SharedEngine> duplicate;
  if (loaded) {
    // Another request may have loaded the backend this one resolved to meanwhile: keep one engine.
    const std::string resolved = registry_key(bundle, backend, generation);
    if (std::shared_ptr<SharedEngine> live = live_locked(resolved)) duplicate = std::exchange(loaded, live);
    engines[resolved].engine = loaded;
    engines[key].engine = loaded;
    load->engine = loaded;
  }
  load->done = true;
  engines[key].loading.reset();
  load_finished.notify_all();
  guard.unlock();
  duplicate.reset();  // its worker is joined outside the registry lock
  if (load->error) return *load->error;
  return client_of(std::move(loaded), request);
}

void set_engine_opener(EngineOpener opener) {
  std::lock_guard<std::mutex> guard(opener_lock);
  installed_opener() = std::move(opener);
  ++opener_generation;
}

}  // namespace taconite::gst
