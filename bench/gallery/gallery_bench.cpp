// Gallery search benchmark: exact (int8 scan + float re-score) vs approximate (HNSW) search through
// taconite::gallery::GalleryIndex on N random unit vectors (one identity each), FAISS's own
// IndexFlatIP::search as the peer (first 20 probes), and the load time of a real SQLite gallery. Probes are noisy copies of enrolled vectors (cosine ~0.6 to their
// source, like a new photo of an enrolled person); recall@1 = share of probes whose approximate
// top-1 equals the exact top-1.
//
//   gallery-bench [--sizes 10000,100000,1000000] [--queries 200] [--load-sizes 10000,100000]
//                 [--hnsw-m 32] [--ef-construction 64] [--ef-search 128,256] [--dir DIR]
//                 (--ef-search: HNSW beams queried on one built index)
//                 [--approximate-max N]  (no HNSW build above N identities: bounds the run time)
//   gallery-bench --fill LOCATION --fill-count N   (a new gallery, SQLite file or PostgreSQL
//                 database, of N random templates, one identity each, 10 000 per transaction;
//                 the same seed: the same data wherever it goes)
//   gallery-bench --load LOCATION [--passes 5]     (what taconiteidentify's start does: open the
//                 store, read every template, build the exact index; median of the passes, and
//                 the process's RSS growth over the first)
// One line per measurement (markdown table rows) on stdout.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <faiss/IndexFlat.h>

#include "gallery_index.hpp"
#include "gallery_store.hpp"
#include "simd_dot.hpp"

namespace {

using namespace taconite::gallery;
using Clock = std::chrono::steady_clock;
constexpr int kDim = 512;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

long rss_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return 0;
}

std::vector<std::size_t> parse_list(const std::string& text) {
  std::vector<std::size_t> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(std::stoul(item));
  return out;
}

void normalise(float* v) {
  double sum = 0;
  for (int i = 0; i < kDim; ++i) sum += double(v[i]) * v[i];
  const float scale = float(1.0 / std::sqrt(sum));
  for (int i = 0; i < kDim; ++i) v[i] *= scale;
}

std::vector<float> random_units(std::size_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::vector<float> v(n * kDim);
  for (float& x : v) x = normal(rng);
  for (std::size_t i = 0; i < n; ++i) normalise(&v[i * kDim]);
  return v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// CPU time of the calling thread: one query runs on one thread, so this is its cost without the
// time other processes of a shared machine took from it.
double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

struct Timed {
  double median_ms = 0, median_cpu_ms = 0;
  std::vector<std::int64_t> top1;
};

// Times `top1_of` (one probe in, the top-1 identity out; -1 for none) on the first `queries` probes.
template <typename TopOne>
Timed time_queries(const std::vector<float>& probes, std::size_t queries, TopOne top1_of) {
  Timed t;
  std::vector<double> times, cpu;
  for (std::size_t q = 0; q < queries; ++q) {
    const auto start = Clock::now();
    const double cpu_start = thread_cpu_ms();
    const std::int64_t top1 = top1_of(&probes[q * kDim]);
    cpu.push_back(thread_cpu_ms() - cpu_start);
    times.push_back(ms_since(start));
    t.top1.push_back(top1);
  }
  t.median_ms = median(times);
  t.median_cpu_ms = median(cpu);
  return t;
}

Timed query_all(const GalleryIndex& index, const std::vector<float>& probes, std::size_t queries) {
  return time_queries(probes, queries, [&](const float* probe) {
    const std::vector<IdentityMatch> m = index.search({probe, kDim}, 1);
    return m.empty() ? std::int64_t{-1} : m[0].identity_id;
  });
}

// The peer: FAISS's own IndexFlatIP::search on the same vectors and probes (Debian's build).
// recall@1 here is agreement with our exact search: it must be 1.
void faiss_flat_bench(std::size_t n, const std::vector<float>& gallery, const std::vector<float>& probes,
                      std::size_t queries, const std::vector<std::int64_t>& exact_top1) {
  faiss::IndexFlatIP flat(kDim);
  flat.add(static_cast<faiss::Index::idx_t>(n), gallery.data());
  const Timed t = time_queries(probes, queries, [&](const float* probe) {
    float similarity = 0;
    faiss::Index::idx_t label = -1;
    flat.search(1, probe, 1, &similarity, &label);
    return std::int64_t{label};
  });
  std::size_t agree = 0;
  for (std::size_t q = 0; q < queries; ++q) agree += t.top1[q] == exact_top1[q];
  std::printf("| %zu | FAISS IndexFlatIP::search (peer) | | %.3f | %.3f | %.3f | |\n", n, t.median_ms,
              t.median_cpu_ms, double(agree) / double(queries));
  std::fflush(stdout);
}

void search_bench(std::size_t n, std::size_t queries, const IndexOptions& hnsw_options,
                  const std::vector<std::size_t>& ef_searches, std::size_t approximate_max) {
  std::mt19937 rng(static_cast<unsigned>(n));
  const std::vector<float> gallery = random_units(n, rng);
  std::vector<std::int64_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) ids[i] = static_cast<std::int64_t>(i);
  // Probes: 0.6 * an enrolled vector + 0.8 * a random unit vector, normalised.
  std::vector<float> probes = random_units(queries, rng);
  std::uniform_int_distribution<std::size_t> pick(0, n - 1);
  for (std::size_t q = 0; q < queries; ++q) {
    const float* source = &gallery[pick(rng) * kDim];
    for (int i = 0; i < kDim; ++i) probes[q * kDim + i] = 0.6f * source[i] + 0.8f * probes[q * kDim + i];
    normalise(&probes[q * kDim]);
  }

  IndexOptions exact_options;
  exact_options.approximate_above = n;  // never approximate
  long before = rss_kib();
  auto start = Clock::now();
  auto exact = GalleryIndex::build(kDim, gallery, ids, exact_options);
  const double exact_build_ms = ms_since(start);
  const long exact_kib = rss_kib() - before;
  if (!exact) {
    std::printf("exact build failed: %s\n", exact.error().message.c_str());
    return;
  }
  const Timed e = query_all(exact.value(), probes, queries);
  std::printf("| %zu | exact (int8 scan + float re-score) | %.0f | %.3f | %.3f | 1 (reference) | %.0f |\n", n,
              exact_build_ms, e.median_ms, e.median_cpu_ms, exact_kib * 1024.0 / double(n));
  std::fflush(stdout);
  faiss_flat_bench(n, gallery, probes, std::min<std::size_t>(queries, 20), e.top1);

  if (n > approximate_max) {
    std::printf("| %zu | HNSW | not built (more than --approximate-max %zu) | | | | |\n", n, approximate_max);
    return;
  }
  IndexOptions approx = hnsw_options;
  approx.approximate_above = 0;
  before = rss_kib();
  start = Clock::now();
  auto hnsw = GalleryIndex::build(kDim, gallery, ids, approx);
  const double hnsw_build_ms = ms_since(start);
  const long hnsw_kib = rss_kib() - before;
  if (!hnsw) {
    std::printf("HNSW build failed: %s\n", hnsw.error().message.c_str());
    return;
  }
  for (std::size_t ef : ef_searches) {
    hnsw.value().set_ef_search(static_cast<int>(ef));
    const Timed h = query_all(hnsw.value(), probes, queries);
    std::size_t agree = 0;
    for (std::size_t q = 0; q < queries; ++q) agree += h.top1[q] == e.top1[q];
    std::printf("| %zu | HNSW M=%d efC=%d efS=%zu | %.0f | %.3f | %.3f | %.3f | %.0f |\n", n, approx.hnsw_m,
                approx.hnsw_ef_construction, ef, hnsw_build_ms, h.median_ms, h.median_cpu_ms,
                double(agree) / double(queries), hnsw_kib * 1024.0 / double(n));
    std::fflush(stdout);
  }
}

