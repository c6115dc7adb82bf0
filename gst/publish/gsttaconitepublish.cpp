/**
 * SECTION:element-taconitepublish
 * @title: taconitepublish
 *
 * Turns each video frame's faces into one JSON document (schema `taconite-faces/1`,
 * docs/faces-message.md) and sends it out of the pipeline: as JSON lines to a file or stdout
 * (`method=file`), or as one MQTT message per frame to a broker (`method=mqtt`), like DL Streamer's
 * gvametaconvert + gvametapublish. A document carries the stream name, the frame number, PTS,
 * running time and the wall-clock UTC time, and per face the ROI box, taconitetrack's tracking id,
 * the landmarks, taconiteadaface's aligned / status / norm, the identity taconiteidentify wrote
 * (`label`, `label_id`, `confidence`) and, with `embedding=base64|array`, the embedding. Faces are
 * the ROI metas of type `roi-type` plus a whole-buffer embedding (input-mode=crops). Frames
 * without faces publish nothing unless `publish-empty` is set. With `messages=tracks|both` it
 * publishes per-track events (schema `taconite-tracks/1`, docs/tracks-message.md: new, update, end
 * with dwell time and the best face as a JPEG) to the same file or on `tracks-topic`; a stop
 * without EOS (the pipeline set to READY or NULL) still ends every open track (reason `stopped`),
 * waiting at most ~2 s for best faces being written and ~1 s for MQTT to send the events.
 *
 * With `method=bus` each document is posted instead as an element message `taconite-publish` on the
 * bus (fields `kind`: "faces" or "tracks", `stream`, `document`: the JSON text exactly as
 * method=file writes it), for an application that runs the pipeline itself (taconite-run); the
 * end events of a stop without EOS are posted while the element stops, before its state change
 * returns.
 *
 * Buffers pass through untouched. The file is written on the streaming thread (a write failure
 * is an error; a FIFO without a reader is refused, not waited on). MQTT never blocks the
 * streaming thread: documents wait in a queue of at most `max-pending` messages while a worker
 * thread hands them to libmosquitto; a network thread reconnects after a lost connection or a
 * failed attempt (unreachable, no answer within 10 s, refused, TLS failure) with a growing delay
 * (1 s doubling up to 16 s); messages beyond the bound are dropped, oldest first, and counted
 * (`messages-dropped`). An outage posts one warning message (and one more for each new refusal or
 * TLS failure during it); its end an info message with the count dropped meanwhile. A broker that
 * cannot be connected to at start is an error after at most ~10 s, unless `retry-at-start` is
 * set (then the start does not wait for it). Stopping waits at most ~100 ms for the network. At
 * EOS the element waits up to 10 s for pending messages to go out while the broker is connected.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 filesrc location=in.mp4 ! decodebin ! videoconvert ! facedetect display=false ! \
 *     taconitelandmarks ! taconitetrack ! taconiteadaface bundle=/path/to/bundle ! \
 *     taconitepublish method=file location=faces.jsonl ! fakesink
 * ]| One JSON line per frame with faces.
 * |[
 * ... ! taconitepublish method=mqtt host=broker.local topic=cameras/{stream}/faces stream=door1 ! fakesink
 * ]| One MQTT message per frame with faces on topic cameras/door1/faces.
 * |[
 * ... ! taconitepublish method=bus messages=tracks stream=door1 ! fakesink
 * ]| One taconite-publish element message on the bus per track event.
 *
 * Since: 0.4
 */
#include "gsttaconitepublish.h"

#include <gst/taconite/gsttaconitecamera.h>
#include <gst/video/video.h>

#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "credentials_file.hpp"
#include "cxx_boundary.hpp"
#include "face_document.hpp"
#include "json_write.hpp"
#include "jsonl_file.hpp"
#include "mqtt_publisher.hpp"
#include "property_table.hpp"
#include "publish_enums.hpp"
#include "track_events.hpp"
#include "tracks_ended.hpp"

GST_DEBUG_CATEGORY_STATIC(taconite_publish_debug);
#define GST_CAT_DEFAULT taconite_publish_debug

