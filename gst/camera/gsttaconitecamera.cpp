/**
 * SECTION:element-taconitecamera
 * @title: taconitecamera
 *
 * A camera (or a recording) as raw video, kept running: the source named by `uri` (rtsp://,
 * rtsps://, http(s):// MJPEG or HLS, v4l2:///dev/videoN or `device`, file://) is decoded in a private pipeline
 * of its own (uridecodebin, or v4l2src ! decodebin) whose errors never reach the application's
 * bus. When it fails (an error, no frame for `timeout` seconds, the end of a live stream) it is torn
 * down and built again after a backoff (0.5 s, 1 s, 2 s, ... at most `retry-interval`), for ever or
 * `max-retries` failed attempts in a row, after which the element posts an error naming the camera.
 * Downstream never sees the error or an EOS meanwhile: the src pad keeps its stream, and the frames
 * after the outage carry on (a live camera's frames are stamped with the running time at which they
 * arrived, the first after an outage flagged DISCONT; new caps go out when the camera sends others).
 *
 * Each outage is said once: an element message "taconite-camera" (gsttaconitecamera.h) with
 * `stream`, `state` "lost", `reason` ("error", "stall", "eos"), `message` (the error's text) and
 * `restarts`, a warning on the bus, and downstream a serialized custom event "taconite-camera-lost"
 * after the last frame before it (taconitetrack ends every open track on it, reason "camera-lost");
 * when frames are back, a message with `state` "back" and `outage` (seconds without frames).
 *
 * `drop=latest` (the default) keeps one decoded frame between the decoder and downstream: a newer
 * frame replaces one not yet taken (counted in `frames-dropped`), so analysis slower than the
 * camera always gets the newest frame and the lag stays one frame. When more than 10 % of 5 s of
 * frames are dropped, one warning says so ("door1: analysing 7 of 25 frames/s, dropping the rest")
 * with a message `state` "overloaded"; "keeping-up" follows when under 2 % are. `drop=none` sends every frame
 * and makes the source wait (files, tests). `max-rate` lets at most that many frames a second
 * through before either policy (as Frigate's detect fps): the rest are skipped and counted in
 * `frames-skipped`, and the overload warning then counts only the frames let through ("door1:
 * analysing 3 of 5 frames/s"). A recording (file://) is not live: its EOS ends the
 * stream, an error is not retried, and no watchdog runs.
 *
 * RTSP: `latency` (the jitter buffer, ms), `protocols` (tcp, udp or auto). A user name and password
 * come from `credentials-file` (user name on the first line, password on the second; refused when
 * other users may read it) and never appear on the command line, in messages or in logs; a uri
 * holding a password is refused. rtsps:// and https:// check the camera's certificate against the
 * system's CAs, or against `tls-ca-file` (e.g. a camera's self-signed certificate); there is no way
 * to turn the check off.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 taconitecamera uri=rtsp://camera.local/stream1 stream=door1 \
 *     credentials-file=/etc/taconite/door1-credentials ! videoconvert ! \
 *     taconitedetect model=face_detection_yunet_2023mar.onnx interval=3 ! taconitetrack ! fakesink
 * ]| Detects and tracks the faces of one RTSP camera, reconnecting whenever it goes away.
 *
 * Since: 0.5
 */
#include "gsttaconitecamera.h"

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "camera_enums.hpp"
#include "camera_output.hpp"
#include "camera_uri.hpp"
#include "credentials_file.hpp"
#include "cxx_boundary.hpp"
#include "input_file.hpp"
#include "property_table.hpp"
#include "running_camera.hpp"

GST_DEBUG_CATEGORY(taconite_camera_debug);
#define GST_CAT_DEFAULT taconite_camera_debug

