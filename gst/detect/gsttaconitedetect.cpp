/**
 * SECTION:element-taconitedetect
 * @title: taconitedetect
 *
 * Finds faces with the YuNet DNN detector (OpenCV Zoo's `face_detection_yunet_2023mar.onnx`, run
 * on the CPU by oneDNN or OpenCV DNN: `runtime`) and adds one #GstVideoRegionOfInterestMeta of type
 * `face` per face, with params that the other taconite elements read:
 *
 * - `detection`: `confidence` (double, 0..1) and `label` ("face");
 * - `landmarks`: `x` and `y` arrays of 5 doubles, frame pixels, in the alignment template's order
 *   (image-left eye, image-right eye, nose tip, image-left and image-right mouth corners), so
 *   `taconiteadaface` aligns the faces with no landmark element in between.
 *
 * Each new ROI gets an id no other ROI of the buffer has. A face that overlaps a face ROI the
 * buffer already carries (IoU of at least 0.5, e.g. from an upstream `facedetect`) is not added
 * again; that ROI gets the landmarks when it has none. Frames are scaled to fit the network input
 * (`input-width` x `input-height`) with their aspect ratio kept and padded; boxes and points are
 * mapped back to the frame. With `interval` N, the detector runs on one frame in N and the frames
 * in between carry the last detection's faces (a `detection` param with `fresh` FALSE). The model
 * is loaded (and checked) in the READY to PAUSED transition: a missing, unreadable or wrong model is
 * an error naming the file.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! \
 *     taconitedetect model=face_detection_yunet_2023mar.onnx ! taconitetrack ! \
 *     taconiteadaface bundle=/path/to/bundle reinfer-interval=5 ! fakesink
 * ]| Aligned embeddings of the faces in a camera stream, without dlib.
 *
 * Since: 0.3
 */
#include "gsttaconitedetect.h"

#include <gst/taconite/gsttaconiteface.h>
#include <gst/video/video.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "box_geometry.hpp"
#include "carried_detections.hpp"
#include "cxx_boundary.hpp"
#include "face_selection.hpp"
#include "property_table.hpp"
#include "readable_frame.hpp"
#include "rgb_conversion.hpp"
#include "roi_params.hpp"
#include "video_formats.hpp"
#include "yunet_detector.hpp"

GST_DEBUG_CATEGORY_STATIC(taconite_detect_debug);
#define GST_CAT_DEFAULT taconite_detect_debug

namespace {

using namespace taconite::gst;
using taconite::vision::Box;
using taconite::vision::iou;
using taconite::vision::DetectedFace;
using taconite::vision::ImageView;
using taconite::vision::Point2;
using taconite::vision::YuNetDetector;
using taconite::vision::YuNetOptions;
using taconite::vision::YuNetRuntime;

constexpr guint kDefaultInterval = 1;
constexpr guint kDefaultMinFaceSize = 0;
constexpr guint kMaxMinFaceSize = 4096;
constexpr double kDuplicateIou = 0.5;  // a detection this close to an upstream face ROI is that face

// Property values and their defaults (see declare_properties()); guarded by the object lock.
struct Settings {
  std::string model;
  guint input_width = static_cast<guint>(YuNetOptions{}.input_width);
  guint input_height = static_cast<guint>(YuNetOptions{}.input_height);
  double score_threshold = YuNetOptions{}.score_threshold;
  double nms_threshold = YuNetOptions{}.nms_threshold;
  guint max_faces = static_cast<guint>(YuNetOptions{}.max_faces);
  guint threads = static_cast<guint>(YuNetOptions{}.threads);
  guint min_face_size = kDefaultMinFaceSize;
  guint interval = kDefaultInterval;
  YuNetRuntime runtime = YuNetOptions{}.runtime;
  std::string active_runtime;  // what the loaded detector runs on ("" before a load)

