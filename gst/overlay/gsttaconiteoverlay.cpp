/**
 * SECTION:element-taconiteoverlay
 * @title: taconiteoverlay
 *
 * Draws what the face elements found on the video itself, so a pipeline can be watched: for each
 * face ROI (#GstVideoRegionOfInterestMeta of type `roi-type`) its box, its 5 landmarks as dots
 * (`landmarks` param) and a label "#<track id> <name> <confidence>" (`object_id` and `identity`
 * params), coloured by the identity state taconiteidentify writes (`identity.label_state`):
 * pending yellow, known green, unknown red, no identity (untracked, or no taconiteidentify
 * upstream) white. The label sits on a black band above the box (else below it, else inside its
 * top edge), moved further when it would cover a label drawn before on the frame. Line width, dots
 * and font are the properties' sizes up to 480 lines and grow with taller frames (at most 4 times).
 *
 * Drawing is in place (OpenCV on the mapped frame): packed RGB-family frames get the colour's
 * bytes, I420 and NV12 its Y'CbCr (the caps' matrix and range) on the luma and the half-resolution
 * chroma planes. A frame without face ROIs passes untouched; one with ROIs is made writable (its
 * memory copied only when shared). At most `max-rois` ROIs are drawn per frame; parts of boxes and
 * points outside the frame are not drawn.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 filesrc location=video.mp4 ! decodebin ! videoconvert ! \
 *     taconitedetect model=face_detection_yunet_2023mar.onnx ! taconitetrack ! \
 *     taconiteadaface bundle=/path/to/bundle ! taconiteidentify gallery=gallery.db ! \
 *     taconiteoverlay ! videoconvert ! openh264enc ! h264parse ! mp4mux ! filesink location=out.mp4
 * ]| Writes the video with every face's box, landmarks and name drawn on it.
 *
 * Since: 0.5
 */
#include "gsttaconiteoverlay.h"

#include <gst/video/video.h>

#include <string>
#include <vector>

#include "cxx_boundary.hpp"
#include "face_drawing.hpp"
#include "face_selection.hpp"
#include "property_table.hpp"
#include "readable_frame.hpp"
#include "video_formats.hpp"

GST_DEBUG_CATEGORY_STATIC(taconite_overlay_debug);
#define GST_CAT_DEFAULT taconite_overlay_debug

namespace {

using namespace taconite::gst;

constexpr guint kMaxLineWidth = 16;
constexpr guint kMaxMaxRois = 256;

// Property values; guarded by the object lock.
struct Settings {
  std::string roi_type = "face";
  bool enabled = true;
  bool draw_landmarks = true;
  bool draw_labels = true;
  guint line_width = 2;
  double font_scale = 0.5;
  guint max_rois = 64;
};

// Streaming state: the negotiated caps.
struct Stream {
  GstVideoInfo info;
  bool have_info = false;
};

}  // namespace

struct _GstTaconiteOverlay {
  GstBaseTransform parent;
  Settings* settings;
  Stream* stream;
};

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE(TACONITE_ADAFACE_VIDEO_FORMATS)));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE(TACONITE_ADAFACE_VIDEO_FORMATS)));

G_DEFINE_TYPE_WITH_CODE(GstTaconiteOverlay, gst_taconite_overlay, GST_TYPE_BASE_TRANSFORM,
                        GST_DEBUG_CATEGORY_INIT(taconite_overlay_debug, "taconiteoverlay", 0,
                                                "taconiteoverlay element"));
GST_ELEMENT_REGISTER_DEFINE(taconiteoverlay, "taconiteoverlay", GST_RANK_NONE, GST_TYPE_TACONITE_OVERLAY);

/* ------------------------------------------------------------------------------------------ */
/* Frames                                                                                      */

static Settings current_settings(GstTaconiteOverlay* self) {
  GST_OBJECT_LOCK(self);
  const Settings settings = *self->settings;
  GST_OBJECT_UNLOCK(self);
  return settings;
}

