// taconiteadaface: loading the engine at READY->PAUSED, with errors that say what to do.
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include "adaface_element.hpp"
#include "debug_categories.hpp"
#include "engine_client.hpp"

#define GST_CAT_DEFAULT taconite_adaface_debug

namespace taconite::gst::adaface {

/* ------------------------------------------------------------------------------------------ */
/* Engine lifetime                                                                             */

static const char* what_to_do(taconite::ErrorKind kind) {
  switch (kind) {
    case taconite::ErrorKind::Io:
      return "Set the 'model' property to a bundle directory (manifest.txt, tensors.txt, tensors.bin) or an ONNX "
             "file with its description (model-proc) that this process can read.";
    case taconite::ErrorKind::Bundle:
      return "The model is malformed where quoted above: re-export the bundle (or write a test bundle with "
             "taconite-mkbundle), or fix the ONNX file or its description (docs/models.md).";
    case taconite::ErrorKind::Device:
      return "Choose another backend (backend=cpu or backend=cpu-reference), or check the NPU driver and device "
             "permissions.";
    case taconite::ErrorKind::Input:  // at load: a setting out of range or not for this model
      return "Check the 'threads', 'sessions', 'backend', 'precision' and 'model-proc' properties and the TACONITE_* "
             "environment variables: the value named above does not fit.";
  }
  return "";
}

gboolean load_engine(GstTaconiteAdaface* self) {
  EngineRequest request;
  GST_OBJECT_LOCK(self);
  request.bundle = self->settings->bundle;
  request.model_proc = self->settings->model_proc;
  request.backend = backend_choice_name(self->settings->backend);
  request.threads = self->settings->threads;
  request.precision = self->settings->precision;
  request.sessions = self->settings->sessions;
  const bool async_tracks = self->settings->async_tracks;
  BatchPolicy batching;
  batching.max_faces = self->settings->batch_size;
  batching.timeout = std::chrono::microseconds(self->settings->batch_timeout_us);
  GST_OBJECT_UNLOCK(self);

  if (request.bundle.empty()) {
    GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("No face-embedding model set."),
                      ("Set the 'model' property to an AdaFace IR bundle directory (write a test bundle with "
                       "taconite-mkbundle --model ir18 --out DIR) or an ONNX face embedder (docs/models.md)."));
    return FALSE;
  }
  GST_CAT_INFO_OBJECT(taconite_runtime_debug, self, "loading bundle %s with backend %s", request.bundle.c_str(),
                      request.backend.c_str());
  taconite::Result<std::unique_ptr<EngineClient>> opened = open_engine_client(request);
  if (!opened) {
    const taconite::Error& error = opened.error();
    // GST_ELEMENT_ERROR with a code chosen at run time, plus details applications can read.
    const GstResourceError code =
        error.kind == taconite::ErrorKind::Io ? GST_RESOURCE_ERROR_OPEN_READ : GST_RESOURCE_ERROR_SETTINGS;
    gst_element_message_full_with_details(
        GST_ELEMENT(self), GST_MESSAGE_ERROR, GST_RESOURCE_ERROR, code,
        g_strdup_printf("Could not load the face-embedding model '%s'.", request.bundle.c_str()),
        g_strdup_printf("%s error: %s. %s", taconite::to_string(error.kind), error.message.c_str(),
                        what_to_do(error.kind)),
        __FILE__, GST_FUNCTION, __LINE__,
        gst_structure_new("details", "bundle", G_TYPE_STRING, request.bundle.c_str(), "backend", G_TYPE_STRING,
                          request.backend.c_str(), "model-proc", G_TYPE_STRING, request.model_proc.c_str(),
                          "error-kind", G_TYPE_STRING, taconite::to_string(error.kind),
                          nullptr));
    return FALSE;
  }
  const EngineInfo& info = opened.value()->info();
  GST_CAT_INFO_OBJECT(taconite_runtime_debug, self, "loaded model '%s' (%dx%d -> %d) on backend %s (%s)",
                      info.model.c_str(), info.input_width, info.input_height, info.embed_dim, info.backend.c_str(),
                      info.backend_reason.c_str());
  for (const std::string& finding : info.diagnostics)
    GST_CAT_WARNING_OBJECT(taconite_runtime_debug, self, "bundle check: %s", finding.c_str());
  std::shared_ptr<EngineClient> engine = std::move(opened).value();
  if (const std::string& note = engine->sharing_note(); !note.empty())
    GST_ELEMENT_WARNING(self, RESOURCE, SETTINGS, ("Shared engine: %s.", note.c_str()), (nullptr));
  // Another backend's numerics (the replay's bf16-exact, an ONNX model's f32), or a shared engine an
  // element with another precision loaded.
  const std::string_view asked = taconite::precision_name(request.precision);  // a literal: NUL-terminated
  if (request.precision != taconite::Precision::Auto && info.precision != asked)
    GST_ELEMENT_WARNING(self, RESOURCE, SETTINGS,
                        ("precision=%s is not used: the engine runs %s on backend %s.", asked.data(),
                         info.precision.c_str(), info.backend.c_str()),
                        ("The precision applies to the cpu backend, and a shared engine keeps the precision of the "
                         "element that loaded it (%s).", info.backend_reason.c_str()));
  engine->set_batching(batching);
  std::shared_ptr<AsyncEmbedder> async;
  if (async_tracks) {
    // A second client of the same shared engine (no second model): the background thread's own.
    taconite::Result<std::unique_ptr<EngineClient>> second = open_engine_client(request);
    if (!second) {
      GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS, ("Could not start the background embedder (async-tracks)."),
                        ("%s error: %s", taconite::to_string(second.error().kind), second.error().message.c_str()));
      return FALSE;
    }
    second.value()->set_batching(batching);
    async = std::make_shared<AsyncEmbedder>(std::move(second).value());
  }
  self->engine->set(std::move(engine), std::move(async));
  return TRUE;
}

}  // namespace taconite::gst::adaface
