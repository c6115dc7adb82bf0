// One attempt at a camera: a private pipeline (uridecodebin, or v4l2src ! decodebin, into an appsink)
// that decodes its video to raw frames in system memory. taconitecamera owns it and replaces it on
// every restart; its errors and its end go to the element through callbacks, never to the
// application's bus. Audio and other streams are decoded into a fakesink and ignored.
#pragma once

#include <gst/gst.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "camera_enums.hpp"
#include "camera_supervisor.hpp"
#include "camera_uri.hpp"
#include "credentials_file.hpp"
#include "tls_ca_file.hpp"
#include "taconite/error.hpp"

namespace taconite::gst {

struct SessionSettings {
  CameraUri uri;
  guint latency_ms = 200;  // rtspsrc's jitter buffer
  RtspProtocols protocols = RtspProtocols::Tcp;
  std::optional<Credentials> credentials;  // for rtspsrc / souphttpsrc
  TlsDatabase tls_database;                // rtsps / https: the CAs of tls-ca-file; null: the system's
  guint decoder_threads = 0;  // a libav decoder's max-threads; 0: its own choice (one per core)
};

struct SessionCallbacks {
  // A decoded frame (transfer full), on the source's streaming thread; it may block (drop=none).
  std::function<void(GstSample*)> frame;
  // The source failed or ended; from any thread, possibly more than once per session. The message
  // never holds the password.
  std::function<void(LossCause, const std::string&)> failure;
};

class CameraSession {
 public:
  // Builds the pipeline and sets it playing. An error when an element is missing or the pipeline
  // refuses to start at once; later problems come through `callbacks.failure`.
  static Result<std::unique_ptr<CameraSession>> start(const SessionSettings& settings, SessionCallbacks callbacks,
                                                      const std::string& name);
  // Stops the pipeline (its streaming threads are joined) and gives the memory they freed back to
  // the system: never call it from one of them, and make sure `frame` does not block forever meanwhile.
  ~CameraSession();
  CameraSession(const CameraSession&) = delete;
  CameraSession& operator=(const CameraSession&) = delete;

 private:
  CameraSession(SessionSettings settings, SessionCallbacks callbacks);

  Status build(const std::string& name);
  void configure_source(GstElement* source);
  void link_pad(GstPad* pad);
  void check_video(GstElement* decoder);
  std::string error_text(GstMessage* message) const;

  static void on_source_setup(GstElement*, GstElement* source, gpointer self);
  static gboolean on_accept_certificate(GstElement*, GTlsConnection*, GTlsCertificate*, GTlsCertificateFlags problems,
                                        gpointer self);
  static void on_element_added(GstBin*, GstBin*, GstElement* element, gpointer self);
  static void on_pad_added(GstElement*, GstPad* pad, gpointer self);
  static void on_no_more_pads(GstElement* decoder, gpointer self);
  static GstFlowReturn on_new_sample(GstElement* sink, gpointer self);
  static void on_eos(GstElement* sink, gpointer self);
  static GstBusSyncReply on_bus_message(GstBus*, GstMessage* message, gpointer self);

  SessionSettings settings_;
  SessionCallbacks callbacks_;
  GstElement* pipeline_ = nullptr;
  GstElement* sink_ = nullptr;  // the appsink (owned by the pipeline)
  std::atomic<guint> refused_certificate_{0};  // GTlsCertificateFlags of a certificate rtspsrc refused
};

}  // namespace taconite::gst
