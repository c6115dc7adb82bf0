// How long a gallery change takes to reach a running taconiteidentify (issue 24's target: median
// <= 1 s after commit). This process plays `appsrc is-live ! taconiteidentify ! fakesink` with
// frames pushed at 30 fps, each carrying one face per identity to come (synthetic 512-d unit
// embeddings, orthogonal: each face is its identity's and nobody else's). Each round another
// process commits one identity (after a random 0-1 s pause, so the poll's phase is random), and
// the first buffer whose face carries the new name is timed, against the commit time the database
// recorded (track_commit_timestamp; the same machine's clock) and against the writer's return.
//
//   change-latency LOCATION --writer notify|silent [--rounds 12] [--poll-interval MS] [--psql PATH]
//                  [--cli TAKONITE-GALLERY]
//   notify: `taconite-gallery import` (the CLI's commit, which notifies taconite_gallery);
//   silent: `psql` writes the same rows without NOTIFY (what the poll alone delivers).
// LOCATION is an empty PostgreSQL database (made into a gallery here); the server must run with
// track_commit_timestamp=on. One JSON line per round, then one with the medians, on stdout.
#include <gst/gst.h>
#include <gst/taconite/gsttaconitemeta.h>
#include <gst/video/video.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gallery_store.hpp"
#include "taconite_plugin.hpp"

namespace {

using namespace taconite::gallery;
constexpr int kDim = 512;
const ModelFingerprint kModel{std::string(64, 'b'), "bench"};

double now_unix() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::vector<float> axis(int i) {
  std::vector<float> v(kDim, 0.0f);
  v[static_cast<std::size_t>(i)] = 1.0f;
  return v;
}

// Runs argv and returns its stdout (exits the bench when it fails: a bench, not a library).
std::string run(const std::vector<std::string>& argv) {
  int out[2];
  if (::pipe(out) != 0) std::exit(2);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(out[0], buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<std::size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "change-latency: %s failed\n", argv[0].c_str());
    std::exit(2);
  }
  return text;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

struct Seen {
  std::mutex lock;
  std::vector<double> first_seen;  // per identity: wall clock of the first buffer naming it, 0: not yet
};

GstPadProbeReturn observe(GstPad*, GstPadProbeInfo* info, gpointer data) {
  auto* seen = static_cast<Seen*>(data);
  const double now = now_unix();
  gpointer state = nullptr;
  GstBuffer* buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  while (GstMeta* meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) {
    auto* roi = reinterpret_cast<GstVideoRegionOfInterestMeta*>(meta);
    GstStructure* identity = gst_video_region_of_interest_meta_get_param(roi, "identity");
    const gchar* label = identity ? gst_structure_get_string(identity, "label") : nullptr;
    if (!label || label[0] != 'p') continue;
    const int who = std::atoi(label + 1);
    std::lock_guard guard(seen->lock);
    if (who >= 0 && who < static_cast<int>(seen->first_seen.size()) && seen->first_seen[who] == 0)
      seen->first_seen[who] = now;
  }
  return GST_PAD_PROBE_OK;
}

GstBuffer* frame(int index, int faces) {
  GstBuffer* buffer = gst_buffer_new_allocate(nullptr, 112 * 112 * 3, nullptr);
  gst_buffer_memset(buffer, 0, 100, 112 * 112 * 3);
  GST_BUFFER_PTS(buffer) = static_cast<GstClockTime>(index) * GST_SECOND / 30;
  GST_BUFFER_DURATION(buffer) = GST_SECOND / 30;
  for (int i = 0; i < faces; ++i) {
    GstVideoRegionOfInterestMeta* roi = gst_buffer_add_video_region_of_interest_meta(buffer, "face", 0, 0, 8, 8);
    roi->id = i + 1;
    const std::vector<float> v = axis(i);
    gst_buffer_add_taconite_embedding_meta(buffer, roi->id, v.data(), kDim, 20.0, "bench", "cpu", TRUE);
  }
  return buffer;
}

std::string bytea_hex(const std::vector<float>& v) {
  static const char* digits = "0123456789abcdef";
  std::string hex = "\\x";
  for (unsigned char b : std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float))) {
    hex += digits[b >> 4];
    hex += digits[b & 15];
  }
  return hex;
}

}  // namespace