// A real gallery file of n templates (batches of 10 000 per transaction), then open + index load.
void load_bench(std::size_t n, const std::filesystem::path& dir, const IndexOptions& hnsw_options) {
  const std::filesystem::path file = dir / ("bench-" + std::to_string(n) + ".db");
  for (const char* suffix : {"", "-wal", "-shm", ".hnsw"})
    std::filesystem::remove(file.string() + suffix);
  std::mt19937 rng(7);
  auto store = GalleryStore::create(file, {std::string(64, '0'), "bench"}, kDim);
  if (!store) {
    std::printf("create failed: %s\n", store.error().message.c_str());
    return;
  }
  const auto fill_start = Clock::now();
  for (std::size_t done = 0; done < n;) {
    const std::size_t count = std::min<std::size_t>(10000, n - done);
    const std::vector<float> units = random_units(count, rng);
    for (std::size_t i = 0; i < count; ++i) {
      std::vector<NewTemplate> t(1);
      t[0].embedding.assign(&units[i * kDim], &units[(i + 1) * kDim]);
      t[0].source = "bench";
      if (!store.value().enroll("id" + std::to_string(done + i), "", t)) return;
    }
    done += count;
  }
  const double fill_ms = ms_since(fill_start);
  for (bool approximate : {false, true}) {
    IndexOptions options = hnsw_options;
    options.approximate_above = approximate ? 0 : n;
    for (int pass = 0; pass < (approximate ? 2 : 1); ++pass) {  // HNSW: build + save, then reuse
      const auto start = Clock::now();
      auto opened = GalleryStore::open(file, GalleryStore::Access::ReadOnly);
      std::string note;
      auto index = GalleryIndex::load(opened.value(), options, &note);
      std::printf("| %zu | %s | %.0f | %s | enroll one per transaction: %.0f ms |\n", n, approximate ? "HNSW" : "exact",
                  ms_since(start), note.c_str(), fill_ms);
      std::fflush(stdout);
    }
  }
  for (const char* suffix : {"", "-wal", "-shm", ".hnsw"})
    std::filesystem::remove(file.string() + suffix);
}