namespace {

using namespace taconite::gst;

constexpr const char* kDefaultTopic = "taconite/{stream}/faces";
constexpr const char* kDefaultTracksTopic = "taconite/{stream}/tracks";
constexpr guint kDefaultMaxPending = 1000;
constexpr guint kMaxMaxPending = 1000000;
constexpr guint kEosDrainMs = 10000;
constexpr guint kStopDrainMs = 1000;  // a stop waits this long at most for the end events to reach the broker

// Property values; guarded by the object lock.
struct Settings {
  PublishMethod method = PublishMethod::File;
  std::string location = "-";
  std::string stream;  // empty: the element's name
  std::string roi_type = "face";
  EmbeddingFormat embedding = EmbeddingFormat::None;
  bool publish_empty = false;
  std::string host = "localhost";
  int port = 1883;
  std::string topic = kDefaultTopic;
  std::string client_id;
  int qos = 1;
  std::string credentials;
  std::string tls_ca, tls_cert, tls_key;
  guint max_pending = kDefaultMaxPending;
  bool retry_at_start = false;
  PublishMessages messages = PublishMessages::Frames;
  std::string tracks_topic = kDefaultTracksTopic;
  guint track_timeout = 30;
  guint max_tracks = 256;
  BestFaceOutput best_face = BestFaceOutput::None;
  std::string best_face_dir;
  guint best_face_max_files = 1000;
  guint64 best_face_max_bytes = 64ull << 20;
};

// What start() opened and the streaming thread uses.
struct Output {
  FrameContext context;
  std::string topic;  // {stream} substituted
  std::string tracks_topic;
  bool frames = true;                   // messages=frames|both
  std::unique_ptr<TrackEvents> tracks;  // messages=tracks|both
  GstVideoInfo info{};
  bool info_known = false;
  GstClockTime last_pts = GST_CLOCK_TIME_NONE;
  std::unique_ptr<JsonLinesFile> file;
  std::unique_ptr<MqttPublisher> mqtt;
  taconite::json::Repairs repairs;  // of the frame documents (the track events count their own)
  bool repair_warned = false;  // the first string that was not UTF-8 is warned about once per start
};

std::string substitute_stream(std::string topic, const std::string& stream) {
  const std::string key = "{stream}";
  for (std::size_t at = topic.find(key); at != std::string::npos; at = topic.find(key, at + stream.size()))
    topic.replace(at, key.size(), stream);
  return topic;
}

// GST_OBJECT_LOCK for a scope, released also when a copy made under it throws (bad_alloc).
class ObjectLock {
 public:
  explicit ObjectLock(gpointer object) : object_(GST_OBJECT(object)) { GST_OBJECT_LOCK(object_); }
  ~ObjectLock() { GST_OBJECT_UNLOCK(object_); }
  ObjectLock(const ObjectLock&) = delete;
  ObjectLock& operator=(const ObjectLock&) = delete;

 private:
  GstObject* object_;
};

// A stream name goes into the topic as one level: '/' would add levels, '+' and '#' are wildcards.
bool stream_fits_topic(const std::string& stream) { return stream.find_first_of("/+#") == std::string::npos; }

}  // namespace

struct _GstTaconitePublish {
  GstBaseTransform parent;
  Settings* settings;
  Output* output;
  std::shared_ptr<PublishCounters>* counters;
};


static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS("video/x-raw(ANY)"));
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS("video/x-raw(ANY)"));

G_DEFINE_TYPE_WITH_CODE(GstTaconitePublish, gst_taconite_publish, GST_TYPE_BASE_TRANSFORM,
                        GST_DEBUG_CATEGORY_INIT(taconite_publish_debug, "taconitepublish", 0,
                                                "taconitepublish element"));
GST_ELEMENT_REGISTER_DEFINE(taconitepublish, "taconitepublish", GST_RANK_NONE, GST_TYPE_TACONITE_PUBLISH);

/* ------------------------------------------------------------------------------------------ */
/* Start / stop                                                                                */