namespace {

using namespace taconite::gst;

constexpr std::size_t kMaxStreamBytes = 256;

// Property values and their defaults (see declare_properties()); guarded by the object lock.
struct Settings {
  std::string uri;
  std::string device;  // a V4L2 device: the same as uri=v4l2://DEVICE
  std::string stream;  // empty: the element's name
  double timeout = 5.0;
  double retry_interval = 2.0;
  guint max_retries = 0;
  DropPolicy drop = DropPolicy::Latest;
  guint latency = 200;
  RtspProtocols protocols = RtspProtocols::Tcp;
  std::string credentials_file;
  std::string tls_ca_file;  // rtsps / https: the CAs the camera's certificate is checked against
  guint decoder_threads = 0;
  double max_rate = 0.0;  // frames a second let through; 0: every frame
};

}  // namespace

struct _GstTaconiteCamera {
  GstElement parent;
  GstPad* srcpad;
  Settings* settings;
  CameraStats* stats;
  RunningCamera* camera;  // from READY->PAUSED to PAUSED->READY
  CameraOutput* output;   // while the src pad is active: its task's
  std::atomic<bool> live;
};

static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS("video/x-raw"));

G_DEFINE_TYPE_WITH_CODE(GstTaconiteCamera, gst_taconite_camera, GST_TYPE_ELEMENT,
                        GST_DEBUG_CATEGORY_INIT(taconite_camera_debug, "taconitecamera", 0,
                                                "taconitecamera element"));
GST_ELEMENT_REGISTER_DEFINE(taconitecamera, "taconitecamera", GST_RANK_NONE, GST_TYPE_TACONITE_CAMERA);

/* ------------------------------------------------------------------------------------------ */
/* Start                                                                                       */

// Why `name` cannot name a camera in messages and events, or "".
static std::string stream_name_problem(const std::string& name) {
  if (name.size() > kMaxStreamBytes)
    return "the stream name is " + std::to_string(name.size()) + " bytes, more than " + std::to_string(kMaxStreamBytes);
  if (!g_utf8_validate(name.c_str(), static_cast<gssize>(name.size()), nullptr))
    return "the stream name is not valid UTF-8";
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f) return "the stream name holds a control character";
  return "";
}

// The settings checked and turned into what a running camera needs; an element error naming the
// camera and the property otherwise.
static std::optional<CameraConfig> camera_config(GstTaconiteCamera* self) {
  Settings s;
  GST_OBJECT_LOCK(self);
  s = *self->settings;
  CameraConfig config;
  config.name = s.stream.empty() ? std::string(GST_OBJECT_NAME(self)) : s.stream;
  GST_OBJECT_UNLOCK(self);
  auto refuse = [&](const std::string& problem, const char* property) {
    GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS, ("Camera '%s': %s", config.name.c_str(), problem.c_str()),
                      ("property %s", property));
    return std::nullopt;
  };
  if (const std::string problem = stream_name_problem(config.name); !problem.empty()) {
    config.name = GST_OBJECT_NAME(self);  // the refused name is not repeated
    return refuse(problem, "stream");
  }
  const char* source_property = "uri";
  if (!s.device.empty()) {
    if (!s.uri.empty()) return refuse("both uri and device are set: set one (device=D is uri=v4l2://D)", "device");
    if (!s.device.starts_with("/dev/"))
      return refuse("the device '" + s.device + "' is not a path under /dev, e.g. /dev/video0", "device");
    s.uri = "v4l2://" + s.device;
    source_property = "device";
  }
  taconite::Result<CameraUri> uri = parse_camera_uri(s.uri);
  if (!uri) return refuse(uri.error().message, source_property);
  config.session.uri = std::move(uri).value();
  if (config.session.uri.kind == CameraSourceKind::File) {
    gchar* path = g_filename_from_uri(config.session.uri.uri.c_str(), nullptr, nullptr);
    const std::string problem = path ? regular_file_problem(path) : "is not a valid file:// uri";
    const std::string shown = path ? path : config.session.uri.uri;
    g_free(path);
    if (!problem.empty()) return refuse("the recording '" + shown + "' " + problem, "uri");
  }
  if (!s.credentials_file.empty()) {
    if (!config.session.uri.takes_credentials) {
      GST_ELEMENT_WARNING(self, RESOURCE, SETTINGS,
                          ("Camera '%s': credentials-file is not used by %s sources", config.name.c_str(),
                           config.session.uri.kind == CameraSourceKind::File ? "file://" : "v4l2://"),
                          (nullptr));
    } else {
      taconite::Result<Credentials> credentials =
          read_credentials_file(s.credentials_file, CredentialsAccess::OwnerOnly);
      if (!credentials) return refuse(credentials.error().message, "credentials-file");
      config.session.credentials = std::move(credentials).value();
    }
  }
  if (!s.tls_ca_file.empty()) {
    if (!config.session.uri.tls) {
      GST_ELEMENT_WARNING(self, RESOURCE, SETTINGS,
                          ("Camera '%s': tls-ca-file is used by rtsps:// and https:// sources only",
                           config.name.c_str()),
                          (nullptr));
    } else {
      taconite::Result<TlsDatabase> cas = read_tls_ca_file(s.tls_ca_file);
      if (!cas) return refuse(cas.error().message, "tls-ca-file");
      config.session.tls_database = std::move(cas).value();
    }
  }
  config.session.latency_ms = s.latency;
  config.session.protocols = s.protocols;
  config.session.decoder_threads = s.decoder_threads;
  config.policy.timeout = Seconds(s.timeout);
  config.policy.retry_interval = Seconds(s.retry_interval);
  config.policy.max_retries = s.max_retries;
  config.policy.live = config.session.uri.live;
  config.keep_latest = s.drop == DropPolicy::Latest;
  config.max_rate = s.max_rate;
  return config;
}

