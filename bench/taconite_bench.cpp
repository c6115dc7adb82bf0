// taconite-bench: load time, warm latency and batch throughput of one backend on one bundle,
// one JSON line on stdout. Run each configuration in its own process so peak RSS is its own.
//   taconite-bench BUNDLE BACKEND f32|bf16|int8|auto THREADS BATCH... | taconite-bench --peak THREADS
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include "process_usage.hpp"
#include "taconite/embedder.hpp"
#include "taconite/inspect.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

using taconite::bench::cpu_seconds;
using taconite::bench::peak_rss_mib;

// Repetitions so one measurement takes about `budget` seconds (at least 2, at most 50).
int repetitions(double one_run, double budget) { return std::clamp(static_cast<int>(budget / std::max(one_run, 1e-4)), 2, 50); }

// The peak: a large f32 3x3 conv (batch 8, 128 -> 128 channels, 56x56) in oneDNN's preferred layouts.
int measure_peak(int threads) {
  omp_set_num_threads(threads);
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const int n = 8, c = 128, hw = 56;
  const dnnl::memory::desc src({n, c, hw, hw}, dt::f32, tag::any), wei({c, c, 3, 3}, dt::f32, tag::any),
      dst({n, c, hw, hw}, dt::f32, tag::any);
  const dnnl::convolution_forward::primitive_desc pd(
      {dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, wei, dst, {1, 1}, {1, 1}, {1, 1}},
      engine);
  dnnl::memory s(pd.src_desc(), engine), w(pd.weights_desc(), engine), d(pd.dst_desc(), engine);
  std::fill_n(static_cast<float*>(s.get_data_handle()), pd.src_desc().get_size() / 4, 0.5f);
  std::fill_n(static_cast<float*>(w.get_data_handle()), pd.weights_desc().get_size() / 4, 0.01f);
  dnnl::convolution_forward conv(pd);
  const auto run = [&] {
    conv.execute(stream, {{DNNL_ARG_SRC, s}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, d}});
    stream.wait();
  };
  run();
  std::vector<double> times;
  for (int i = 0; i < 20; ++i) {
    const auto start = Clock::now();
    run();
    times.push_back(seconds_since(start));
  }
  // The best run: the peak is what the machine can do, on a shared machine the least disturbed run.
  std::sort(times.begin(), times.end());
  times.resize(1);
  const double flops = 2.0 * n * c * c * 9 * hw * hw;
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto bf16 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
  std::printf("{\"peak_gflops\": %.1f, \"impl\": \"%s\", \"threads\": %d, \"native_bf16\": %s}\n",
              flops / median(times) / 1e9, pd.impl_info_str(), threads, (isa & bf16) == bf16 ? "true" : "false");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--peak") return measure_peak(std::atoi(argv[2]));
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s BUNDLE BACKEND auto|f32|bf16|int8 THREADS BATCH... | %s --peak THREADS\n", argv[0], argv[0]);
    return 2;
  }
  const std::optional<taconite::Precision> precision = taconite::precision_from_name(argv[3]);
  if (!precision) {
    std::fprintf(stderr, "precision must be f32, bf16, int8 or auto, not '%s'\n", argv[3]);
    return 2;
  }
  taconite::LoadOptions options;
  options.backend = argv[2];
  options.precision = *precision;
  options.threads = std::atoi(argv[4]);
  const auto load_start = Clock::now();
  const double load_cpu_start = cpu_seconds();
  auto loaded = taconite::IrEmbedder::load(argv[1], options);
  const double load_seconds = seconds_since(load_start);
  const double load_cpu = cpu_seconds() - load_cpu_start;
  if (!loaded) {
    std::fprintf(stderr, "load failed: %s\n", loaded.error().message.c_str());
    return 1;
  }
  taconite::IrEmbedder& embedder = loaded.value();
  const std::vector<float> face = taconite::inspect::reference_f32(embedder, "ref.input_chw");
  const taconite::FaceChw view{face, 3, embedder.input_dims().height, embedder.input_dims().width};
  const std::vector<float> reference = taconite::inspect::reference_f32(embedder, "ref.cpu_embedding");

  std::string results;
  double cosine_to_fp32 = 0.0;
  double rss_batch1 = 0.0;  // peak RSS through load and the batch-1 runs
  const double budget = std::getenv("BENCH_BUDGET_S") ? std::atof(std::getenv("BENCH_BUDGET_S")) : 3.0;
  for (int arg = 5; arg < argc; ++arg) {
    const int batch = std::atoi(argv[arg]);
    const std::vector<taconite::FaceChw> faces(static_cast<std::size_t>(batch), view);
    std::vector<double> cpu_times;
    const auto once = [&] {
      const auto start = Clock::now();
      const double cpu_start = cpu_seconds();
      auto out = batch == 1 ? taconite::Result<std::vector<taconite::Embedding>>(
                                  std::vector<taconite::Embedding>{embedder.embed(view).value()})
                            : embedder.embed_batch(faces);
      const double t = seconds_since(start);
      cpu_times.push_back(cpu_seconds() - cpu_start);
      if (!out) {
        std::fprintf(stderr, "embed failed: %s\n", out.error().message.c_str());
        std::exit(1);
      }
      cosine_to_fp32 = taconite::cosine(out.value().front(), reference);
      return t;
    };
    const double warm = once();  // first call builds the batch size's network
    std::vector<double> times{once()};
    const int reps = repetitions(std::min(warm, times[0]), budget);
    for (int i = 1; i < reps; ++i) times.push_back(once());
    const double t = median(times);
    cpu_times.erase(cpu_times.begin());  // the warm-up call
    char entry[200];
    std::snprintf(entry, sizeof entry,
                  "%s\"%d\": {\"median_ms\": %.2f, \"faces_per_s\": %.2f, \"cpu_ms\": %.2f, \"reps\": %d}",
                  results.empty() ? "" : ", ", batch, t * 1e3, batch / t, median(cpu_times) * 1e3,
                  static_cast<int>(times.size()));
    results += entry;
    if (batch == 1) rss_batch1 = peak_rss_mib();
  }
  // The numerics that ran ("f32", "bf16", "int8"; the replay's "bf16-exact" reported as "f32" as before)
  // and, for `auto`, what the backend measured to choose them.
  const std::string ran = embedder.precision() == "bf16-exact" ? "f32" : embedder.precision();
  std::string reason = embedder.backend_reason();
  for (char& c : reason)
    if (c == '"' || c == '\\') c = '\'';
  std::printf("{\"bundle\": \"%s\", \"backend\": \"%s\", \"precision\": \"%s\", \"requested\": \"%s\", \"threads\": %d, "
              "\"load_s\": %.3f, \"load_cpu_s\": %.3f, \"peak_rss_mib\": %.1f, \"rss_batch1_mib\": %.1f, "
              "\"cosine_fp32\": %.6f, \"batches\": {%s}, \"backend_reason\": \"%s\"}\n",
              argv[1], embedder.backend().c_str(), ran.c_str(), argv[3], options.threads, load_seconds, load_cpu,
              peak_rss_mib(), rss_batch1, cosine_to_fp32, results.c_str(), reason.c_str());
  return 0;
}
