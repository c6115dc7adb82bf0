#include "camera_session.hpp"

#include <gst/app/gstappsink.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <cstring>
#include <utility>

GST_DEBUG_CATEGORY_EXTERN(taconite_camera_debug);
#define GST_CAT_DEFAULT taconite_camera_debug

namespace taconite::gst {

namespace {

constexpr std::size_t kMaxErrorText = 512;

// Sets `property` on `object` when it has one (sources differ: rtspsrc, souphttpsrc, ...).
bool has_property(GstElement* element, const char* property) {
  return g_object_class_find_property(G_OBJECT_GET_CLASS(element), property) != nullptr;
}

// `text` without any copy of `secret` (a password a library might have echoed).
std::string without(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  for (std::size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 3))
    text.replace(at, secret.size(), "***");
  return text;
}

// GIO's validation failures in words, e.g. "unknown CA, bad identity".
std::string certificate_problems(guint flags) {
  static constexpr std::pair<GTlsCertificateFlags, const char*> kNames[] = {
      {G_TLS_CERTIFICATE_UNKNOWN_CA, "unknown CA"}, {G_TLS_CERTIFICATE_BAD_IDENTITY, "bad identity"},
      {G_TLS_CERTIFICATE_NOT_ACTIVATED, "not yet valid"}, {G_TLS_CERTIFICATE_EXPIRED, "expired"},
      {G_TLS_CERTIFICATE_REVOKED, "revoked"}, {G_TLS_CERTIFICATE_INSECURE, "insecure"},
      {G_TLS_CERTIFICATE_GENERIC_ERROR, "not valid"}};
  std::string out;
  for (const auto& [flag, name] : kNames)
    if (flags & flag) out += (out.empty() ? "" : ", ") + std::string(name);
  return out.empty() ? "not valid" : out;
}

Error missing(const char* factory, const char* package) {
  return Error{ErrorKind::Device, std::string("the GStreamer element '") + factory + "' is missing (install " +
                                      package + ")"};
}

// Gives the memory the torn-down source's threads freed back to the system. glibc gives each new
// streaming and decoder thread an arena of its own and keeps what it freed there (H.264: ~10 MB of RSS
// over 20 restarts while the heap in use barely moved); malloc_trim(0) trims every arena and madvises
// its free pages away (glibc >= 2.8). About a millisecond, once per torn-down attempt.
void release_freed_memory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

}  // namespace

CameraSession::CameraSession(SessionSettings settings, SessionCallbacks callbacks)
    : settings_(std::move(settings)), callbacks_(std::move(callbacks)) {}

