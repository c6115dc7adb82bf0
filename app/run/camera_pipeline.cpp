#include "camera_pipeline.hpp"

#include "pipeline_launch.hpp"

namespace taconite::app {

Result<std::unique_ptr<CameraPipeline>> CameraPipeline::build(const Config& config, const CameraConfig& camera,
                                                              const std::vector<PipelineObserver*>& observers,
                                                              MessageHandler handler) {
  std::unique_ptr<CameraPipeline> self(new CameraPipeline(camera, std::move(handler)));
  self->observers_ = observers;
  const std::vector<std::string> words = pipeline_words(config, camera);
  std::vector<const gchar*> argv;
  for (const std::string& word : words) argv.push_back(word.c_str());
  argv.push_back(nullptr);
  GError* error = nullptr;
  GstElement* pipeline = gst_parse_launchv(argv.data(), &error);
  if (!pipeline || error) {
    std::string message = error ? error->message : "unknown error";
    g_clear_error(&error);
    if (pipeline) gst_object_unref(pipeline);
    return Error{ErrorKind::Input, camera.name + ": the pipeline cannot be built: " + message};
  }
  self->pipeline_ = pipeline;
  gst_object_set_name(GST_OBJECT(pipeline), camera.name.c_str());
  self->bus_ = gst_element_get_bus(pipeline);
  gst_bus_add_watch(self->bus_, &CameraPipeline::on_bus, self.get());
  GstElement* publish = gst_bin_get_by_name(GST_BIN(pipeline), kPublishElementName);
  if (publish) {
    GstPad* src = gst_element_get_static_pad(publish, "src");
    const auto types = static_cast<GstPadProbeType>(GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM);
    gst_pad_add_probe(src, types, &CameraPipeline::on_probe, self.get(), nullptr);
    gst_object_unref(src);
    gst_object_unref(publish);
  }
  return self;
}

CameraPipeline::~CameraPipeline() {
  stop();
  if (bus_) {
    gst_bus_remove_watch(bus_);
    gst_object_unref(bus_);
  }
  if (pipeline_) gst_object_unref(pipeline_);
}

bool CameraPipeline::start() {
  return gst_element_set_state(pipeline_, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE;
}

void CameraPipeline::stop() {
  if (!pipeline_ || stopped_) return;
  stopped_ = true;
  gst_element_set_state(pipeline_, GST_STATE_READY);
  // The end events taconitepublish posted while stopping, and whatever came before them.
  while (GstMessage* message = gst_bus_pop(bus_)) {
    handler_(*this, message);
    gst_message_unref(message);
  }
  gst_element_set_state(pipeline_, GST_STATE_NULL);
}

gboolean CameraPipeline::on_bus(GstBus* /*bus*/, GstMessage* message, gpointer data) {
  auto* self = static_cast<CameraPipeline*>(data);
  self->handler_(*self, message);
  return G_SOURCE_CONTINUE;
}

GstPadProbeReturn CameraPipeline::on_probe(GstPad* /*pad*/, GstPadProbeInfo* info, gpointer data) {
  auto* self = static_cast<CameraPipeline*>(data);
  if (info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) {
    GstEvent* event = GST_PAD_PROBE_INFO_EVENT(info);
    if (GST_EVENT_TYPE(event) == GST_EVENT_CAPS) {
      GstCaps* caps = nullptr;
      gst_event_parse_caps(event, &caps);
      self->info_known_ = caps && gst_video_info_from_caps(&self->info_, caps);
    }
    return GST_PAD_PROBE_OK;
  }
  GstBuffer* buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  if (!buffer) return GST_PAD_PROBE_OK;
  if (!self->first_frame_seen_) {
    self->first_frame_seen_ = true;
    gst_element_post_message(self->pipeline_,
                             gst_message_new_application(GST_OBJECT(self->pipeline_),
                                                         gst_structure_new_empty(kFirstFrameMessage)));
  }
  if (!self->info_known_) return GST_PAD_PROBE_OK;
  for (PipelineObserver* observer : self->observers_) {
    try {
      observer->on_frame(self->camera_.name, buffer, self->info_);
    } catch (...) {  // a component's failure must not take the camera's streaming thread down
    }
  }
  return GST_PAD_PROBE_OK;
}

}  // namespace taconite::app