  YuNetOptions detector() const {
    YuNetOptions options;
    options.input_width = static_cast<int>(input_width);
    options.input_height = static_cast<int>(input_height);
    options.score_threshold = static_cast<float>(score_threshold);
    options.nms_threshold = static_cast<float>(nms_threshold);
    options.max_faces = static_cast<int>(max_faces);
    options.threads = static_cast<int>(threads);
    options.runtime = runtime;
    return options;
  }
};

// Streaming state: touched by the streaming thread, and by start/stop/events that it serializes with.
struct Stream {
  std::unique_ptr<YuNetDetector> detector;
  GstVideoInfo info;
  bool have_info = false;
  taconite::vision::CarriedDetections<DetectedFace> faces;  // frame pixels
};

}  // namespace

struct _GstTaconiteDetect {
  GstBaseTransform parent;
  Settings* settings;
  Stream* stream;
};


static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE(TACONITE_ADAFACE_VIDEO_FORMATS)));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE(TACONITE_ADAFACE_VIDEO_FORMATS)));

G_DEFINE_TYPE_WITH_CODE(GstTaconiteDetect, gst_taconite_detect, GST_TYPE_BASE_TRANSFORM,
                        GST_DEBUG_CATEGORY_INIT(taconite_detect_debug, "taconitedetect", 0,
                                                "taconitedetect element"));
GST_ELEMENT_REGISTER_DEFINE(taconitedetect, "taconitedetect", GST_RANK_NONE, GST_TYPE_TACONITE_DETECT);

/* ------------------------------------------------------------------------------------------ */
/* Faces                                                                                       */

// The face clipped to the frame, or false when nothing of it is inside.
static bool clip_to_frame(cv::Rect2f box, int width, int height, cv::Rect* clipped) {
  const double x0 = std::max(0.0, std::floor(static_cast<double>(box.x)));
  const double y0 = std::max(0.0, std::floor(static_cast<double>(box.y)));
  const double x1 = std::min<double>(width, std::ceil(static_cast<double>(box.x) + box.width));
  const double y1 = std::min<double>(height, std::ceil(static_cast<double>(box.y) + box.height));
  if (!(x1 > x0 && y1 > y0)) return false;
  *clipped = cv::Rect(static_cast<int>(x0), static_cast<int>(y0), static_cast<int>(x1 - x0), static_cast<int>(y1 - y0));
  return true;
}

static void write_landmarks(GstVideoRegionOfInterestMeta* roi, const DetectedFace& face) {
  std::array<Point2, 5> points;
  for (std::size_t i = 0; i < points.size(); ++i) points[i] = {face.landmarks[i].x, face.landmarks[i].y};
  set_roi_points(roi, "landmarks", points);
}

// Adds the faces to the buffer: a new `face` ROI for each one no upstream face ROI already holds.
static void write_faces(GstTaconiteDetect* self, GstBuffer* buffer, const std::vector<DetectedFace>& faces,
                        bool fresh) {
  const int width = GST_VIDEO_INFO_WIDTH(&self->stream->info), height = GST_VIDEO_INFO_HEIGHT(&self->stream->info);
  const GQuark face_type = g_quark_from_static_string("face");
  std::vector<GstVideoRegionOfInterestMeta*> upstream = buffer_rois(buffer);
  std::erase_if(upstream, [&](const GstVideoRegionOfInterestMeta* roi) { return roi->roi_type != face_type; });

  std::vector<std::pair<const DetectedFace*, cv::Rect>> added;
  for (const DetectedFace& face : faces) {
    cv::Rect box;
    if (!clip_to_frame(face.box, width, height, &box)) continue;
    const Box ours{static_cast<double>(box.x), static_cast<double>(box.y), static_cast<double>(box.width),
                   static_cast<double>(box.height)};
    auto same = std::find_if(upstream.begin(), upstream.end(), [&](const GstVideoRegionOfInterestMeta* roi) {
      return iou(ours, Box{static_cast<double>(roi->x), static_cast<double>(roi->y), static_cast<double>(roi->w),
                           static_cast<double>(roi->h)}) >= kDuplicateIou;  // doubles: any upstream box is safe
    });
    if (same == upstream.end()) {
      added.emplace_back(&face, box);
    } else if (!gst_taconite_roi_has_param(*same, "landmarks")) {
      write_landmarks(*same, face);
    }
  }
  const std::vector<gint> ids = unused_roi_ids(buffer, added.size());
  for (std::size_t i = 0; i < added.size() && i < ids.size(); ++i) {
    const auto& [face, box] = added[i];
    GstVideoRegionOfInterestMeta* roi = gst_buffer_add_video_region_of_interest_meta(
        buffer, "face", static_cast<guint>(box.x), static_cast<guint>(box.y), static_cast<guint>(box.width),
        static_cast<guint>(box.height));
    roi->id = ids[i];
    gst_taconite_roi_set_detection(roi, face->score);
    gst_taconite_roi_set_fresh(roi, fresh);
    write_landmarks(roi, *face);
  }
}