static bool open_mqtt(GstTaconitePublish* self, const Settings& s, Output& out) {
  MqttSettings mqtt;
  mqtt.host = s.host;
  mqtt.port = s.port;
  mqtt.client_id = s.client_id;
  mqtt.qos = s.qos;
  mqtt.tls_ca = s.tls_ca;
  mqtt.tls_cert = s.tls_cert;
  mqtt.tls_key = s.tls_key;
  mqtt.max_pending = s.max_pending;
  mqtt.retry_at_start = s.retry_at_start;
  if (!s.credentials.empty()) {
    taconite::Result<Credentials> credentials = read_credentials_file(s.credentials, CredentialsAccess::Any);
    if (!credentials) {
      GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS, ("%s", credentials.error().message.c_str()),
                        ("property credentials"));
      return false;
    }
    mqtt.username = std::move(credentials.value().username);
    mqtt.password = std::move(credentials.value().password);
  }
  if (s.host.empty()) {
    GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS, ("method=mqtt needs a broker 'host'"), (nullptr));
    return false;
  }
  using Topic = std::tuple<std::string, const char*, std::string>;  // substituted, property, template
  std::vector<Topic> topics{{out.topic, "topic", s.topic}};
  if (out.tracks) topics.emplace_back(out.tracks_topic, "tracks-topic", s.tracks_topic);
  for (const auto& [topic, property, value] : topics) {
    if (value.find("{stream}") != std::string::npos && !stream_fits_topic(out.context.stream)) {
      GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS,
                        ("stream name '%s' cannot go into the MQTT topic '%s': it holds '/', '+' or '#' (a topic "
                         "level separator or wildcard)",
                         out.context.stream.c_str(), value.c_str()),
                        ("property stream"));
      return false;
    }
    if (topic.empty() || !MqttPublisher::valid_topic(topic)) {
      GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS,
                        ("MQTT topic '%s' is not a valid topic to publish on (empty, or with the wildcards + or #)",
                         topic.c_str()),
                        ("property %s '%s'", property, value.c_str()));
      return false;
    }
  }
  taconite::Result<std::unique_ptr<MqttPublisher>> started =
      MqttPublisher::start(mqtt, *self->counters, [self](MqttPublisher::Notice notice, const std::string& text) {
        if (notice == MqttPublisher::Notice::Warning)
          GST_ELEMENT_WARNING(self, RESOURCE, WRITE, ("%s", text.c_str()), (nullptr));
        else
          GST_ELEMENT_INFO(self, RESOURCE, WRITE, ("%s", text.c_str()), (nullptr));
      });
  if (!started) {
    GST_ELEMENT_ERROR(self, RESOURCE, OPEN_WRITE, ("%s", started.error().message.c_str()), ("method=mqtt"));
    return false;
  }
  out.mqtt = std::move(started.value());
  return true;
}

static bool start_unguarded(GstBaseTransform* trans) {
  GstTaconitePublish* self = GST_TACONITE_PUBLISH(trans);
  Settings s;
  std::string name;
  {
    ObjectLock lock(self);
    s = *self->settings;
    name = GST_OBJECT_NAME(self) ? GST_OBJECT_NAME(self) : "";
    *self->counters = std::make_shared<PublishCounters>();  // the counters count from each start
  }
  auto out = std::make_unique<Output>();
  out->context.stream = s.stream.empty() ? name : s.stream;
  out->context.roi_type = s.roi_type;
  out->context.embedding = s.embedding;
  out->context.publish_empty = s.publish_empty;
  out->topic = substitute_stream(s.topic, out->context.stream);
  out->tracks_topic = substitute_stream(s.tracks_topic, out->context.stream);
  out->frames = s.messages != PublishMessages::Tracks;
  if (s.messages != PublishMessages::Frames) {
    TrackEventsSettings t;
    t.stream = out->context.stream;
    t.roi_type = s.roi_type;
    t.timeout_frames = s.track_timeout;
    t.max_tracks = s.max_tracks;
    t.best_face.output = s.best_face;
    t.best_face.dir = s.best_face_dir;
    t.best_face.stream = out->context.stream;
    t.best_face.max_files = s.best_face_max_files;
    t.best_face.max_bytes = s.best_face_max_bytes;
    taconite::Result<std::unique_ptr<TrackEvents>> tracks =
        TrackEvents::start(t, [self](bool warning, const std::string& text) {
          if (warning)
            GST_ELEMENT_WARNING(self, RESOURCE, WRITE, ("%s", text.c_str()), ("property best-face-dir"));
          else
            GST_ELEMENT_INFO(self, RESOURCE, WRITE, ("%s", text.c_str()), ("property best-face-dir"));
        });
    if (!tracks) {
      GST_ELEMENT_ERROR(self, RESOURCE, OPEN_WRITE, ("%s", tracks.error().message.c_str()), ("property best-face-dir"));
      return false;
    }
    out->tracks = std::move(tracks.value());
  }

  if (s.method == PublishMethod::Bus) {
    // Nothing to open: each document becomes a bus message.
  } else if (s.method == PublishMethod::File) {
    taconite::Result<std::unique_ptr<JsonLinesFile>> file = JsonLinesFile::open(s.location);
    if (!file) {
      GST_ELEMENT_ERROR(self, RESOURCE, OPEN_WRITE, ("%s", file.error().message.c_str()), ("property location"));
      return false;
    }
    out->file = std::move(file.value());
  } else if (!open_mqtt(self, s, *out)) {
    return false;
  }
  delete self->output;
  self->output = out.release();
  return true;
}