int main(int argc, char** argv) {
  gst_init(&argc, &argv);
  if (!load_taconite_plugin("change-latency")) return 2;
  if (argc < 2) {
    std::fprintf(stderr, "usage: change-latency LOCATION --writer notify|silent [--rounds N] [--poll-interval MS]\n");
    return 2;
  }
  const std::string location = argv[1];
  std::string writer = "notify", psql = "psql", cli = "taconite-gallery";
  int rounds = 12;
  unsigned poll_ms = 1000;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--writer") writer = v;
    else if (a == "--rounds") rounds = std::clamp(std::atoi(v.c_str()), 1, kDim);
    else if (a == "--poll-interval") poll_ms = static_cast<unsigned>(std::atoi(v.c_str()));
    else if (a == "--psql") psql = v;
    else if (a == "--cli") cli = v;
    else {
      std::fprintf(stderr, "change-latency: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (auto made = GalleryStore::create(location, kModel, kDim); !made) {
    std::fprintf(stderr, "change-latency: %s\n", made.error().message.c_str());
    return 2;
  }
  const std::string description = "appsrc name=src is-live=true format=time caps=video/x-raw,format=RGB,width=112,"
                                  "height=112,framerate=30/1 ! taconiteidentify name=identify gallery=\"" +
                                  location + "\" poll-interval=" + std::to_string(poll_ms) + " ! fakesink sync=false";
  GError* error = nullptr;
  GstElement* pipeline = gst_parse_launch(description.c_str(), &error);
  if (!pipeline) {
    std::fprintf(stderr, "change-latency: %s\n", error ? error->message : "no pipeline");
    return 2;
  }
  Seen seen;
  seen.first_seen.assign(static_cast<std::size_t>(rounds), 0.0);
  GstElement* identify = gst_bin_get_by_name(GST_BIN(pipeline), "identify");
  GstPad* src_pad = gst_element_get_static_pad(identify, "src");
  gst_pad_add_probe(src_pad, GST_PAD_PROBE_TYPE_BUFFER, observe, &seen, nullptr);
  gst_object_unref(src_pad);
  gst_object_unref(identify);
  GstElement* src = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  if (gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    std::fprintf(stderr, "change-latency: the pipeline did not start (gallery %s)\n", location.c_str());
    return 2;
  }
  std::atomic<bool> stop{false};
  std::thread pusher([&] {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; !stop; ++i) {
      GstFlowReturn flow = GST_FLOW_OK;
      GstBuffer* buffer = frame(i, rounds);
      g_signal_emit_by_name(src, "push-buffer", buffer, &flow);  // (the signal takes a ref of its own)
      gst_buffer_unref(buffer);
      if (flow != GST_FLOW_OK) break;
      std::this_thread::sleep_until(start + std::chrono::microseconds(33333) * (i + 1));
    }
  });

  std::mt19937 rng(24);
  std::uniform_int_distribution<int> pause_ms(0, 1000);
  const std::string file = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/change-latency-" +
                           std::to_string(::getpid()) + ".jsonl";
  std::vector<double> from_commit, from_return;
  for (int i = 0; i < rounds; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms(rng)));
    const std::string name = "p" + std::to_string(i);
    const std::vector<float> v = axis(i);
    if (writer == "notify") {
      std::ofstream jsonl(file);
      jsonl << R"({"taconite_gallery":1,"embedding_dim":)" << kDim << R"(,"model":")" << kModel.model
            << R"(","model_fingerprint":")" << kModel.sha256 << "\"}\n";
      jsonl << R"({"name":")" << name << R"(","embedding":[)";
      for (int k = 0; k < kDim; ++k) jsonl << (k ? "," : "") << v[static_cast<std::size_t>(k)];
      jsonl << "]}\n";
      jsonl.close();
      run({cli, "import", location, file});
    } else {
      const std::string sql = "BEGIN; SELECT 1 FROM gallery WHERE key = 1 FOR UPDATE;"
                              " INSERT INTO identities(name, created_unix) VALUES ('" + name + "', 0);"
                              " INSERT INTO templates(identity_id, embedding, norm, source, created_unix)"
                              " SELECT id, '" + bytea_hex(v) + "'::bytea, 1, 'bench', 0 FROM identities WHERE name = '" +
                              name + "'; UPDATE gallery SET revision = revision + 1 WHERE key = 1; COMMIT;";
      run({psql, "-q", "-d", location, "-c", sql});
    }
    const double returned = now_unix();
    const double committed = std::stod(run({psql, "-Atq", "-d", location, "-c",
                                            "SELECT extract(epoch FROM pg_xact_commit_timestamp(xmin)) FROM "
                                            "identities WHERE name = '" + name + "'"}));
    double first = 0;
    for (int wait = 0; wait < 6000 && first == 0; ++wait) {  // hang guard: 60 s
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      std::lock_guard guard(seen.lock);
      first = seen.first_seen[static_cast<std::size_t>(i)];
    }
    if (first == 0) {
      std::fprintf(stderr, "change-latency: %s never reached the pipeline\n", name.c_str());
      return 1;
    }
    from_commit.push_back((first - committed) * 1000);
    from_return.push_back((first - returned) * 1000);
    std::printf("{\"what\":\"change_latency_round\",\"writer\":\"%s\",\"poll_ms\":%u,\"round\":%d,"
                "\"ms_from_commit\":%.1f,\"ms_from_writer_return\":%.1f,\"writer_ms\":%.1f}\n",
                writer.c_str(), poll_ms, i, from_commit.back(), from_return.back(), (returned - committed) * 1000);
    std::fflush(stdout);
  }
  std::remove(file.c_str());
  stop = true;
  pusher.join();
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(src);
  gst_object_unref(pipeline);
  std::printf("{\"what\":\"change_latency\",\"writer\":\"%s\",\"poll_ms\":%u,\"rounds\":%d,"
              "\"median_ms_from_commit\":%.1f,\"max_ms_from_commit\":%.1f,\"median_ms_from_writer_return\":%.1f}\n",
              writer.c_str(), poll_ms, rounds, median(from_commit),
              *std::max_element(from_commit.begin(), from_commit.end()), median(from_return));
  return 0;
}