// The frame's faces, best first, with min-face-size applied.
static std::vector<DetectedFace> detect_faces(GstTaconiteDetect* self, const ImageView& frame, guint min_face_size) {
  YuNetDetector& detector = *self->stream->detector;
  const cv::Size size(frame.width, frame.height);
  // Scaled to the network input on the frame's own planes: only the scaling reads the whole frame.
  const cv::Mat fitted = taconite::vision::scaled_frame_rgb(frame, detector.fitted_size(size));
  std::vector<DetectedFace> faces = detector.detect_fitted(fitted, size, /*rgb_order=*/true);
  std::erase_if(faces, [&](const DetectedFace& f) { return std::min(f.box.width, f.box.height) < min_face_size; });
  GST_LOG_OBJECT(self, "detected %zu faces", faces.size());
  return faces;
}

/* ------------------------------------------------------------------------------------------ */
/* GstBaseTransform                                                                            */

static bool load_detector(GstTaconiteDetect* self) {
  GST_OBJECT_LOCK(self);
  const std::string path = self->settings->model;
  const YuNetOptions options = self->settings->detector();
  GST_OBJECT_UNLOCK(self);
  if (const taconite::Status valid = taconite::vision::validate(options); !valid) {
    GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS, ("Invalid face detector settings."),
                      ("%s", valid.error().message.c_str()));
    return false;
  }
  if (path.empty()) {
    GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("No face detection model given."),
                      ("Set the 'model' property to OpenCV Zoo's face_detection_yunet_2023mar.onnx "
                       "(docs/models.md says where to get it)."));
    return false;
  }
  auto loaded = YuNetDetector::load(path, options);
  if (!loaded) {
    GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ, ("Could not load the face detection model %s.", path.c_str()),
                      ("%s", loaded.error().message.c_str()));
    return false;
  }
  self->stream->detector = std::move(loaded.value());
  const YuNetDetector& detector = *self->stream->detector;
  GST_OBJECT_LOCK(self);
  self->settings->active_runtime = taconite::vision::runtime_name(detector.runtime());
  GST_OBJECT_UNLOCK(self);
  GST_INFO_OBJECT(self, "loaded YuNet model %s, network input %dx%d, runtime %s (%s)", path.c_str(),
                  options.input_width, options.input_height, taconite::vision::runtime_name(detector.runtime()),
                  detector.runtime_reason().c_str());
  return true;
}

static gboolean start(GstBaseTransform* trans) {
  auto* self = GST_TACONITE_DETECT(trans);
  return bool_guarded(GST_ELEMENT(self), "Could not load the face detection model.",
                      [&] { return load_detector(self); });
}

static gboolean stop(GstBaseTransform* trans) {
  auto* self = GST_TACONITE_DETECT(trans);
  return bool_guarded(GST_ELEMENT(self), "Could not stop taconitedetect.", [&]() -> bool {
    self->stream->detector.reset();
    self->stream->have_info = false;
    self->stream->faces.reset();
    return TRUE;
  });
}

