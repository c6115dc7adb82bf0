// Element overhead and multi-stream throughput of taconiteadaface vs the bare engine.
//
// 1. bare engine: IrEmbedder::embed on one preprocessed 112x112 face, timed per call;
// 2. one stream: videotestsrc 112x112 RGB crops -> taconiteadaface input-mode=crops -> fakesink;
//    the element keeps its queue full, so the interval between two pushes on its src pad is its
//    per-frame cost (selection, preprocessing, shared-engine hand-off, engine, metadata);
// 3. S streams in one pipeline sharing one engine, batch-size=1 and batch-size=S: total faces/s.
// With --sessions-vs-threads N, only this instead: S streams at batch-size=1 on an engine of N
// sessions x 1 thread vs one of 1 session x N threads, each loaded afresh per round (in alternating
// order) and kept warm by a prerolled element; medians of the rounds' total faces/s.
// The machine may be shared: the bare engine and the element are measured in alternating rounds
// and compared by their medians (spikes from other processes hit both); throughputs are the best
// round. Prints one JSON object. Not a test.
//
// Usage: taconite-gst-bench BUNDLE [--backend B] [--frames N] [--streams S] [--rounds R] [--sessions-vs-threads N]
#include <gst/gst.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "taconite/taconite.hpp"
#include "taconite_plugin.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Times between consecutive buffers leaving an element's src pad.
struct PushIntervals {
  std::mutex lock;
  Clock::time_point last{};
  bool have_last = false;
  std::vector<double> ms;

  static GstPadProbeReturn probe(GstPad*, GstPadProbeInfo*, gpointer data) {
    auto* self = static_cast<PushIntervals*>(data);
    std::lock_guard<std::mutex> guard(self->lock);
    const auto now = Clock::now();
    if (self->have_last) self->ms.push_back(std::chrono::duration<double, std::milli>(now - self->last).count());
    self->last = now;
    self->have_last = true;
    return GST_PAD_PROBE_OK;
  }
};

struct Run {
  double seconds = 0;
  guint64 faces = 0;
  std::vector<double> push_ms;  // element e0's push intervals
  bool ok = false;
};