/* ------------------------------------------------------------------------------------------ */
/* The src pad                                                                                 */

// The pad's task: one item of the mailbox downstream per run. As a GstBaseSrc does, it pauses on
// flushing, after EOS and on an error (posted, then EOS sent so the pipeline can end).
static void output_loop(gpointer data) {
  GstTaconiteCamera* self = GST_TACONITE_CAMERA(data);
  const GstFlowReturn flow = flow_guarded(GST_ELEMENT(self), "taconitecamera could not send a frame.", [&] {
    std::optional<CameraMailbox::Item> item = self->camera->mailbox().take();
    return item ? self->output->push(std::move(*item)) : GST_FLOW_FLUSHING;
  });
  if (flow == GST_FLOW_OK) return;
  GST_DEBUG_OBJECT(self, "pausing the task: %s", gst_flow_get_name(flow));
  if (flow == GST_FLOW_NOT_LINKED || flow < GST_FLOW_EOS) {
    GST_ELEMENT_FLOW_ERROR(self, flow);
    gst_pad_push_event(self->srcpad, gst_event_new_eos());
  }
  gst_pad_pause_task(self->srcpad);
}

static gboolean src_activate_mode(GstPad* pad, GstObject* parent, GstPadMode mode, gboolean active) {
  GstTaconiteCamera* self = GST_TACONITE_CAMERA(parent);
  if (mode != GST_PAD_MODE_PUSH) return FALSE;
  return bool_guarded(GST_ELEMENT(self), "taconitecamera could not (de)activate its src pad.", [&]() -> bool {
    if (active) {
      if (!self->camera) return false;  // change_state makes it before the pads are activated
      self->output = new CameraOutput(GST_ELEMENT(self), pad, self->camera->live());
      return gst_pad_start_task(pad, output_loop, self, nullptr);
    }
    if (self->camera) self->camera->mailbox().set_flushing(true);  // take() returns, the task ends
    const gboolean stopped = gst_pad_stop_task(pad);
    delete self->output;
    self->output = nullptr;
    return stopped;
  });
}