static gboolean set_caps(GstBaseTransform* trans, GstCaps* incaps, GstCaps* /*outcaps*/) {
  auto* self = GST_TACONITE_DETECT(trans);
  return bool_guarded(GST_ELEMENT(self), "taconitedetect could not take the caps.", [&]() -> bool {
    if (!gst_video_info_from_caps(&self->stream->info, incaps)) {
      GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("Unusable video caps."),
                        ("caps %" GST_PTR_FORMAT, static_cast<gpointer>(incaps)));
      return FALSE;
    }
    self->stream->have_info = true;
    self->stream->faces.reset();  // the boxes were for the old frame size
    return TRUE;
  });
}

static gboolean sink_event(GstBaseTransform* trans, GstEvent* event) {
  auto* self = GST_TACONITE_DETECT(trans);
  return bool_guarded(GST_ELEMENT(self), "taconitedetect could not handle an event.", [&]() -> bool {
    if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP || GST_EVENT_TYPE(event) == GST_EVENT_STREAM_START)
      self->stream->faces.reset();
    return GST_BASE_TRANSFORM_CLASS(gst_taconite_detect_parent_class)->sink_event(trans, event);
  });
}

static GstFlowReturn detect_in_place(GstTaconiteDetect* self, GstBuffer* buffer) {
  GST_OBJECT_LOCK(self);
  const guint interval = self->settings->interval;
  const guint min_face_size = self->settings->min_face_size;
  GST_OBJECT_UNLOCK(self);
  Stream& stream = *self->stream;
  if (!stream.have_info) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("A buffer arrived before caps."), (nullptr));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  const bool fresh = stream.faces.due(interval);
  if (fresh) {
    ReadableFrame frame;
    if (const taconite::Status mapped = frame.map(stream.info, buffer); !mapped) {
      GST_ELEMENT_ERROR(self, STREAM, FAILED, ("A video buffer does not hold the frame it describes."),
                        ("%s", mapped.error().message.c_str()));
      return GST_FLOW_ERROR;
    }
    stream.faces.detected(detect_faces(self, frame.view(), min_face_size));
  }
  write_faces(self, buffer, stream.faces.take(), fresh);  // the frame is unmapped: the buffer takes metas again
  return GST_FLOW_OK;
}

static GstFlowReturn transform_ip(GstBaseTransform* trans, GstBuffer* buffer) {
  auto* self = GST_TACONITE_DETECT(trans);
  return flow_guarded(GST_ELEMENT(self), "Could not detect the faces of a video buffer.",
                      [&] { return detect_in_place(self, buffer); });
}

/* ------------------------------------------------------------------------------------------ */
/* GObject                                                                                     */

static void finalize(GObject* object) {
  auto* self = GST_TACONITE_DETECT(object);
  delete self->stream;
  delete self->settings;
  G_OBJECT_CLASS(gst_taconite_detect_parent_class)->finalize(object);
}

static void gst_taconite_detect_init(GstTaconiteDetect* self) {
  self->settings = new Settings();
  self->stream = new Stream();
  gst_video_info_init(&self->stream->info);
  gst_base_transform_set_in_place(GST_BASE_TRANSFORM(self), TRUE);
  gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(self), FALSE);
}

static GType detect_runtime_get_type() {
  static gsize type = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(YuNetRuntime::Auto), "oneDNN where built and it runs the model exactly, else OpenCV DNN",
       "auto"},
      {static_cast<gint>(YuNetRuntime::Onednn), "oneDNN (f32; loading fails when it cannot run the model)", "onednn"},
      {static_cast<gint>(YuNetRuntime::Opencv), "OpenCV DNN", "opencv"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstTaconiteDetectRuntime", values));
  return static_cast<GType>(type);
}

