// Shared pieces of the gst suite: GStreamer set-up, a recording fake engine, buffers and harnesses.
#pragma once

#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gst/taconite/gsttaconitemeta.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "engine_client.hpp"

namespace gsttest {

// What the fake engine saw and how it behaves. Thread-safe: the element's task calls it.
struct FakeEngineState {
  std::mutex lock;
  std::condition_variable changed;
  std::vector<std::vector<float>> inputs;  // every face's CHW input, in call order
  std::vector<std::size_t> batch_sizes;    // faces per embed() call
  bool gate_open = true;                   // when false, embed() blocks until opened
  int calls_waiting = 0;                   // embed() calls blocked on the gate
  int opened = 0;                          // engines opened (one per READY->PAUSED)
  bool fail_embed = false;                 // embed() returns a Device error
  std::atomic<int> delay_ms{0};            // embed() takes this long (a slow engine)
  std::atomic<bool> infinite{false};       // raw embeddings hold +Inf and -Inf (a model that overflows)

  void close_gate();
  void open_gate();
  // Blocks until `n` embed() calls wait on the closed gate (no timing: the element's task is
  // guaranteed to get there, the test waits for it).
  void wait_for_waiting_calls(int n);
  std::size_t faces_seen();
};

// The raw embedding the fake engine returns for a CHW face: 512 values derived from the plane
// means, so different faces give different, reproducible vectors.
std::vector<float> fake_embedding(const std::vector<float>& chw);

// Installs the fake engine as every element's engine; uninstall restores the real runtime.
std::shared_ptr<FakeEngineState> install_fake_engine();
void uninstall_fake_engine();

// A harness around a fresh taconiteadaface with the given properties ("name", "value" pairs,
// parsed like gst-launch). The harness starts it (PLAYING).
GstHarness* adaface_harness(const std::vector<std::pair<std::string, std::string>>& properties);

// A packed RGB buffer filled by pixel(x, y) -> {r, g, b}.
using PixelFn = std::function<std::array<std::uint8_t, 3>(int x, int y)>;
GstBuffer* rgb_buffer(int width, int height, const PixelFn& pixel);

// A 30 fps stream of 112x112 RGB frames: its caps, frame duration, and frame `index` (PTS and
// duration set; the pixels differ from frame to frame, `shade` is the red channel).
inline constexpr GstClockTime kFrame = GST_SECOND / 30;
inline constexpr const char* kRgbCaps = "video/x-raw,format=RGB,width=112,height=112,framerate=30/1";
GstBuffer* stream_frame(int index, std::uint8_t shade = 100);

// The value of one of the element's guint64 counter properties.
guint64 counter(GstElement* element, const char* name);

// Converts an RGB buffer to `format` with a real videoconvert (and optional stride padding), so
// format tests compare against GStreamer's own conversion, not ours.
GstBuffer* convert_rgb(GstBuffer* rgb, int width, int height, const char* format);
// The same from any raw format `from` to `to` (the buffer is not taken).
GstBuffer* convert_video(GstBuffer* buffer, int width, int height, const char* from, const char* to);

// Copies a buffer of `format` into one whose planes have `extra` bytes of padding per row and
// carry a GstVideoMeta with those strides.
GstBuffer* restride(GstBuffer* buffer, const char* format, int width, int height, int extra);

// The embedding metas of a buffer in attachment order.
std::vector<GstTaconiteEmbeddingMeta*> embedding_metas(GstBuffer* buffer);

// One taconite-tracks-ended event (gsttaconitetracks.h): its reason and its tracks' (id, uid).
struct EndedEvent {
  std::string reason;
  std::vector<std::pair<gint64, std::string>> tracks;  // uid "" when the event has none
};
// The tracks-ended events the harness's element sent downstream since the last call (the other
// events pulled are dropped).
std::vector<EndedEvent> ended_events(GstHarness* h);
// taconitetrack's event ending one track, as a test pushes it in front of a consumer.
GstEvent* tracks_ended_event(gint64 id, const char* uid, const char* reason = "lost");

// The real bundle for engine tests (TACONITE_TEST_BUNDLE) and the backend to use: "cpu" when
// compiled into the runtime, else "cpu-reference". Empty bundle: the test skips.
std::string test_bundle();
std::string test_backend();

// Pulls the next ERROR message from an element's bus (set with gst_element_set_bus).
GstMessage* pop_error(GstBus* bus);

// What taking an element from NULL to PAUSED gave: the state-change result and the first error
// message (domain 0 and empty strings when none was posted).
struct StartFailure {
  GstStateChangeReturn state_change = GST_STATE_CHANGE_SUCCESS;
  GQuark domain = 0;
  int code = 0;
  std::string message;
  std::string debug;
};

// Sets `element` (consumed: set back to NULL and unreffed) to PAUSED on a private bus.
StartFailure start_paused(GstElement* element);

// The CHW input expected for an RGB image of exactly the model size (no resize):
// ((x/255)-0.5)/0.5 per plane.
std::vector<float> expected_chw(int width, int height, const PixelFn& pixel, bool bgr = false);

}  // namespace gsttest