static gboolean start(GstBaseTransform* trans) {
  return bool_guarded(GST_ELEMENT(trans), "taconitepublish could not start", [&] { return start_unguarded(trans); });
}

static bool end_tracks(GstTaconitePublish* self, Output& out, const char* reason, bool stopping = false);

static gboolean stop(GstBaseTransform* trans) {
  GstTaconitePublish* self = GST_TACONITE_PUBLISH(trans);
  return bool_guarded(GST_ELEMENT(trans), "taconitepublish could not stop", [&] {
    // Stopped without EOS (set to READY or NULL): the open tracks still end, before the output closes.
    if (Output* out = self->output) {
      end_tracks(self, *out, "stopped", true);
      if (out->mqtt && out->tracks) out->mqtt->drain(kStopDrainMs);
    }
    delete std::exchange(self->output, nullptr);  // disconnects; what was still pending is counted dropped
    return true;
  });
}

/* ------------------------------------------------------------------------------------------ */
/* Streaming                                                                                   */

// method=bus: posts `line` as a taconite-publish element message; false when the element has no bus.
static bool post_document(GstTaconitePublish* self, const Output& out, const std::string& topic,
                          const std::string& line) {
  const char* kind = &topic == &out.tracks_topic ? "tracks" : "faces";
  GstStructure* fields = gst_structure_new(GST_TACONITE_PUBLISH_MESSAGE_NAME, "kind", G_TYPE_STRING, kind, "stream",
                                           G_TYPE_STRING, out.context.stream.c_str(), "document", G_TYPE_STRING,
                                           line.c_str(), nullptr);
  return gst_element_post_message(GST_ELEMENT(self), gst_message_new_element(GST_OBJECT(self), fields));
}

// Sends `lines` to the file, to MQTT on `topic` or to the bus (`topic` is out.topic or
// out.tracks_topic: which tells the bus message's kind); false after posting an error (a warning
// when `stopping`: the stream is over) when the file fails.
static bool send(GstTaconitePublish* self, Output& out, const std::string& topic, std::vector<std::string> lines,
                 bool stopping = false) {
  for (std::string& line : lines) {
    if (!out.file && !out.mqtt) {  // method=bus
      if (post_document(self, out, topic, line))
        ++(*self->counters)->published;
      else
        ++(*self->counters)->dropped;
      continue;
    }
    if (out.mqtt) {
      out.mqtt->publish(topic, std::move(line));
      continue;
    }
    if (const taconite::Status written = out.file->write_line(line); !written) {
      const std::string& error = written.error().message;
      if (stopping)
        GST_ELEMENT_WARNING(self, RESOURCE, WRITE, ("%s", error.c_str()), ("the end events of the open tracks at stop"));
      else
        GST_ELEMENT_ERROR(self, RESOURCE, WRITE, ("%s", error.c_str()), (nullptr));
      return false;
    }
    ++(*self->counters)->published;
  }
  return true;
}