// Runs a pipeline to EOS; sums faces-embedded of elements e0..e{n-1}.
Run run_pipeline(const std::string& description, int elements) {
  Run run;
  GstElement* pipeline = gst_parse_launch(description.c_str(), nullptr);
  if (!pipeline) return run;
  PushIntervals intervals;
  GstElement* first = gst_bin_get_by_name(GST_BIN(pipeline), "e0");
  GstPad* src = gst_element_get_static_pad(first, "src");
  gst_pad_add_probe(src, GST_PAD_PROBE_TYPE_BUFFER, PushIntervals::probe, &intervals, nullptr);
  gst_object_unref(src);
  gst_object_unref(first);
  GstBus* bus = gst_element_get_bus(pipeline);
  const auto start = Clock::now();
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstMessage* msg = gst_bus_timed_pop_filtered(bus, GST_CLOCK_TIME_NONE,
                                               static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  run.seconds = seconds_since(start);
  run.ok = msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_EOS;
  if (msg && !run.ok) {
    GError* err = nullptr;
    gst_message_parse_error(msg, &err, nullptr);
    std::fprintf(stderr, "error: %s\n", err ? err->message : "?");
    g_clear_error(&err);
  }
  if (msg) gst_message_unref(msg);
  for (int i = 0; i < elements; ++i) {
    const std::string name = std::string("e").append(std::to_string(i));  // not `"e" + string&&` (GCC 12 -Wrestrict)
    GstElement* e = gst_bin_get_by_name(GST_BIN(pipeline), name.c_str());
    guint64 faces = 0;
    g_object_get(e, "faces-embedded", &faces, nullptr);
    run.faces += faces;
    gst_object_unref(e);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(pipeline);
  run.push_ms = intervals.ms;
  return run;
}

// `engine` adds engine properties (e.g. "sessions=2 threads=1").
std::string stream(int index, const std::string& bundle, const std::string& backend, int frames, int batch,
                   const std::string& engine = "") {
  return "videotestsrc num-buffers=" + std::to_string(frames) + " pattern=ball ! "
         "video/x-raw,format=RGB,width=112,height=112,framerate=30/1 ! taconiteadaface name=e" + std::to_string(index) +
         " bundle=\"" + bundle + "\" backend=" + backend + " " + engine + " input-mode=crops max-queued=4 batch-size=" +
         std::to_string(batch) + " ! fakesink sync=false ";
}

// A prerolled element: it keeps the shared engine (with `engine` properties) loaded and warm, so
// the measured pipelines reuse it and time only steady-state frames. nullptr when it fails.
GstElement* keeper(const std::string& bundle, const std::string& backend, const std::string& engine = "") {
  GstElement* keeper = gst_parse_launch(("videotestsrc ! video/x-raw,format=RGB,width=112,height=112 ! "
                                         "taconiteadaface bundle=\"" + bundle + "\" backend=" + backend + " " +
                                         engine + " input-mode=crops ! fakesink")
                                            .c_str(),
                                        nullptr);
  gst_element_set_state(keeper, GST_STATE_PAUSED);
  if (gst_element_get_state(keeper, nullptr, nullptr, GST_CLOCK_TIME_NONE) != GST_STATE_CHANGE_FAILURE) return keeper;
  gst_element_set_state(keeper, GST_STATE_NULL);
  gst_object_unref(keeper);
  return nullptr;
}

// Total faces/s of `streams` streams at batch-size 1 on a freshly loaded engine with `engine`
// properties; 0 on failure.
double engine_shape_fps(const std::string& bundle, const std::string& backend, int frames, int streams,
                        const std::string& engine) {
  GstElement* warm = keeper(bundle, backend, engine);
  if (!warm) return 0;
  std::string pipeline;
  for (int s = 0; s < streams; ++s) pipeline += stream(s, bundle, backend, frames, 1, engine);
  const Run run = run_pipeline(pipeline, streams);
  gst_element_set_state(warm, GST_STATE_NULL);
  gst_object_unref(warm);
  return run.ok ? run.faces / run.seconds : 0;
}

// N sessions x 1 thread against 1 session x N threads; prints one JSON object.
int sessions_vs_threads(const std::string& bundle, const std::string& backend, int frames, int streams, int rounds,
                        int n) {
  const std::string sessions = "sessions=" + std::to_string(n) + " threads=1";
  const std::string threads = "sessions=1 threads=" + std::to_string(n);
  std::vector<double> sessions_fps, threads_fps;
  for (int round = 0; round < rounds; ++round) {
    for (int k = 0; k < 2; ++k) {
      const bool sessions_turn = (round + k) % 2 == 0;  // alternate which shape goes first
      const double fps = engine_shape_fps(bundle, backend, frames, streams, sessions_turn ? sessions : threads);
      if (fps <= 0) return 1;
      (sessions_turn ? sessions_fps : threads_fps).push_back(fps);
    }
  }
  const double a = median(sessions_fps), b = median(threads_fps);
  std::printf("{\"backend\":\"%s\",\"frames\":%d,\"streams\":%d,\"rounds\":%d,\"batch_size\":1,\n"
              " \"sessions_%d_threads_1_faces_per_s\":%.2f,\"sessions_1_threads_%d_faces_per_s\":%.2f,"
              "\"ratio\":%.3f}\n",
              backend.c_str(), frames, streams, rounds, n, a, n, b, a / b);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  if (!load_taconite_plugin("taconite-gst-bench")) return 2;
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s BUNDLE [--backend B] [--frames N] [--streams S] [--rounds R] "
                 "[--sessions-vs-threads N]\n", argv[0]);
    return 2;
  }
  const std::string bundle = argv[1];
  std::string backend = "cpu";
  int frames = 50, streams = 4, rounds = 3, compare_sessions = 0;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--backend") backend = argv[i + 1];
    else if (flag == "--sessions-vs-threads") compare_sessions = std::clamp(std::atoi(argv[i + 1]), 2, 16);
    else if (flag == "--frames") frames = std::max(2, std::atoi(argv[i + 1]));
    else if (flag == "--streams") streams = std::max(1, std::atoi(argv[i + 1]));
    else if (flag == "--rounds") rounds = std::max(1, std::atoi(argv[i + 1]));
  }
  if (compare_sessions > 0) {
    const int status = sessions_vs_threads(bundle, backend, frames, streams, rounds, compare_sessions);
    gst_deinit();
    return status;
  }

  taconite::LoadOptions options;
  options.backend = backend;
  auto loaded = taconite::IrEmbedder::load(bundle, options);
  if (!loaded) {
    std::fprintf(stderr, "error: %s\n", loaded.error().message.c_str());
    return 1;
  }
  taconite::IrEmbedder engine = std::move(loaded).value();
  std::vector<float> chw(3 * 112 * 112);
  for (std::size_t i = 0; i < chw.size(); ++i) chw[i] = static_cast<float>((i * 37 % 255) / 127.5 - 1.0);
  (void)engine.embed({chw, 3, 112, 112});  // warm-up (kernel JIT)

  GstElement* warm = keeper(bundle, backend);
  if (!warm) return 1;

  std::vector<double> bare_ms, element_ms;
  double bare_batch_fps = 0, one_fps = 0, multi1_fps = 0, multiS_fps = 0;
  std::vector<taconite::FaceChw> batch(static_cast<std::size_t>(streams), taconite::FaceChw{chw, 3, 112, 112});
  std::string multi1, multiS;
  for (int s = 0; s < streams; ++s) {
    multi1 += stream(s, bundle, backend, frames, 1);
    multiS += stream(s, bundle, backend, frames, streams);
  }
  for (int round = 0; round < rounds; ++round) {
    for (int i = 0; i < frames; ++i) {
      const auto start = Clock::now();
      if (!engine.embed({chw, 3, 112, 112})) return 1;
      bare_ms.push_back(seconds_since(start) * 1000.0);
    }
    const int reps = std::max(1, frames / streams);
    const auto batch_start = Clock::now();
    for (int i = 0; i < reps; ++i)
      if (!engine.embed_batch(batch)) return 1;
    bare_batch_fps = std::max(bare_batch_fps, reps * streams / seconds_since(batch_start));

    const Run one = run_pipeline(stream(0, bundle, backend, frames, 1), 1);
    const Run unbatched = run_pipeline(multi1, streams);
    const Run batched = run_pipeline(multiS, streams);
    if (!one.ok || !unbatched.ok || !batched.ok) return 1;
    // Skip the first intervals: the queue is still filling.
    element_ms.insert(element_ms.end(), one.push_ms.begin() + std::min<std::size_t>(4, one.push_ms.size()),
                      one.push_ms.end());
    one_fps = std::max(one_fps, one.faces / one.seconds);
    multi1_fps = std::max(multi1_fps, unbatched.faces / unbatched.seconds);
    multiS_fps = std::max(multiS_fps, batched.faces / batched.seconds);
  }
  gst_element_set_state(warm, GST_STATE_NULL);
  gst_object_unref(warm);

  const double bare = median(bare_ms), element = median(element_ms);
  std::printf(
      "{\"model\":\"%s\",\"backend\":\"%s\",\"frames\":%d,\"streams\":%d,\"rounds\":%d,\n"
      " \"bare_engine\":{\"median_ms_per_face\":%.3f,\"batch_%d_faces_per_s\":%.2f},\n"
      " \"one_stream\":{\"median_ms_per_frame\":%.3f,\"added_ms\":%.3f,\"overhead_pct\":%.2f,\"faces_per_s\":%.2f},\n"
      " \"multi_stream\":{\"batch_1_faces_per_s\":%.2f,\"batch_%d_faces_per_s\":%.2f}}\n",
      engine.model().c_str(), engine.backend().c_str(), frames, streams, rounds, bare, streams, bare_batch_fps, element,
      element - bare, 100.0 * (element - bare) / bare, one_fps, multi1_fps, streams, multiS_fps);
  gst_deinit();
  return 0;
}