// The ROIs to draw: the buffer's of `roi_type`, the first max-rois of them; none when disabled.
static std::vector<GstVideoRegionOfInterestMeta*> rois_to_draw(GstBuffer* buffer, const Settings& settings) {
  if (!settings.enabled) return {};
  const GQuark roi_type = g_quark_from_string(settings.roi_type.c_str());
  std::vector<GstVideoRegionOfInterestMeta*> rois = buffer_rois(buffer);
  std::erase_if(rois, [&](const GstVideoRegionOfInterestMeta* roi) { return roi->roi_type != roi_type; });
  if (rois.size() > settings.max_rois) rois.resize(settings.max_rois);
  return rois;
}

// The mapped frame's planes as drawing targets, each with its own size.
static OverlayCanvas canvas_of(const ReadableFrame& frame) {
  const GstVideoFrame& f = frame.get();
  std::vector<std::uint8_t*> planes;
  std::vector<cv::Size> sizes;
  for (guint plane = 0; plane < GST_VIDEO_FRAME_N_PLANES(&f); ++plane) {
    gint components[GST_VIDEO_MAX_COMPONENTS];
    gst_video_format_info_component(f.info.finfo, plane, components);
    planes.push_back(static_cast<std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&f, plane)));
    sizes.emplace_back(GST_VIDEO_FRAME_COMP_WIDTH(&f, components[0]), GST_VIDEO_FRAME_COMP_HEIGHT(&f, components[0]));
  }
  return OverlayCanvas(frame.view(), planes, sizes);
}

/* ------------------------------------------------------------------------------------------ */
/* GstBaseTransform                                                                            */

static gboolean stop(GstBaseTransform* trans) {  // nothing here throws
  GST_TACONITE_OVERLAY(trans)->stream->have_info = false;
  return TRUE;
}

static gboolean set_caps(GstBaseTransform* trans, GstCaps* incaps, GstCaps* /*outcaps*/) {  // nothing here throws
  auto* self = GST_TACONITE_OVERLAY(trans);
  if (!gst_video_info_from_caps(&self->stream->info, incaps)) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("Unusable video caps."),
                      ("caps %" GST_PTR_FORMAT, static_cast<gpointer>(incaps)));
    return FALSE;
  }
  self->stream->have_info = true;
  return TRUE;
}

static GstFlowReturn prepare_output_buffer(GstBaseTransform* trans, GstBuffer* input, GstBuffer** output) {
  auto* self = GST_TACONITE_OVERLAY(trans);
  return flow_guarded(GST_ELEMENT(self), "Could not prepare a video buffer for drawing its faces.", [&] {
    if (rois_to_draw(input, current_settings(self)).empty()) {
      *output = input;  // nothing to draw: passed on untouched, even when shared
      return GST_FLOW_OK;
    }
    return GST_BASE_TRANSFORM_CLASS(gst_taconite_overlay_parent_class)->prepare_output_buffer(trans, input, output);
  });
}

static GstFlowReturn transform_ip_unguarded(GstTaconiteOverlay* self, GstBuffer* buffer) {
  const Settings settings = current_settings(self);
  const std::vector<GstVideoRegionOfInterestMeta*> rois = rois_to_draw(buffer, settings);
  // Not writable: prepare_output_buffer found nothing to draw and passed the shared buffer on.
  if (rois.empty() || !gst_buffer_is_writable(buffer)) return GST_FLOW_OK;
  if (!self->stream->have_info) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("A buffer arrived before caps."), (nullptr));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  ReadableFrame frame;
  if (const taconite::Status mapped = frame.map(self->stream->info, buffer, static_cast<GstMapFlags>(GST_MAP_READ | GST_MAP_WRITE));
      !mapped) {
    GST_ELEMENT_ERROR(self, STREAM, FAILED, ("A video buffer does not hold the frame it describes."),
                      ("%s", mapped.error().message.c_str()));
    return GST_FLOW_ERROR;
  }
  OverlayCanvas canvas = canvas_of(frame);
  const OverlayStyle style = style_for_frame({static_cast<int>(settings.line_width), settings.font_scale,
                                              settings.draw_landmarks, settings.draw_labels},
                                             canvas.height());
  LabelLayout labels(canvas.width(), canvas.height());
  for (const GstVideoRegionOfInterestMeta* roi : rois) draw_face(canvas, read_face_mark(roi), style, labels);
  GST_LOG_OBJECT(self, "drew %zu faces", rois.size());
  return GST_FLOW_OK;
}