// Every property, declared once; defaults are Settings{}'s.
static void declare_properties(PropertyTable<GstTaconiteDetect, Settings>& t) {
  t.string("model", "Model",
           "Path of OpenCV Zoo's YuNet face detector, face_detection_yunet_2023mar.onnx (MIT; "
           "docs/models.md); required, loaded and checked when going from READY to PAUSED. Default: none",
           &Settings::model, Mutable::ReadyOnly);
  t.uint("input-width", "Network input width",
         "Width in pixels the frame is scaled to fit (aspect kept, padded) for the network; a "
         "multiple of 32. Larger finds smaller faces for more CPU. Default: 640",
         32, taconite::vision::kMaxInputSide, &Settings::input_width, Mutable::ReadyOnly);
  t.uint("input-height", "Network input height", "Height in pixels of the network input; a multiple of 32. Default: 384",
         32, taconite::vision::kMaxInputSide, &Settings::input_height, Mutable::ReadyOnly);
  t.real("score-threshold", "Score threshold", "Lowest detection confidence (0..1) kept as a face. Default: 0.6",
         0.0, 1.0, &Settings::score_threshold, Mutable::ReadyOnly);
  t.real("nms-threshold", "NMS threshold",
         "Overlap (IoU, 0..1) above which the weaker of two detections is dropped. Default: 0.3", 0.0, 1.0,
         &Settings::nms_threshold, Mutable::ReadyOnly);
  t.uint("min-face-size", "Minimum face size",
         "Faces whose box is smaller than this many frame pixels on its shorter side are not "
         "added. Default: 0 (no minimum)",
         0, kMaxMinFaceSize, &Settings::min_face_size, Mutable::AnyTime);
  t.uint("max-faces", "Maximum faces", "Add at most this many faces per frame, the most confident. Default: 64", 1,
         taconite::vision::kMaxFaces, &Settings::max_faces, Mutable::ReadyOnly);
  t.uint("interval", "Detection interval",
         "Run the detector on one frame in this many; the frames in between carry the last "
         "detection's faces (detection param fresh=false). Reset on flush, stream start and caps "
         "change. Default: 1 (every frame)",
         1, 1000, &Settings::interval, Mutable::AnyTime);
  t.uint("threads", "Threads",
         "Threads per detection: oneDNN's for this element, or OpenCV's thread count, set when the "
         "model loads (OpenCV's pool is process-wide, so the last element to load sets it for all). "
         "Default: 1",
         1, 64, &Settings::threads, Mutable::ReadyOnly);
  t.enumeration("runtime", "Runtime",
                "What runs the network: auto (oneDNN where built and it runs the model exactly, else "
                "OpenCV DNN), onednn or opencv; active-runtime says which runs. Default: auto",
                detect_runtime_get_type, &Settings::runtime, Mutable::ReadyOnly);
  t.read_only(
      [](GParamFlags flags) {
        return g_param_spec_string("active-runtime", "Active runtime",
                                   "What runs the network since the model loaded: onednn or opencv (NULL "
                                   "before); the debug log (INFO) says why",
                                   nullptr, flags);
      },
      [](GstTaconiteDetect&, const Settings& s, GValue* v) {
        g_value_set_string(v, s.active_runtime.empty() ? nullptr : s.active_runtime.c_str());
      });
}

static void gst_taconite_detect_class_init(GstTaconiteDetectClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass* transform_class = GST_BASE_TRANSFORM_CLASS(klass);
  gobject_class->finalize = finalize;
  transform_class->start = GST_DEBUG_FUNCPTR(start);
  transform_class->stop = GST_DEBUG_FUNCPTR(stop);
  transform_class->set_caps = GST_DEBUG_FUNCPTR(set_caps);
  transform_class->sink_event = GST_DEBUG_FUNCPTR(sink_event);
  transform_class->transform_ip = GST_DEBUG_FUNCPTR(transform_ip);
  PropertyTable<GstTaconiteDetect, Settings>::install(gobject_class, &GstTaconiteDetect::settings, declare_properties);
  gst_type_mark_as_plugin_api(detect_runtime_get_type(), static_cast<GstPluginAPIFlags>(0));

  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);
  gst_element_class_set_static_metadata(
      element_class, "YuNet face detector", "Filter/Analyzer/Video",
      "Adds a face ROI with a confidence and the 5 alignment landmarks for every face YuNet (oneDNN or OpenCV DNN) finds",
      "taconite-adaface maintainers");
}