static void update_track_counters(GstTaconitePublish* self, const Output& out) {
  (*self->counters)->tracks_evicted = out.tracks->evicted();
  (*self->counters)->best_faces_dropped = out.tracks->faces_dropped();
}

// Strings that were not UTF-8 (a label an upstream element set, the stream name) went out with
// U+FFFD: counted (strings-repaired), and the first one warned about, naming its member.
static void update_repair_count(GstTaconitePublish* self, Output& out) {
  const taconite::json::Repairs none;
  const taconite::json::Repairs& events = out.tracks ? out.tracks->repairs() : none;
  (*self->counters)->strings_repaired = out.repairs.strings + events.strings;
  if (out.repair_warned || out.repairs.strings + events.strings == 0) return;
  out.repair_warned = true;
  const bool in_frames = out.repairs.strings != 0;
  GST_ELEMENT_WARNING(self, STREAM, FORMAT,
                      ("a string to publish is not valid UTF-8 (\"%s\" of a %s document): published with U+FFFD "
                       "in place of the bad bytes, counted in strings-repaired",
                       (in_frames ? out.repairs : events).first.c_str(), in_frames ? "faces" : "tracks"),
                      (nullptr));
}

// When track ends decided by an event happen: now, at the last buffer's PTS.
static EventTime end_time(const Output& out) {
  return EventTime{g_get_real_time(), GST_CLOCK_TIME_IS_VALID(out.last_pts) ? std::optional<std::uint64_t>(out.last_pts)
                                                                              : std::nullopt};
}

// Sends end events that came from an event rather than a buffer, and updates the counters.
static bool send_track_ends(GstTaconitePublish* self, Output& out, std::vector<std::string> lines, bool stopping) {
  const bool sent = send(self, out, out.tracks_topic, std::move(lines), stopping);
  update_track_counters(self, out);
  update_repair_count(self, out);
  return sent;
}

// Ends every open track (end of stream, flush, a new stream, a stop): their end events go out.
static bool end_tracks(GstTaconitePublish* self, Output& out, const char* reason, bool stopping) {
  if (!out.tracks) return true;
  return send_track_ends(self, out, out.tracks->end_all(reason, end_time(out)), stopping);
}

// taconitetrack ended some tracks: their end events go out now, with its reason.
static bool end_ended_tracks(GstTaconitePublish* self, Output& out, const TracksEnded& ended) {
  if (!out.tracks) return true;
  return send_track_ends(self, out, out.tracks->end_tracks(ended, end_time(out)), false);
}

