// taconitepublish: its added latency per frame and the messages/s it sustains to a local broker.
//
// 1. latency: frames with F faces (ROI, track id, 5 landmarks, 512-float embedding meta) pushed
//    one by one through a GstHarness; the push time of taconitepublish (method=file to /dev/null
//    with embedding=none|base64|array, and method=mqtt with embedding=none when --port is given)
//    minus that of `identity` in the same harness, by medians over alternating rounds; and the
//    track events (messages=tracks|both, file to /dev/null): each row's median minus that of
//    frames only (file, embedding=none) in the same run. Faces keep their track ids from frame to
//    frame and carry a quality that rises every 10th frame, so with best-face=path one frame in 10
//    has better faces to align, copy and queue (the writer encodes and writes them meanwhile);
//    for these rows the mean is printed too, as the median hides the one frame in 10;
// 2. throughput (--port): N frames pushed as fast as possible into method=mqtt (max-pending above
//    N, so none is dropped), timed until messages-published reaches N; per QoS and embedding.
// Prints one JSON object. Not a test: bench/publish/run_publish_bench.sh starts the broker.
//
// Usage: taconite-publish-bench [--port P] [--frames N] [--faces F] [--rounds R]
#include <glib/gstdio.h>
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gst/taconite/gsttaconitemeta.h>
#include <gst/video/video.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "taconite_plugin.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kCaps = "video/x-raw,format=RGB,width=640,height=480,framerate=30/1";

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

double mean(const std::vector<double>& v) {
  double sum = 0.0;
  for (double x : v) sum += x;
  return v.empty() ? 0.0 : sum / v.size();
}

GstBuffer* frame(int index, int faces) {
  GstBuffer* buffer = gst_buffer_new_allocate(nullptr, 640 * 480 * 3, nullptr);
  GST_BUFFER_PTS(buffer) = index * GST_SECOND / 30;
  std::vector<float> embedding(512);
  for (int i = 0; i < faces; ++i) {
    const guint x = 20 + 120 * i, y = 100;
    GstVideoRegionOfInterestMeta* roi = gst_buffer_add_video_region_of_interest_meta(buffer, "face", x, y, 96, 96);
    roi->id = 1 + i;
    gst_video_region_of_interest_meta_add_param(roi, gst_structure_new("object_id", "id", G_TYPE_INT, 1 + i, nullptr));
    GValue xs = G_VALUE_INIT, ys = G_VALUE_INIT;
    gst_value_array_init(&xs, 5);
    gst_value_array_init(&ys, 5);
    // Where a 96x96 face's eyes, nose tip and mouth corners are (the best face is aligned from them).
    const double px[5] = {30.3, 65.7, 48.1, 33.9, 62.4}, py[5] = {38.2, 37.9, 56.3, 74.1, 74.6};
    for (int k = 0; k < 5; ++k) {
      GValue v = G_VALUE_INIT;
      g_value_init(&v, G_TYPE_DOUBLE);
      g_value_set_double(&v, x + px[k]);
      gst_value_array_append_value(&xs, &v);
      g_value_set_double(&v, y + py[k]);
      gst_value_array_append_and_take_value(&ys, &v);
    }
    GstStructure* landmarks = gst_structure_new_empty("landmarks");
    gst_structure_take_value(landmarks, "x", &xs);
    gst_structure_take_value(landmarks, "y", &ys);
    gst_video_region_of_interest_meta_add_param(roi, landmarks);
    gst_video_region_of_interest_meta_add_param(
        roi, gst_structure_new("quality", "score", G_TYPE_DOUBLE, 1.0 - 1.0 / (index / 10 + 2), nullptr));
    for (std::size_t k = 0; k < embedding.size(); ++k)
      embedding[k] = static_cast<float>(std::sin(0.37 * (k + 1) + index + 3 * i) / std::sqrt(256.0));
    gst_buffer_add_taconite_embedding_meta(buffer, roi->id, embedding.data(), 512, 21.5, "IR-18", "cpu", TRUE);
  }
  return buffer;
}

GstHarness* harness(const char* factory, const std::vector<std::pair<std::string, std::string>>& properties) {
  GstElement* element = gst_element_factory_make(factory, nullptr);
  for (const auto& [name, value] : properties) gst_util_set_object_arg(G_OBJECT(element), name.c_str(), value.c_str());
  GstHarness* h = gst_harness_new_with_element(element, "sink", "src");
  gst_object_unref(element);
  gst_harness_set_src_caps_str(h, kCaps);
  return h;
}

// Microseconds per push of `frames` frames (each built before its push is timed).
std::vector<double> push_times(GstHarness* h, int frames, int faces) {
  std::vector<double> times;
  for (int i = 0; i < frames; ++i) {
    GstBuffer* buffer = frame(i, faces);
    const auto start = Clock::now();
    gst_harness_push(h, buffer);
    times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    gst_buffer_unref(gst_harness_pull(h));
  }
  return times;
}

// The length of the document taconitepublish writes for `sample` with embedding=`embedding` (its
// line without the newline), through a file in `dir`.
std::size_t written_document_size(GstBuffer* sample, const char* embedding, const std::string& dir) {
  const std::string file = dir + "/document.jsonl";
  GstHarness* h = harness("taconitepublish", {{"location", file}, {"embedding", embedding}, {"stream", "cam0"}});
  gst_harness_push(h, gst_buffer_ref(sample));
  gst_buffer_unref(gst_harness_pull(h));
  gst_harness_teardown(h);  // stops the element: the line is written and the file closed
  gchar* text = nullptr;
  gsize length = 0;
  std::size_t size = 0;
  if (g_file_get_contents(file.c_str(), &text, &length, nullptr))
    size = length > 0 && text[length - 1] == '\n' ? length - 1 : length;
  g_free(text);
  g_remove(file.c_str());
  return size;
}