Result<std::unique_ptr<CameraSession>> CameraSession::start(const SessionSettings& settings,
                                                            SessionCallbacks callbacks, const std::string& name) {
  std::unique_ptr<CameraSession> session(new CameraSession(settings, std::move(callbacks)));
  if (const Status built = session->build(name); !built) return built.error();
  if (gst_element_set_state(session->pipeline_, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
    return Error{ErrorKind::Io, "the source could not start"};  // its error message came first
  return session;
}

CameraSession::~CameraSession() {
  if (!pipeline_) return;
  gst_element_set_state(pipeline_, GST_STATE_NULL);  // joins the streaming threads
  GstBus* bus = gst_element_get_bus(pipeline_);
  gst_bus_set_sync_handler(bus, nullptr, nullptr, nullptr);
  gst_object_unref(bus);
  gst_object_unref(pipeline_);
  release_freed_memory();
}

Status CameraSession::build(const std::string& name) {
  pipeline_ = gst_pipeline_new((name + "-source").c_str());
  GstBus* bus = gst_element_get_bus(pipeline_);
  gst_bus_set_sync_handler(bus, on_bus_message, this, nullptr);
  gst_object_unref(bus);

  sink_ = gst_element_factory_make("appsink", "frames");
  if (!sink_) return missing("appsink", "gstreamer1.0-plugins-base");
  GstCaps* raw = gst_caps_from_string("video/x-raw");  // system memory: what the elements downstream map
  g_object_set(sink_, "caps", raw, "sync", FALSE, "async", FALSE, "enable-last-sample", FALSE, "max-buffers", 1u,
               "wait-on-eos", FALSE, nullptr);
  gst_caps_unref(raw);
  GstAppSinkCallbacks callbacks{};
  callbacks.eos = [](GstAppSink* sink, gpointer self) { on_eos(GST_ELEMENT(sink), self); };
  callbacks.new_sample = [](GstAppSink* sink, gpointer self) { return on_new_sample(GST_ELEMENT(sink), self); };
  gst_app_sink_set_callbacks(GST_APP_SINK(sink_), &callbacks, this, nullptr);
  gst_bin_add(GST_BIN(pipeline_), sink_);

  GstElement* decoder = nullptr;
  if (settings_.uri.kind == CameraSourceKind::V4l2) {
    GstElement* v4l2 = gst_element_factory_make("v4l2src", "source");
    if (!v4l2) return missing("v4l2src", "gstreamer1.0-plugins-good");
    decoder = gst_element_factory_make("decodebin", "decoder");
    if (!decoder) {
      gst_object_unref(gst_object_ref_sink(v4l2));
      return missing("decodebin", "gstreamer1.0-plugins-base");
    }
    g_object_set(v4l2, "device", settings_.uri.device.c_str(), nullptr);
    gst_bin_add_many(GST_BIN(pipeline_), v4l2, decoder, nullptr);
    gst_element_link(v4l2, decoder);
  } else {
    decoder = gst_element_factory_make("uridecodebin", "decoder");
    if (!decoder) return missing("uridecodebin", "gstreamer1.0-plugins-base");
    g_object_set(decoder, "uri", settings_.uri.uri.c_str(), nullptr);
    g_signal_connect(decoder, "source-setup", G_CALLBACK(on_source_setup), this);
    gst_bin_add(GST_BIN(pipeline_), decoder);
  }
  g_signal_connect(pipeline_, "deep-element-added", G_CALLBACK(on_element_added), this);
  g_signal_connect(decoder, "pad-added", G_CALLBACK(on_pad_added), this);
  g_signal_connect(decoder, "no-more-pads", G_CALLBACK(on_no_more_pads), this);
  return Ok{};
}

// The network source uridecodebin made: latency, transport, the CAs it trusts and the credentials.
void CameraSession::configure_source(GstElement* source) {
  const bool rtsp = settings_.uri.kind == CameraSourceKind::Rtsp;
  if (rtsp && has_property(source, "latency")) g_object_set(source, "latency", settings_.latency_ms, nullptr);
  if (rtsp && has_property(source, "protocols") && settings_.protocols != RtspProtocols::Auto)
    gst_util_set_object_arg(G_OBJECT(source), "protocols", settings_.protocols == RtspProtocols::Tcp ? "tcp" : "udp");
  if (settings_.uri.kind == CameraSourceKind::Http && has_property(source, "is-live"))
    g_object_set(source, "is-live", TRUE, nullptr);
  if (settings_.tls_database && has_property(source, "tls-database"))
    g_object_set(source, "tls-database", settings_.tls_database.get(), nullptr);
  // rtspsrc asks before it gives up on a certificate that failed validation: refused, but noted, so
  // the error can say why (its own is a bare "Failed to connect").
  if (settings_.uri.tls && g_signal_lookup("accept-certificate", G_OBJECT_TYPE(source)) != 0)
    g_signal_connect(source, "accept-certificate", G_CALLBACK(on_accept_certificate), this);
  if (settings_.credentials && has_property(source, "user-id") && has_property(source, "user-pw"))
    g_object_set(source, "user-id", settings_.credentials->username.c_str(), "user-pw",
                 settings_.credentials->password.c_str(), nullptr);
}

// The decoder's first raw video stream goes to the appsink; every other stream to a fakesink.
void CameraSession::link_pad(GstPad* pad) {
  GstCaps* caps = gst_pad_get_current_caps(pad);
  if (!caps) caps = gst_pad_query_caps(pad, nullptr);
  const GstStructure* s = caps && !gst_caps_is_empty(caps) ? gst_caps_get_structure(caps, 0) : nullptr;
  const bool video = s && gst_structure_has_name(s, "video/x-raw");
  if (caps) gst_caps_unref(caps);
  GstPad* frames = gst_element_get_static_pad(sink_, "sink");
  const bool take = video && !gst_pad_is_linked(frames);
  if (take && GST_PAD_LINK_FAILED(gst_pad_link(pad, frames)))
    GST_WARNING("%s: could not link the video stream to the frames sink", GST_OBJECT_NAME(pipeline_));
  gst_object_unref(frames);
  if (take) return;
  GstElement* ignore = gst_element_factory_make("fakesink", nullptr);
  if (!ignore) return;  // the stream stays unlinked: not-linked for it alone
  g_object_set(ignore, "sync", FALSE, "async", FALSE, nullptr);
  gst_bin_add(GST_BIN(pipeline_), ignore);
  GstPad* sink_pad = gst_element_get_static_pad(ignore, "sink");
  gst_pad_link(pad, sink_pad);
  gst_object_unref(sink_pad);
  gst_element_sync_state_with_parent(ignore);
}

void CameraSession::check_video(GstElement* decoder) {
  GstPad* frames = gst_element_get_static_pad(sink_, "sink");
  const bool linked = gst_pad_is_linked(frames);
  gst_object_unref(frames);
  if (!linked) callbacks_.failure(LossCause::Error, std::string("the source has no video stream (") +
                                                       GST_OBJECT_NAME(decoder) + " found no raw video)");
}

// The error's text and, from its debug string, the last line (the library's own words, e.g.
// "Not Found (404)"), at most kMaxErrorText bytes, valid UTF-8, without the password.
std::string CameraSession::error_text(GstMessage* message) const {
  GError* error = nullptr;
  gchar* debug = nullptr;
  gst_message_parse_error(message, &error, &debug);
  std::string text = error && error->message ? error->message : "unknown error";
  if (debug) {
    std::string detail(debug);
    if (const std::size_t newline = detail.rfind('\n'); newline != std::string::npos) detail.erase(0, newline + 1);
    if (g_ascii_strncasecmp(detail.c_str(), text.c_str(), text.size()) == 0)
      text = detail;  // "Not found" and "Not Found (404)": the longer says it all
    else if (!detail.empty() && detail.find("gst") == std::string::npos)
      text += " (" + detail + ")";
  }
  g_clear_error(&error);
  g_free(debug);
  if (const guint refused = refused_certificate_.load(); refused != 0)
    text += std::string(" (the camera's TLS certificate was refused: ") + certificate_problems(refused) +
            "; tls-ca-file names the CAs to trust)";
  if (settings_.credentials) text = without(std::move(text), settings_.credentials->password);
  if (text.size() > kMaxErrorText) text.resize(kMaxErrorText);
  gchar* valid = g_utf8_make_valid(text.c_str(), static_cast<gssize>(text.size()));
  text = valid;
  g_free(valid);
  return text;
}

gboolean CameraSession::on_accept_certificate(GstElement*, GTlsConnection*, GTlsCertificate*,
                                              GTlsCertificateFlags problems, gpointer self) {
  static_cast<CameraSession*>(self)->refused_certificate_.store(problems);
  return FALSE;
}

void CameraSession::on_source_setup(GstElement*, GstElement* source, gpointer self) {
  static_cast<CameraSession*>(self)->configure_source(source);
}

// An MJPEG camera's multipart stream holds one stream of JPEGs: said to its demuxer, decodebin
// exposes the stream at the first frame (else it waits for more streams for ever). A libav
// decoder (avdec_h264, ...) gets decoder-threads as its max-threads when set: with several cameras
// a thread per core and camera only competes with the analysis.
void CameraSession::on_element_added(GstBin*, GstBin*, GstElement* element, gpointer data) {
  const auto* self = static_cast<const CameraSession*>(data);
  GstElementFactory* factory = gst_element_get_factory(element);
  if (!factory) return;
  const char* name = GST_OBJECT_NAME(factory);
  if (g_str_equal(name, "multipartdemux") && has_property(element, "single-stream"))
    g_object_set(element, "single-stream", TRUE, nullptr);
  // HLS (and DASH) fetch a segment at a time, whose frames would leave the decoder in a burst that
  // drop=latest mostly drops: played at their timestamps instead, as the camera sent them.
  const char* klass = gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS);
  if (klass && std::strstr(klass, "Demuxer") && std::strstr(klass, "Adaptive"))
    g_object_set(self->sink_, "sync", TRUE, nullptr);
  if (self->settings_.decoder_threads > 0 && g_str_has_prefix(name, "avdec_") && has_property(element, "max-threads"))
    g_object_set(element, "max-threads", static_cast<gint>(self->settings_.decoder_threads), nullptr);
}

void CameraSession::on_pad_added(GstElement*, GstPad* pad, gpointer self) {
  static_cast<CameraSession*>(self)->link_pad(pad);
}

void CameraSession::on_no_more_pads(GstElement* decoder, gpointer self) {
  static_cast<CameraSession*>(self)->check_video(decoder);
}

GstFlowReturn CameraSession::on_new_sample(GstElement* sink, gpointer self) {
  GstSample* sample = gst_app_sink_pull_sample(GST_APP_SINK(sink));
  if (!sample) return GST_FLOW_FLUSHING;
  static_cast<CameraSession*>(self)->callbacks_.frame(sample);
  return GST_FLOW_OK;
}

void CameraSession::on_eos(GstElement*, gpointer self) {
  static_cast<CameraSession*>(self)->callbacks_.failure(LossCause::Eos, "the source ended its stream");
}

// Every message of the private pipeline stops here: errors go to the element, the rest is logged.
GstBusSyncReply CameraSession::on_bus_message(GstBus*, GstMessage* message, gpointer self) {
  auto* session = static_cast<CameraSession*>(self);
  if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) {
    session->callbacks_.failure(LossCause::Error, session->error_text(message));
  } else if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_WARNING) {
    GError* warning = nullptr;
    gst_message_parse_warning(message, &warning, nullptr);
    GST_DEBUG("%s: warning from %s: %s", GST_OBJECT_NAME(session->pipeline_), GST_MESSAGE_SRC_NAME(message),
              warning ? warning->message : "");
    g_clear_error(&warning);
  }
  gst_message_unref(message);
  return GST_BUS_DROP;
}

}  // namespace taconite::gst