static GstFlowReturn transform_ip_unguarded(GstBaseTransform* trans, GstBuffer* buffer) {
  GstTaconitePublish* self = GST_TACONITE_PUBLISH(trans);
  Output* out = self->output;
  if (!out) return GST_FLOW_FLUSHING;
  FrameContext& context = out->context;
  context.pts = GST_BUFFER_PTS(buffer);
  context.running_time = trans->segment.format == GST_FORMAT_TIME && GST_CLOCK_TIME_IS_VALID(context.pts)
                             ? gst_segment_to_running_time(&trans->segment, GST_FORMAT_TIME, context.pts)
                             : GST_CLOCK_TIME_NONE;
  context.utc_us = g_get_real_time();
  out->last_pts = context.pts;
  std::optional<std::string> document = out->frames ? face_document(buffer, context, &out->repairs) : std::nullopt;
  update_repair_count(self, *out);
  ++context.frame;
  if (document && !send(self, *out, out->topic, {std::move(*document)})) return GST_FLOW_ERROR;
  if (out->tracks) {
    const EventTime at{context.utc_us, GST_CLOCK_TIME_IS_VALID(context.pts)
                                           ? std::optional<std::uint64_t>(context.pts)
                                           : std::nullopt};
    std::vector<std::string> events = out->tracks->frame(buffer, out->info_known ? &out->info : nullptr, at);
    update_track_counters(self, *out);
    update_repair_count(self, *out);
    if (!send(self, *out, out->tracks_topic, std::move(events))) return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

static GstFlowReturn transform_ip(GstBaseTransform* trans, GstBuffer* buffer) {
  return flow_guarded(GST_ELEMENT(trans), "taconitepublish could not publish a frame's faces",
                      [&] { return transform_ip_unguarded(trans, buffer); });
}

// Reads the caps into plain ints: nothing here can throw.
static gboolean set_caps(GstBaseTransform* trans, GstCaps* incaps, GstCaps* /*outcaps*/) {
  GstTaconitePublish* self = GST_TACONITE_PUBLISH(trans);
  return bool_guarded(GST_ELEMENT(self), "taconitepublish could not take the caps.", [&]() -> bool {
    GstVideoInfo info;
    if (!self->output) return TRUE;
    if (gst_video_info_from_caps(&info, incaps)) {
      self->output->info = info;
      self->output->info_known = true;
      self->output->context.width = GST_VIDEO_INFO_WIDTH(&info);
      self->output->context.height = GST_VIDEO_INFO_HEIGHT(&info);
    } else {  // e.g. video/x-raw(memory:...) without a format we know: the size from the caps alone
      self->output->info_known = false;
      const GstStructure* s = gst_caps_get_structure(incaps, 0);
      gst_structure_get_int(s, "width", &self->output->context.width);
      gst_structure_get_int(s, "height", &self->output->context.height);
    }
    return TRUE;
  });
}

static gboolean sink_event(GstBaseTransform* trans, GstEvent* event) {
  GstTaconitePublish* self = GST_TACONITE_PUBLISH(trans);
  const bool handled = bool_guarded(GST_ELEMENT(trans), "taconitepublish could not handle an event", [&] {
    if (Output* out = self->output) {
      switch (GST_EVENT_TYPE(event)) {
        case GST_EVENT_STREAM_START:
          out->context.frame = 0;
          return end_tracks(self, *out, "stream-start");
        case GST_EVENT_FLUSH_STOP: return end_tracks(self, *out, "flush");
        case GST_EVENT_EOS: {  // what the stream produced goes out before the application stops the pipeline
          const bool ended = end_tracks(self, *out, "eos");
          if (out->mqtt) out->mqtt->drain(kEosDrainMs);
          return ended;
        }
        case GST_EVENT_CUSTOM_DOWNSTREAM:
          if (const std::optional<TracksEnded> ended = tracks_ended(event)) return end_ended_tracks(self, *out, *ended);
          // taconitetrack ended its tracks just before; the ones no tracker owns end here.
          if (gst_taconite_event_is_camera_lost(event)) return end_tracks(self, *out, "camera-lost");
          break;
        default: break;
      }
    }
    return true;
  });
  if (!handled) {
    gst_event_unref(event);
    return FALSE;
  }
  return GST_BASE_TRANSFORM_CLASS(gst_taconite_publish_parent_class)->sink_event(trans, event);
}

/* ------------------------------------------------------------------------------------------ */
/* GObject                                                                                     */

// Every property, declared once; defaults are Settings{}'s. All but the counters are read at start.
static void declare_properties(PropertyTable<GstTaconitePublish, Settings>& t) {
  constexpr Mutable ready = Mutable::ReadyOnly;
  t.enumeration("method", "Method",
                "Where the documents go: JSON lines to a file, MQTT, or element messages on the bus "
                "(taconite-publish: kind, stream, document). Default: file",
                taconite_publish_method_get_type, &Settings::method, ready);
  t.string("location", "Location",
           "method=file: the JSON-lines file (created or truncated at start; a FIFO needs its reader "
           "running, else the start fails); '-' writes to stdout. Default: \"-\"",
           &Settings::location, ready);
  t.string("stream", "Stream",
           "The document's \"stream\" (camera name) and the {stream} of the topic (one topic level: no "
           "/, + or # with method=mqtt); empty: the element's name. Default: \"\"",
           &Settings::stream, ready);
  t.string("roi-type", "ROI type",
           "roi_type of the GstVideoRegionOfInterestMeta that are faces (facedetect emits \"face\"); empty: "
           "every ROI. Default: \"face\"",
           &Settings::roi_type, ready);
  t.enumeration("embedding", "Embedding",
                "Whether each face's embedding goes into the document, and how. Default: none",
                taconite_embedding_format_get_type, &Settings::embedding, ready);
  t.boolean("publish-empty", "Publish empty frames",
            "Also publish a document (with no faces) for frames without faces. Default: false",
            &Settings::publish_empty, ready);
  t.string("host", "Host", "method=mqtt: the broker's host name or address. Default: \"localhost\"",
           &Settings::host, ready);
  t.integer("port", "Port", "method=mqtt: the broker's port (8883 is usual with TLS). Default: 1883", 1, 65535,
            &Settings::port, ready);
  t.string("topic", "Topic",
           "method=mqtt: the topic of every message; {stream} is replaced by the stream name. Default: "
           "\"taconite/{stream}/faces\"",
           &Settings::topic, ready);
  t.string("client-id", "Client id",
           "method=mqtt: the MQTT client id; empty: one generated by the library. Default: \"\"",
           &Settings::client_id, ready);
  t.integer("qos", "QoS",
            "method=mqtt: 0 (at most once) or 1 (at least once: counted published when the broker "
            "acknowledged, resent after a reconnection). Default: 1",
            0, 1, &Settings::qos, ready);
  t.string("credentials", "Credentials file",
           "method=mqtt: a file holding the user name on its first line and the password on its second "
           "(keeps them off the command line); empty: anonymous. Default: \"\"",
           &Settings::credentials, ready);
  t.string("tls-ca", "TLS CA file",
           "method=mqtt: PEM CA certificate that signed the broker's certificate; set: TLS is used. "
           "Default: \"\"",
           &Settings::tls_ca, ready);
  t.string("tls-cert", "TLS client certificate",
           "method=mqtt: PEM client certificate (with tls-key) for brokers that require one. Default: \"\"",
           &Settings::tls_cert, ready);
  t.string("tls-key", "TLS client key", "method=mqtt: PEM private key of tls-cert. Default: \"\"",
           &Settings::tls_key, ready);
  t.uint("max-pending", "Maximum pending messages",
         "method=mqtt: messages waiting to be sent or acknowledged at most, also while the broker "
         "is away; beyond, the oldest waiting one is dropped (messages-dropped). Default: 1000",
         1, kMaxMaxPending, &Settings::max_pending, ready);
  t.boolean("retry-at-start", "Retry at start",
            "method=mqtt: start without waiting for the broker and connect in the background (a "
            "warning is posted for each kind of failure) instead of failing the start with an error "
            "when no connection works within 10 s. Default: false",
            &Settings::retry_at_start, ready);
  t.enumeration("messages", "Messages",
                "What is published: a taconite-faces/1 document per frame (frames), taconite-tracks/1 events per "
                "track (tracks: new, update, end with dwell and best face), or both. Default: frames",
                taconite_publish_messages_get_type, &Settings::messages, ready);
  t.string("tracks-topic", "Tracks topic",
           "method=mqtt, messages=tracks|both: the topic of the track events; {stream} is replaced by the stream "
           "name. Default: \"taconite/{stream}/tracks\"",
           &Settings::tracks_topic, ready);
  t.uint("track-timeout", "Track timeout",
         "messages=tracks|both: a track not seen for this many frames ends (end event, reason lost). Only a "
         "fallback for tracks without taconitetrack's uid: a taconitetrack track ends when taconitetrack ends it "
         "(its reason). Default: 30",
         1, 1000000, &Settings::track_timeout, ready);
  t.uint("max-tracks", "Maximum open tracks",
         "messages=tracks|both: open tracks at most; a new track beyond ends the one not seen for longest "
         "(reason evicted, tracks-evicted). Default: 256",
         1, 65536, &Settings::max_tracks, ready);
  t.enumeration("best-face", "Best face",
                "messages=tracks|both: each track's best face (by taconiteadaface's quality), aligned 112x112, "
                "as a JPEG file in best-face-dir (path) or inline in the events (base64), or none. Default: none",
                taconite_best_face_output_get_type, &Settings::best_face, ready);
  t.string("best-face-dir", "Best face directory",
           "best-face=path: the directory of the <stream>-<track uid>.jpg files (created when missing; one that "
           "cannot be written fails the start). Default: \"\"",
           &Settings::best_face_dir, ready);
  t.uint("best-face-max-files", "Best face files at most",
         "best-face=path: files of this stream's <stream>-<track uid>.jpg pattern kept at most (those of earlier "
         "runs included); beyond, the oldest are deleted. Default: 1000",
         1, 10000000, &Settings::best_face_max_files, ready);
  t.uint64("best-face-max-bytes", "Best face bytes at most",
           "best-face=path: bytes of this stream's files kept at most (those of earlier runs included); beyond, "
           "the oldest are deleted (the newest is kept). Default: 67108864",
           1, G_MAXUINT64, &Settings::best_face_max_bytes, ready);
  t.counter("messages-published", "Messages published",
            "Documents written to the file, posted on the bus, or sent (QoS 0) / acknowledged by the broker "
            "(QoS 1), since the element started",
            [](GstTaconitePublish& self) -> guint64 { return (*self.counters)->published; });
  t.counter("messages-dropped", "Messages dropped",
            "method=mqtt: documents dropped since the element started (max-pending exceeded, lost with a QoS 0 "
            "connection, or still pending at stop); method=bus: documents that could not be posted (no bus)",
            [](GstTaconitePublish& self) -> guint64 { return (*self.counters)->dropped; });
  t.counter("tracks-evicted", "Tracks evicted",
            "messages=tracks|both: tracks ended early to keep max-tracks open, since the element started",
            [](GstTaconitePublish& self) -> guint64 { return (*self.counters)->tracks_evicted; });
  t.counter("best-faces-dropped", "Best faces dropped",
            "best-face=path|base64: better faces not kept since the element started (the writer's queue was "
            "full: not even aligned, or the file could not be written: one warning until a write works again)",
            [](GstTaconitePublish& self) -> guint64 { return (*self.counters)->best_faces_dropped; });
  t.counter("strings-repaired", "Strings repaired",
            "Strings published since the element started that were not valid UTF-8 (e.g. a label an upstream "
            "element set): their bad bytes were replaced by U+FFFD, the first one is warned about on the bus",
            [](GstTaconitePublish& self) -> guint64 { return (*self.counters)->strings_repaired; });
}

static void finalize(GObject* object) {
  GstTaconitePublish* self = GST_TACONITE_PUBLISH(object);
  delete self->output;
  delete self->settings;
  delete self->counters;
  G_OBJECT_CLASS(gst_taconite_publish_parent_class)->finalize(object);
}

static void gst_taconite_publish_init(GstTaconitePublish* self) {
  self->settings = new Settings();
  self->output = nullptr;
  self->counters = new std::shared_ptr<PublishCounters>(std::make_shared<PublishCounters>());
  // Reads metadata only: buffers pass on as they came, transform_ip sees them read-only.
  gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(self), TRUE);
}

static void gst_taconite_publish_class_init(GstTaconitePublishClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass* transform_class = GST_BASE_TRANSFORM_CLASS(klass);
  gobject_class->finalize = finalize;
  transform_class->start = GST_DEBUG_FUNCPTR(start);
  transform_class->stop = GST_DEBUG_FUNCPTR(stop);
  transform_class->transform_ip = GST_DEBUG_FUNCPTR(transform_ip);
  transform_class->set_caps = GST_DEBUG_FUNCPTR(set_caps);
  transform_class->sink_event = GST_DEBUG_FUNCPTR(sink_event);

  PropertyTable<GstTaconitePublish, Settings>::install(gobject_class, &GstTaconitePublish::settings, declare_properties);

  gst_type_mark_as_plugin_api(taconite_publish_method_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(taconite_embedding_format_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(taconite_publish_messages_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(taconite_best_face_output_get_type(), static_cast<GstPluginAPIFlags>(0));
  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);
  gst_element_class_set_static_metadata(
      element_class, "Face event publisher", "Filter/Metadata/Video",
      "Publishes each frame's faces (boxes, track ids, landmarks, identities, embeddings) as JSON documents to a "
      "JSON-lines file or an MQTT broker; video passes through",
      "taconite-adaface maintainers");
}