guint64 published(GstElement* element) {
  guint64 value = 0;
  g_object_get(element, "messages-published", &value, nullptr);
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  if (!load_taconite_plugin("taconite-publish-bench")) return 2;
  int port = 0, frames = 500, faces = 2, rounds = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--port") port = value;
    else if (flag == "--frames") frames = std::clamp(value, 10, 1000000);
    else if (flag == "--faces") faces = std::clamp(value, 0, 5);
    else if (flag == "--rounds") rounds = std::clamp(value, 1, 100);
  }
  const std::string mqtt_port = std::to_string(port);
  gchar* scratch = g_dir_make_tmp("taconite-publish-bench-XXXXXX", nullptr);
  const std::string best_faces = scratch ? scratch : "/tmp";

  struct Config {
    std::string name;
    const char* factory;
    std::vector<std::pair<std::string, std::string>> properties;
    std::vector<double> times;
  };
  std::vector<Config> configs = {
      {"identity", "identity", {}, {}},
      {"file, embedding=none", "taconitepublish", {{"location", "/dev/null"}}, {}},
      {"file, embedding=base64", "taconitepublish", {{"location", "/dev/null"}, {"embedding", "base64"}}, {}},
      {"file, embedding=array", "taconitepublish", {{"location", "/dev/null"}, {"embedding", "array"}}, {}},
      {"file, messages=tracks", "taconitepublish", {{"location", "/dev/null"}, {"messages", "tracks"}}, {}},
      {"file, messages=both", "taconitepublish", {{"location", "/dev/null"}, {"messages", "both"}}, {}},
      {"file, messages=both, best-face=path", "taconitepublish",
       {{"location", "/dev/null"}, {"messages", "both"}, {"best-face", "path"}, {"best-face-dir", best_faces},
        {"best-face-max-files", "16"}}, {}},
  };
  if (port)
    configs.push_back({"mqtt qos 1, embedding=none", "taconitepublish",
                       {{"method", "mqtt"}, {"host", "127.0.0.1"}, {"port", mqtt_port}, {"max-pending", "100000"}},
                       {}});
  for (int r = 0; r < rounds; ++r)
    for (Config& c : configs) {
      GstHarness* h = harness(c.factory, c.properties);
      push_times(h, 20, faces);  // warm-up
      const std::vector<double> t = push_times(h, frames, faces);
      c.times.insert(c.times.end(), t.begin(), t.end());
      gst_harness_teardown(h);
    }

  // Document sizes, as the element writes them.
  GstBuffer* sample = frame(0, faces);
  std::vector<std::size_t> sizes;
  for (const char* embedding : {"none", "base64", "array"})
    sizes.push_back(written_document_size(sample, embedding, best_faces));
  gst_buffer_unref(sample);

  std::printf("{\"frames\":%d,\"faces_per_frame\":%d,\"rounds\":%d,\"document_bytes\":{\"none\":%zu,\"base64\":%zu,"
              "\"array\":%zu},\n \"push_us_median\":{",
              frames, faces, rounds, sizes[0], sizes[1], sizes[2]);
  const double base = median(configs[0].times);
  for (std::size_t i = 0; i < configs.size(); ++i)
    std::printf("%s\"%s\":{\"median\":%.1f,\"added\":%.1f}", i ? "," : "", configs[i].name.c_str(),
                median(configs[i].times), median(configs[i].times) - base);
  std::printf("},\n \"events_added_us_vs_frames\":{");
  const double frames_only = median(configs[1].times);
  bool first_event = true;
  for (const Config& c : configs)
    if (c.name.find("messages=") != std::string::npos) {
      std::printf("%s\"%s\":{\"median\":%.1f,\"mean\":%.1f}", first_event ? "" : ",", c.name.c_str(),
                  median(c.times) - frames_only, mean(c.times) - mean(configs[1].times));
      first_event = false;
    }
  std::printf("}");
  if (scratch) {  // the bench's best faces (at most best-face-max-files)
    if (GDir* d = g_dir_open(scratch, 0, nullptr)) {
      while (const gchar* name = g_dir_read_name(d)) g_remove((best_faces + "/" + name).c_str());
      g_dir_close(d);
    }
    g_rmdir(scratch);
    g_free(scratch);
  }

  if (port) {
    std::printf(",\n \"mqtt_messages_per_s\":{");
    bool first = true;
    for (const char* qos : {"0", "1"})
      for (const char* embedding : {"none", "base64", "array"}) {
        double best = 0.0;
        for (int r = 0; r < rounds; ++r) {
          GstHarness* h = harness("taconitepublish", {{"method", "mqtt"}, {"host", "127.0.0.1"}, {"port", mqtt_port},
                                                      {"qos", qos}, {"embedding", embedding},
                                                      {"max-pending", std::to_string(frames + 1)}});
          std::vector<GstBuffer*> prepared;
          for (int i = 0; i < frames; ++i) prepared.push_back(frame(i, faces));
          const auto start = Clock::now();
          for (GstBuffer* b : prepared) {
            gst_harness_push(h, b);
            gst_buffer_unref(gst_harness_pull(h));
          }
          for (int wait = 0; wait < 60000 && published(h->element) < static_cast<guint64>(frames); ++wait)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));  // hang guard: 60 s
          const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
          if (published(h->element) == static_cast<guint64>(frames)) best = std::max(best, frames / seconds);
          gst_harness_teardown(h);
        }
        std::printf("%s\"qos %s, embedding=%s\":%.0f", first ? "" : ",", qos, embedding, best);
        first = false;
      }
    std::printf("}");
  }
  std::printf("}\n");
  return 0;
}