static gboolean src_query(GstPad* pad, GstObject* parent, GstQuery* query) {
  GstTaconiteCamera* self = GST_TACONITE_CAMERA(parent);
  switch (GST_QUERY_TYPE(query)) {
    case GST_QUERY_LATENCY:
      // Frames are stamped when they arrive: no latency of our own; a live camera's frames come
      // in real time (the one waiting frame is replaced, never adds up).
      gst_query_set_latency(query, self->live.load(), 0, GST_CLOCK_TIME_NONE);
      return TRUE;
    case GST_QUERY_SCHEDULING:
      gst_query_set_scheduling(query, GST_SCHEDULING_FLAG_SEQUENTIAL, 1, -1, 0);
      gst_query_add_scheduling_mode(query, GST_PAD_MODE_PUSH);
      return TRUE;
    default: return gst_pad_query_default(pad, parent, query);
  }
}

// Upstream events: a camera cannot seek; the rest (QoS, reconfigure, navigation) has no use here.
static gboolean src_event(GstPad*, GstObject*, GstEvent* event) {
  const bool seek = GST_EVENT_TYPE(event) == GST_EVENT_SEEK;
  gst_event_unref(event);
  return !seek;
}

/* ------------------------------------------------------------------------------------------ */
/* State                                                                                       */

static GstStateChangeReturn change_state_unguarded(GstTaconiteCamera* self, GstStateChange transition) {
  switch (transition) {
    case GST_STATE_CHANGE_READY_TO_PAUSED: {
      std::optional<CameraConfig> config = camera_config(self);
      if (!config) return GST_STATE_CHANGE_FAILURE;
      self->live = config->session.uri.live;
      self->camera = new RunningCamera(GST_ELEMENT(self), std::move(*config), *self->stats);
      self->camera->mailbox().set_open(!self->live);  // a live camera's frames flow in PLAYING only
      break;
    }
    case GST_STATE_CHANGE_PAUSED_TO_PLAYING: self->camera->mailbox().set_open(true); break;
    default: break;
  }
  GstStateChangeReturn result = GST_ELEMENT_CLASS(gst_taconite_camera_parent_class)->change_state(GST_ELEMENT(self),
                                                                                                  transition);
  switch (transition) {
    case GST_STATE_CHANGE_READY_TO_PAUSED:
      if (result == GST_STATE_CHANGE_FAILURE) {
        delete self->camera;
        self->camera = nullptr;
        break;
      }
      self->camera->start();
      if (self->live) result = GST_STATE_CHANGE_NO_PREROLL;
      break;
    case GST_STATE_CHANGE_PLAYING_TO_PAUSED:
      self->camera->mailbox().set_open(false);
      if (self->live) result = GST_STATE_CHANGE_NO_PREROLL;
      break;
    case GST_STATE_CHANGE_PAUSED_TO_READY:
      delete self->camera;  // stops the source and the supervisor thread
      self->camera = nullptr;
      break;
    default: break;
  }
  return result;
}

// An EOS sent to the element (gst-launch-1.0 -e at Ctrl-C, an application ending a recording):
// the frames already waiting go out, then the EOS; the camera stays connected until the stop.
static gboolean send_event(GstElement* element, GstEvent* event) {
  GstTaconiteCamera* self = GST_TACONITE_CAMERA(element);
  if (GST_EVENT_TYPE(event) != GST_EVENT_EOS)
    return GST_ELEMENT_CLASS(gst_taconite_camera_parent_class)->send_event(element, event);
  gst_event_unref(event);
  // gst_element_send_event() holds the state lock: the camera cannot come or go meanwhile.
  const bool running = self->camera != nullptr;
  if (running) self->camera->mailbox().push_end();
  GST_DEBUG_OBJECT(self, "EOS sent to the element: %s", running ? "the stream ends" : "not running, ignored");
  return running;
}

static GstStateChangeReturn change_state(GstElement* element, GstStateChange transition) {
  GstTaconiteCamera* self = GST_TACONITE_CAMERA(element);
  return state_change_guarded(element, "taconitecamera could not change state.",
                              [&] { return change_state_unguarded(self, transition); });
}

