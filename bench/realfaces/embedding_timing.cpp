#include "embedding_timing.hpp"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "photo_faces.hpp"

namespace taconite::realfaces {

namespace {

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// One model's session and its faces, normalised for it once, outside the timed part.
struct Runner {
  Session session;
  std::vector<std::vector<float>> inputs;
  std::vector<FaceChw> faces;

  // Embeds every face, `batch` a call; the first error.
  std::optional<Error> run(int batch) {
    for (std::size_t at = 0; at < faces.size(); at += static_cast<std::size_t>(batch)) {
      if (batch == 1) {
        if (auto e = session.embed(faces[at]); !e) return e.error();
      } else if (auto e = session.embed_batch(std::span<const FaceChw>(faces).subspan(at, static_cast<std::size_t>(batch)));
                 !e) {
        return e.error();
      }
    }
    return std::nullopt;
  }
};

}  // namespace

Result<std::vector<FaceTiming>> time_models(const std::vector<TimedModel>& models,
                                            const std::vector<cv::Mat>& aligned_rgb, int rounds) {
  constexpr int kBatches[] = {1, 8};
  if (aligned_rgb.empty() || aligned_rgb.size() % 8 || rounds < 1)
    return Error{ErrorKind::Input, "timing needs a multiple of 8 faces and at least one round"};
  std::vector<Runner> runners;
  for (const TimedModel& m : models) {
    Result<Session> session = Session::create(m.model);
    if (!session) return Error{session.error().kind, m.label + ": " + session.error().message};
    Runner r{std::move(session).value(), {}, {}};
    const Preprocessing p = m.model->preprocessing();
    for (const cv::Mat& face : aligned_rgb) r.inputs.push_back(model_input(face, p));
    for (const std::vector<float>& input : r.inputs) r.faces.push_back({input, 3, p.height, p.width});
    for (int batch : kBatches)  // warm-up: each batch size's network built
      if (std::optional<Error> e = r.run(batch)) return Error{e->kind, m.label + ": " + e->message};
    runners.push_back(std::move(r));
  }
  // wall[model][batch], cpu[model][batch]: one entry per round
  std::vector<std::vector<std::vector<double>>> wall(models.size(), std::vector<std::vector<double>>(2)),
      cpu(models.size(), std::vector<std::vector<double>>(2));
  const double faces = static_cast<double>(aligned_rgb.size());
  for (int round = 0; round < rounds; ++round)
    for (std::size_t m = 0; m < runners.size(); ++m)
      for (std::size_t b = 0; b < 2; ++b) {
        const double cpu_start = cpu_seconds();
        const auto start = std::chrono::steady_clock::now();
        if (std::optional<Error> e = runners[m].run(kBatches[b]))
          return Error{e->kind, models[m].label + ": " + e->message};
        wall[m][b].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() /
                             faces);
        cpu[m][b].push_back((cpu_seconds() - cpu_start) * 1000.0 / faces);
      }
  std::vector<FaceTiming> timings;
  for (std::size_t m = 0; m < models.size(); ++m)
    for (std::size_t b = 0; b < 2; ++b)
      timings.push_back({models[m].label, models[m].model->backend(), kBatches[b], median(wall[m][b]), median(cpu[m][b])});
  return timings;
}

}  // namespace taconite::realfaces
