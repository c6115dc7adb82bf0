// taconite-session-bench: what sessions of one Model cost and give on the `cpu` backend.
//   1. resident memory (VmRSS) after the load, with 1 session and with 4 sessions (each has run one
//      face, so its networks and activations exist): the weights are the model's, held once;
//   2. faces/s embedding FACES faces one at a time (and in batches of 8) by one session with 2
//      threads against two sessions with 1 thread each, run from two threads at once.
// One JSON line per measurement on stdout.
//   taconite-session-bench BUNDLE [FACES=64] [REPEATS=3]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "taconite/inspect.hpp"
#include "taconite/model.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double vm_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
  return 0.0;
}

std::shared_ptr<const taconite::Model> load(const char* bundle, int threads) {
  taconite::LoadOptions options;
  options.backend = "cpu";
  options.threads = threads;
  auto model = taconite::Model::load(bundle, options);
  if (!model) {
    std::fprintf(stderr, "load: %s\n", model.error().message.c_str());
    std::exit(1);
  }
  return model.value();
}

taconite::Session session_of(const std::shared_ptr<const taconite::Model>& model) {
  auto session = taconite::Session::create(model);
  if (!session) {
    std::fprintf(stderr, "session: %s\n", session.error().message.c_str());
    std::exit(1);
  }
  return std::move(session).value();
}

// Embeds `faces` copies of `face`, `batch` at a time; exits on an error.
void embed_many(taconite::Session& session, const taconite::FaceChw& face, int faces, int batch) {
  const std::vector<taconite::FaceChw> group(static_cast<std::size_t>(batch), face);
  for (int done = 0; done < faces; done += batch) {
    const bool ok = batch == 1 ? session.embed(face).ok() : session.embed_batch(group).ok();
    if (!ok) {
      std::fprintf(stderr, "embed failed\n");
      std::exit(1);
    }
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s BUNDLE [FACES=64] [REPEATS=3]\n", argv[0]);
    return 2;
  }
  const int faces = argc > 2 ? std::clamp(std::atoi(argv[2]), 16, 100000) / 16 * 16 : 64;
  const int repeats = argc > 3 ? std::clamp(std::atoi(argv[3]), 1, 100) : 3;

  // 1. Memory of sessions on one model.
  {
    const double base = vm_rss_mib();
    auto model = load(argv[1], 1);
    const double loaded = vm_rss_mib();
    const std::vector<float> chw = taconite::inspect::reference_f32(*model, "ref.input_chw");
    const taconite::FaceChw face{chw, 3, model->input_dims().height, model->input_dims().width};
    std::vector<taconite::Session> sessions;
    double after[5] = {loaded, 0, 0, 0, 0};
    for (int n = 1; n <= 4; ++n) {
      sessions.push_back(session_of(model));
      embed_many(sessions.back(), face, 1, 1);
      after[n] = vm_rss_mib();
    }
    std::printf("{\"what\":\"rss\",\"precision\":\"%s\",\"process_mib\":%.1f,\"model_mib\":%.1f,"
                "\"one_session_mib\":%.1f,\"four_sessions_mib\":%.1f,\"per_extra_session_mib\":%.1f}\n",
                model->precision().c_str(), base, loaded - base, after[1] - loaded, after[4] - loaded,
                (after[4] - after[1]) / 3.0);
  }

  // 2. Throughput: one session with 2 threads against two sessions with 1 thread each.
  auto two_threads = load(argv[1], 2);
  auto one_thread = load(argv[1], 1);
  const std::vector<float> chw = taconite::inspect::reference_f32(*two_threads, "ref.input_chw");
  const taconite::FaceChw face{chw, 3, two_threads->input_dims().height, two_threads->input_dims().width};
  taconite::Session wide = session_of(two_threads);
  taconite::Session left = session_of(one_thread), right = session_of(one_thread);
  for (int batch : {1, 8}) {
    embed_many(wide, face, batch, batch);  // warm: networks of this batch size built
    embed_many(left, face, batch, batch);
    embed_many(right, face, batch, batch);
    std::vector<double> one_session, two_sessions;
    for (int r = 0; r < repeats; ++r) {  // alternating, so drifting machine load hits both alike
      auto start = Clock::now();
      embed_many(wide, face, faces, batch);
      one_session.push_back(faces / std::chrono::duration<double>(Clock::now() - start).count());
      start = Clock::now();
      std::thread other([&] { embed_many(right, face, faces / 2, batch); });
      embed_many(left, face, faces / 2, batch);
      other.join();
      two_sessions.push_back(faces / std::chrono::duration<double>(Clock::now() - start).count());
    }
    std::printf("{\"what\":\"faces_per_s\",\"batch\":%d,\"faces\":%d,\"one_session_2_threads\":%.2f,"
                "\"two_sessions_1_thread\":%.2f,\"ratio\":%.3f}\n",
                batch, faces, median(one_session), median(two_sessions), median(two_sessions) / median(one_session));
  }
  return 0;
}
