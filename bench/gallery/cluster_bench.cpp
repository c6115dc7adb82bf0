// Unknown-face clustering benchmark (issue 24 target: 10 k faces in <= 5 s on 2 cores):
// taconite::gallery::cluster_unknown_faces (the code `taconite-gallery unknowns`, `name` and
// `forget` cluster with) on synthetic faces: P people (random 512-d unit directions) x V views
// each (the direction plus Gaussian noise, cosine ~0.65 between two views of one person, like
// tracks of one person; ~0 between people). Reports the median, min and max of R runs of the
// clustering alone, the clusters found against the P people, the CPU and the dot kernels used.
//
//   cluster-bench [--people 1000] [--views 10] [--runs 5] [--threshold 0.5]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "simd_dot.hpp"
#include "unknown_clusters.hpp"

namespace {

using namespace taconite::gallery;
using Clock = std::chrono::steady_clock;
constexpr std::size_t kDim = 512;

std::vector<float> unit(std::vector<float> v) {
  double sum = 0.0;
  for (float x : v) sum += static_cast<double>(x) * x;
  for (float& x : v) x = static_cast<float>(x / std::sqrt(sum));
  return v;
}

// "model name" and whether the CPU has AVX-512F / AVX2, from /proc/cpuinfo.
std::string cpu() {
  std::ifstream info("/proc/cpuinfo");
  std::string model, flags;
  for (std::string line; std::getline(info, line);) {
    if (model.empty() && line.rfind("model name", 0) == 0) model = line.substr(line.find(':') + 2);
    if (flags.empty() && line.rfind("flags", 0) == 0) flags = line + " ";
  }
  const char* isa = flags.find(" avx512f ") != std::string::npos ? "AVX-512F"
                    : flags.find(" avx2 ") != std::string::npos  ? "AVX2"
                                                                 : "no AVX2";
  return model + " (" + isa + "; dot kernels " + dot_kernels_isa() + ")";
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t people = 1000, views = 10, runs = 5;
  double threshold = kDefaultClusterThreshold;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--people")) people = std::stoul(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--views")) views = std::stoul(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--runs")) runs = std::max<std::size_t>(1, std::stoul(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--threshold")) threshold = std::stod(argv[i + 1]);
  }
  std::mt19937 rng(2024);
  std::normal_distribution<float> normal;
  // Noise of 0.73 per unit length: two views of one person at cosine 1 / (1 + 0.73^2) ~ 0.65.
  const float noise = 0.73f / std::sqrt(static_cast<float>(kDim));
  std::vector<UnknownFaceRow> faces;
  for (std::size_t p = 0; p < people; ++p) {
    std::vector<float> person(kDim);
    for (float& x : person) x = normal(rng);
    person = unit(person);
    for (std::size_t v = 0; v < views; ++v) {
      UnknownFaceRow f;
      f.embedding = person;
      for (float& x : f.embedding) x += noise * normal(rng);
      f.embedding = unit(f.embedding);
      faces.push_back(std::move(f));
    }
  }
  std::shuffle(faces.begin(), faces.end(), rng);  // tracks of many people arrive interleaved
  for (std::size_t i = 0; i < faces.size(); ++i) faces[i].id = static_cast<std::int64_t>(i + 1);

  std::vector<double> ms;
  std::size_t clusters = 0;
  for (std::size_t r = 0; r < runs; ++r) {
    const Clock::time_point start = Clock::now();
    auto found = cluster_unknown_faces(faces, threshold);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (!found) {
      std::fprintf(stderr, "cluster-bench: %s\n", found.error().message.c_str());
      return 1;
    }
    clusters = found.value().size();
  }
  std::sort(ms.begin(), ms.end());
  std::printf("| %zu faces (%zu people x %zu views), threshold %.2f | %.0f ms median (min %.0f, max %.0f, %zu runs) "
              "| %zu clusters for %zu people | %s |\n",
              faces.size(), people, views, threshold, ms[ms.size() / 2], ms.front(), ms.back(), runs, clusters,
              people, cpu().c_str());
  return 0;
}