/* ------------------------------------------------------------------------------------------ */
/* GObject                                                                                     */

// A read-only count of the camera's statistics.
static guint64 frames_of(GstTaconiteCamera& self) {
  std::lock_guard<std::mutex> guard(self.stats->lock);
  return self.stats->frames;
}
static guint64 dropped_of(GstTaconiteCamera& self) {
  std::lock_guard<std::mutex> guard(self.stats->lock);
  return self.stats->dropped;
}
static guint64 skipped_of(GstTaconiteCamera& self) {
  std::lock_guard<std::mutex> guard(self.stats->lock);
  return self.stats->skipped;
}
static guint64 restarts_of(GstTaconiteCamera& self) {
  std::lock_guard<std::mutex> guard(self.stats->lock);
  return self.stats->restarts;
}

// Every property, declared once; defaults are Settings{}'s. All are read at start.
static void declare_properties(PropertyTable<GstTaconiteCamera, Settings>& t) {
  constexpr Mutable ready = Mutable::ReadyOnly;
  t.optional_string("uri", "URI",
                    "The camera: rtsp://, rtsps://, http(s):// (MJPEG, HLS), v4l2:///dev/videoN or file:///path "
                    "(a recording: not live). No password in it: use credentials-file. Default: none",
                    &Settings::uri, ready);
  t.optional_string("device", "Device",
                    "A V4L2 device path (/dev/videoN), instead of uri=v4l2:///dev/videoN; set one of the two. "
                    "Default: none",
                    &Settings::device, ready);
  t.string("stream", "Stream",
           "The camera's name in messages, warnings and the camera-lost event; empty: the element's name. "
           "Default: \"\"",
           &Settings::stream, ready);
  t.real("timeout", "Timeout",
         "Seconds without a frame (connecting or streaming) after which a live source counts as stalled and "
         "is restarted. Default: 5",
         0.5, 3600.0, &Settings::timeout, ready);
  t.real("retry-interval", "Retry interval",
         "The longest wait in seconds before another attempt (the backoff goes 0.5 s, 1 s, 2 s, ... up to "
         "it). Default: 2",
         0.1, 3600.0, &Settings::retry_interval, ready);
  t.uint("max-retries", "Maximum retries",
         "Failed attempts in a row retried before giving up with an error (a frame resets the count); 0 "
         "retries for ever. Default: 0",
         0, 1000000, &Settings::max_retries, ready);
  t.enumeration("drop", "Drop",
                "latest: downstream gets the newest decoded frame, one waiting frame is replaced by a newer one "
                "(counted in frames-dropped); none: every frame, the source waits. Default: latest",
                taconite_camera_drop_get_type, &Settings::drop, ready);
  t.uint("latency", "Latency", "RTSP: the jitter buffer in milliseconds. Default: 200", 0, 60000,
         &Settings::latency, ready);
  t.enumeration("protocols", "Protocols", "RTSP: how RTP travels. Default: tcp", taconite_camera_protocols_get_type,
                &Settings::protocols, ready);
  t.optional_string("credentials-file", "Credentials file",
                    "RTSP / HTTP: a file with the user name on its first line and the password on the second, "
                    "readable by its owner only (refused otherwise). Default: none",
                    &Settings::credentials_file, ready);
  t.optional_string("tls-ca-file", "TLS CA file",
                    "rtsps:// / https://: a PEM file of the certificate authorities the camera's certificate is "
                    "checked against, e.g. a camera's self-signed certificate (at most 1 MiB). Default: none, the "
                    "system's CAs",
                    &Settings::tls_ca_file, ready);
  t.uint("decoder-threads", "Decoder threads",
         "Threads of a libav decoder (avdec_h264, avdec_h265, ...: its max-threads); 0: the decoder's own choice, "
         "one per core. Default: 0",
         0, 64, &Settings::decoder_threads, ready);
  t.real("max-rate", "Maximum rate",
         "At most this many frames a second go downstream, evenly spaced (a live camera's arrival times, a "
         "recording's own timestamps); the others are skipped (counted in frames-skipped), before drop=latest "
         "sees them. 0: every frame. Default: 0",
         0.0, 1000.0, &Settings::max_rate, ready);
  t.counter("frames", "Frames", "Frames decoded from the camera (delivered, dropped or skipped)", frames_of,
            Lock::Own);
  t.counter("frames-dropped", "Frames dropped",
            "drop=latest: frames replaced by a newer one before downstream took them", dropped_of, Lock::Own);
  t.counter("frames-skipped", "Frames skipped", "Frames max-rate left out", skipped_of, Lock::Own);
  t.counter("restarts", "Restarts", "Times the source was built again after a failure", restarts_of, Lock::Own);
  t.read_only(
      [](GParamFlags flags) {
        return g_param_spec_string("last-error", "Last error", "Why the camera was last lost (\"\": never)", "",
                                   flags);
      },
      [](GstTaconiteCamera& self, const Settings&, GValue* v) {
        std::lock_guard<std::mutex> guard(self.stats->lock);
        g_value_set_string(v, self.stats->last_error.c_str());
      },
      Lock::Own);
  t.read_only(
      [](GParamFlags flags) {
        return g_param_spec_string("state", "State",
                                   "stopped, connecting, streaming, retrying, failed (gave up) or ended (a "
                                   "recording's end)",
                                   "stopped", flags);
      },
      [](GstTaconiteCamera& self, const Settings&, GValue* v) {
        std::lock_guard<std::mutex> guard(self.stats->lock);
        g_value_set_string(v, camera_state_name(self.stats->state));
      },
      Lock::Own);
}