static GstFlowReturn transform_ip(GstBaseTransform* trans, GstBuffer* buffer) {
  auto* self = GST_TACONITE_OVERLAY(trans);
  // OpenCV reports failures by exceptions; none may cross into GStreamer's C code.
  return flow_guarded(GST_ELEMENT(self), "Could not draw the faces of a video buffer.",
                      [&] { return transform_ip_unguarded(self, buffer); });
}

/* ------------------------------------------------------------------------------------------ */
/* GObject                                                                                     */

// Every property, declared once; defaults are Settings{}'s.
static void declare_properties(PropertyTable<GstTaconiteOverlay, Settings>& t) {
  t.string("roi-type", "ROI type",
           "roi_type of the GstVideoRegionOfInterestMeta drawn (the face elements write \"face\"). Default: \"face\"",
           &Settings::roi_type, Mutable::AnyTime);
  t.boolean("enabled", "Enabled",
            "Draw on the frames; false passes every buffer on untouched. Default: true", &Settings::enabled,
            Mutable::AnyTime);
  t.boolean("draw-landmarks", "Draw landmarks",
            "Draw each face's landmarks (the 5 alignment points) as dots. Default: true", &Settings::draw_landmarks,
            Mutable::AnyTime);
  t.boolean("draw-labels", "Draw labels",
            "Draw each face's label \"#<track id> <name> <confidence>\" on a black band above its box. Default: true",
            &Settings::draw_labels, Mutable::AnyTime);
  t.uint("line-width", "Line width",
         "Width of the box edges in pixels on frames up to 480 lines (taller frames: times height/480, at most 4), "
         "drawn inside the box (dots have this radius + 1, the text half of it). Default: 2",
         1, kMaxLineWidth, &Settings::line_width, Mutable::AnyTime);
  t.real("font-scale", "Font scale",
         "Scale of the label font on frames up to 480 lines (taller frames: times height/480, at most 4; OpenCV's "
         "Hershey simplex, 1 is about 22 pixels high). Default: 0.5", 0.2, 4.0,
         &Settings::font_scale, Mutable::AnyTime);
  t.uint("max-rois", "Maximum ROIs",
         "Draw at most this many ROIs per frame (the first ones of the buffer); the others are left undrawn. "
         "Default: 64",
         1, kMaxMaxRois, &Settings::max_rois, Mutable::AnyTime);
}

static void finalize(GObject* object) {
  auto* self = GST_TACONITE_OVERLAY(object);
  delete self->stream;
  delete self->settings;
  G_OBJECT_CLASS(gst_taconite_overlay_parent_class)->finalize(object);
}

static void gst_taconite_overlay_init(GstTaconiteOverlay* self) {
  self->settings = new Settings();
  self->stream = new Stream();
  gst_video_info_init(&self->stream->info);
  gst_base_transform_set_in_place(GST_BASE_TRANSFORM(self), TRUE);
  gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(self), FALSE);
}

static void gst_taconite_overlay_class_init(GstTaconiteOverlayClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass* transform_class = GST_BASE_TRANSFORM_CLASS(klass);
  gobject_class->finalize = finalize;
  transform_class->stop = GST_DEBUG_FUNCPTR(stop);
  transform_class->set_caps = GST_DEBUG_FUNCPTR(set_caps);
  transform_class->prepare_output_buffer = GST_DEBUG_FUNCPTR(prepare_output_buffer);
  transform_class->transform_ip = GST_DEBUG_FUNCPTR(transform_ip);

  PropertyTable<GstTaconiteOverlay, Settings>::install(gobject_class, &GstTaconiteOverlay::settings,
                                                       declare_properties);

  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);
  gst_element_class_set_static_metadata(
      element_class, "Face overlay", "Filter/Effect/Video",
      "Draws face ROIs on the video: boxes, landmarks, track ids and names coloured by identity state",
      "taconite-adaface maintainers");
}