// --fill: the templates of load_bench, written in transactions of 10 000 (WriteBatch).
int fill(const std::string& location, std::size_t n) {
  auto store = GalleryStore::create(location, {std::string(64, '0'), "bench"}, kDim);
  if (!store) {
    std::fprintf(stderr, "gallery-bench: %s\n", store.error().message.c_str());
    return 1;
  }
  std::mt19937 rng(7);
  const auto start = Clock::now();
  for (std::size_t done = 0; done < n;) {
    const std::size_t count = std::min<std::size_t>(10000, n - done);
    const std::vector<float> units = random_units(count, rng);
    auto batch = store.value().begin_write();
    if (!batch) return std::fprintf(stderr, "gallery-bench: %s\n", batch.error().message.c_str()), 1;
    for (std::size_t i = 0; i < count; ++i) {
      std::vector<NewTemplate> t(1);
      t[0].embedding.assign(&units[i * kDim], &units[(i + 1) * kDim]);
      t[0].source = "bench";
      if (auto r = batch.value().enroll("id" + std::to_string(done + i), "", t); !r)
        return std::fprintf(stderr, "gallery-bench: %s\n", r.error().message.c_str()), 1;
    }
    if (auto r = batch.value().commit(); !r) return std::fprintf(stderr, "gallery-bench: %s\n", r.error().message.c_str()), 1;
    done += count;
  }
  std::printf("{\"what\":\"gallery_fill\",\"templates\":%zu,\"remote\":%s,\"ms\":%.0f}\n", n,
              is_postgres_location(location) ? "true" : "false", ms_since(start));
  return 0;
}

// --load: open + exact index load, as GalleryWatcher::start does.
int load(const std::string& location, int passes) {
  std::vector<double> times;
  long rss_growth = 0;
  std::size_t templates = 0;
  for (int pass = 0; pass < passes; ++pass) {
    const long rss_before = rss_kib();
    const auto start = Clock::now();
    auto opened = GalleryStore::open(location, GalleryStore::Access::ReadOnly);
    if (!opened) return std::fprintf(stderr, "gallery-bench: %s\n", opened.error().message.c_str()), 1;
    IndexOptions exact;
    exact.approximate_above = SIZE_MAX;
    std::string note;
    auto index = GalleryIndex::load(opened.value(), exact, &note);
    if (!index) return std::fprintf(stderr, "gallery-bench: %s\n", index.error().message.c_str()), 1;
    times.push_back(ms_since(start));
    templates = index.value().templates();
    if (pass == 0) rss_growth = rss_kib() - rss_before;  // the index held (and what the read left)
  }
  std::sort(times.begin(), times.end());
  std::printf("{\"what\":\"gallery_load\",\"templates\":%zu,\"dim\":%d,\"remote\":%s,\"passes\":%d,"
              "\"median_ms\":%.0f,\"min_ms\":%.0f,\"max_ms\":%.0f,\"rss_growth_mib\":%.1f}\n",
              templates, kDim, is_postgres_location(location) ? "true" : "false", passes, times[times.size() / 2],
              times.front(), times.back(), rss_growth / 1024.0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes = {10000, 100000, 1000000}, load_sizes = {10000, 100000};
  std::vector<std::size_t> ef_searches = {128};
  std::size_t queries = 200, approximate_max = SIZE_MAX;
  IndexOptions hnsw;
  std::filesystem::path dir = std::filesystem::temp_directory_path();
  std::string fill_location, load_location;
  std::size_t fill_count = 100000;
  int passes = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--sizes")
      sizes = parse_list(v);
    else if (a == "--load-sizes")
      load_sizes = parse_list(v);
    else if (a == "--queries")
      queries = std::clamp<std::size_t>(std::stoul(v), 1, 100000);
    else if (a == "--hnsw-m")
      hnsw.hnsw_m = std::stoi(v);
    else if (a == "--ef-construction")
      hnsw.hnsw_ef_construction = std::stoi(v);
    else if (a == "--ef-search")
      ef_searches = parse_list(v);
    else if (a == "--dir")
      dir = v;
    else if (a == "--approximate-max")
      approximate_max = std::stoul(v);
    else if (a == "--fill")
      fill_location = v;
    else if (a == "--fill-count")
      fill_count = std::stoul(v);
    else if (a == "--load")
      load_location = v;
    else if (a == "--passes")
      passes = std::clamp(std::stoi(v), 1, 100);
    else {
      std::fprintf(stderr, "gallery-bench: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (!fill_location.empty()) return fill(fill_location, fill_count);
  if (!load_location.empty()) return load(load_location, passes);
  std::printf("dot kernels: %s\n\n", dot_kernels_isa());
  std::printf(
      "| identities | index | build ms | median query ms (1 probe, top-1) | median query thread-CPU ms | "
      "recall@1 vs exact | bytes per identity (RSS) |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (std::size_t n : sizes) search_bench(n, queries, hnsw, ef_searches, approximate_max);
  if (!load_sizes.empty()) {
    std::printf("\n| templates | index | open + load ms | what happened | fill |\n|---|---|---|---|---|\n");
    for (std::size_t n : load_sizes) load_bench(n, dir, hnsw);
  }
  return 0;
}