static void finalize(GObject* object) {
  GstTaconiteCamera* self = GST_TACONITE_CAMERA(object);
  delete self->camera;  // only when disposed without being set back to NULL
  delete self->output;
  delete self->stats;
  delete self->settings;
  G_OBJECT_CLASS(gst_taconite_camera_parent_class)->finalize(object);
}

static void gst_taconite_camera_init(GstTaconiteCamera* self) {
  self->settings = new Settings();
  self->stats = new CameraStats();
  self->camera = nullptr;
  self->output = nullptr;
  new (&self->live) std::atomic<bool>(true);
  self->srcpad = gst_pad_new_from_static_template(&src_template, "src");
  gst_pad_set_activatemode_function(self->srcpad, GST_DEBUG_FUNCPTR(src_activate_mode));
  gst_pad_set_query_function(self->srcpad, GST_DEBUG_FUNCPTR(src_query));
  gst_pad_set_event_function(self->srcpad, GST_DEBUG_FUNCPTR(src_event));
  gst_pad_use_fixed_caps(self->srcpad);
  gst_element_add_pad(GST_ELEMENT(self), self->srcpad);
  GST_OBJECT_FLAG_SET(self, GST_ELEMENT_FLAG_SOURCE);
}

static void gst_taconite_camera_class_init(GstTaconiteCameraClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  gobject_class->finalize = finalize;
  element_class->change_state = GST_DEBUG_FUNCPTR(change_state);
  element_class->send_event = GST_DEBUG_FUNCPTR(send_event);

  PropertyTable<GstTaconiteCamera, Settings>::install(gobject_class, &GstTaconiteCamera::settings, declare_properties);

  gst_element_class_add_static_pad_template(element_class, &src_template);
  gst_element_class_set_static_metadata(
      element_class, "Supervised camera source", "Source/Video",
      "A camera (RTSP, HTTP, V4L2) or a recording decoded to raw video, restarted when it fails or stalls, "
      "with the newest frame kept for analysis and the outages said on the bus and downstream",
      "taconite-adaface maintainers");
}
