/**
 * SECTION:element-taconitelandmarks
 * @title: taconitelandmarks
 *
 * Finds 68 facial landmarks (dlib's shape predictor, iBUG 300-W markup) in every face ROI of a
 * frame (#GstVideoRegionOfInterestMeta of type `roi-type`, as `facedetect` emits) and writes them
 * into the ROI's params, so `taconiteadaface` warps the face to its alignment template:
 *
 * - a `landmarks` structure with `x` and `y` arrays of 5 doubles, frame pixels, in the template's
 *   order (image-left eye centre, image-right eye centre, nose tip, image-left and image-right
 *   mouth corners; the eye centres are the means of dlib's eye contours 36-41 and 42-47);
 * - a `landmarks-68` structure with `x` and `y` arrays of all 68 points, frame pixels.
 *
 * Both replace the element's earlier ones on the same ROI. Without an upstream detector,
 * `detect=auto` (the default) runs dlib's HOG frontal-face detector on frames that carry no face
 * ROI and adds one `face` ROI (with a `detection` structure holding its `confidence`) per face
 * found; `detect-interval` and `detect-scale` trade accuracy for speed.
 *
 * Buffers pass through in place: the predictor runs on a gray copy of each face's surroundings
 * (YUV and GRAY8 from their luma plane, limited-range luma expanded to full range), scaled down
 * so the box's longer side is at most 320 pixels; the detector runs on at most 3840x2160 pixels. A
 * buffer is made writable (a shallow copy when shared; the pixels are never copied) only when it
 * has ROIs to annotate or may get detections. At most `max-faces` faces per frame (ROIs and
 * detections alike), the largest, get landmarks, and at most 256 predictions run per frame (each
 * face reserves 2 x `box-samples`); `faces-skipped` counts the faces left out. A face tilted by more than 10 degrees is predicted again on an upright copy of its
 * surroundings; `box-samples` averages predictions on shifted boxes for steadier points. The model
 * is loaded in the READY to PAUSED transition.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! facedetect display=false ! taconitelandmarks ! \
 *     taconiteadaface bundle=/path/to/bundle ! fakesink
 * ]| Aligned embeddings of the faces facedetect finds in a camera stream.
 * |[
 * gst-launch-1.0 filesrc location=video.mp4 ! decodebin ! videoconvert ! video/x-raw,format=I420 ! \
 *     taconitelandmarks detect=always detect-interval=5 detect-scale=0.5 ! fakesink -v
 * ]| Detects faces on every fifth frame at half size and marks their landmarks on every frame.
 *
 * Since: 0.2
 */
#include "gsttaconitelandmarks.h"

#include <gst/taconite/gsttaconiteface.h>
#include <gst/video/video.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "carried_detections.hpp"
#include "cxx_boundary.hpp"
#include "face_landmarks.hpp"
#include "face_selection.hpp"
#include "property_table.hpp"
#include "readable_frame.hpp"
#include "roi_params.hpp"
#include "video_formats.hpp"

GST_DEBUG_CATEGORY_STATIC(taconite_landmarks_debug);
#define GST_CAT_DEFAULT taconite_landmarks_debug

namespace {

using namespace taconite::gst;
using taconite::vision::FaceBox;
using taconite::vision::FaceDetection;
using taconite::vision::FaceDetector;
using taconite::vision::FaceLandmarks;
using taconite::vision::ImageView;
using taconite::vision::kMaxBoxSamples;
using taconite::vision::LandmarkModel;
using taconite::vision::Point2;

enum class DetectMode : int {
  Auto = 0,    // detect on frames without a face ROI
  Always = 1,  // detect on every frame (added to the ROIs already there)
  Never = 2,
};

GType detect_mode_get_type() {
  static gsize type = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(DetectMode::Auto), "Run the face detector on frames that carry no face ROI", "auto"},
      {static_cast<gint>(DetectMode::Always), "Run the face detector on every frame, adding to its ROIs", "always"},
      {static_cast<gint>(DetectMode::Never), "Never detect; only annotate the face ROIs the frames carry", "never"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstTaconiteLandmarksDetect", values));
  return static_cast<GType>(type);
}

constexpr const char* kDefaultModel = "/usr/share/dlib/shape_predictor_68_face_landmarks.dat";
constexpr const char* kDefaultRoiType = "face";
constexpr guint kDefaultMaxFaces = 32;
constexpr guint kMaxMaxFaces = 1024;
constexpr DetectMode kDefaultDetect = DetectMode::Auto;
constexpr guint kDefaultDetectInterval = 1;
constexpr double kDefaultDetectScale = 1.0;
// A box larger than this many frame sizes is no face of the frame: skipped (bounds dlib's work).
constexpr gint64 kMaxBoxFrames = 4;
constexpr guint kDefaultBoxSamples = 1;
// Predictor runs per frame at most. A face reserves 2 x box-samples of them (a tilted face is
// predicted again upright), so max-faces x box-samples <= 128 never meets this bound.
constexpr guint kMaxPredictionsPerFrame = 256;

// Property values; guarded by the object lock.
struct Settings {
  std::string model = kDefaultModel;
  std::string roi_type = kDefaultRoiType;
  guint max_faces = kDefaultMaxFaces;
  DetectMode detect = kDefaultDetect;
  guint detect_interval = kDefaultDetectInterval;
  double detect_scale = kDefaultDetectScale;
  guint box_samples = kDefaultBoxSamples;
};

// Streaming state: touched by the streaming thread, and by start/stop/events that it serializes with.
struct Stream {
  std::shared_ptr<const LandmarkModel> model;
  std::unique_ptr<FaceDetector> detector;  // created on the first detection
  GstVideoInfo info;
  bool have_info = false;
  taconite::vision::CarriedDetections<FaceDetection> detected;  // the last detection's faces
};

}  // namespace

struct _GstTaconiteLandmarks {
  GstBaseTransform parent;
  Settings* settings;
  Stream* stream;
  std::atomic<guint64>* faces_skipped;  // faces left without landmarks by the per-frame bounds
};


static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE(TACONITE_LANDMARKS_VIDEO_FORMATS)));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE(TACONITE_LANDMARKS_VIDEO_FORMATS)));

G_DEFINE_TYPE_WITH_CODE(GstTaconiteLandmarks, gst_taconite_landmarks, GST_TYPE_BASE_TRANSFORM,
                        GST_DEBUG_CATEGORY_INIT(taconite_landmarks_debug, "taconitelandmarks", 0,
                                                "taconitelandmarks element"));
GST_ELEMENT_REGISTER_DEFINE(taconitelandmarks, "taconitelandmarks", GST_RANK_NONE, GST_TYPE_TACONITE_LANDMARKS);

/* ------------------------------------------------------------------------------------------ */
/* ROI params                                                                                  */

static void write_landmarks(GstVideoRegionOfInterestMeta* roi, const FaceLandmarks& landmarks) {
  const std::array<Point2, 5> five = landmarks.five();
  set_roi_points(roi, "landmarks", five);
  set_roi_points(roi, "landmarks-68", landmarks.points);
}

/* ------------------------------------------------------------------------------------------ */
/* Frames                                                                                      */

// The face ROIs of a buffer.
static std::vector<GstVideoRegionOfInterestMeta*> face_rois(GstBuffer* buffer, GQuark roi_type) {
  std::vector<GstVideoRegionOfInterestMeta*> rois = buffer_rois(buffer);
  std::erase_if(rois, [&](const GstVideoRegionOfInterestMeta* roi) { return roi->roi_type != roi_type; });
  return rois;
}

// Whether a frame will run or reuse a detection.
static bool wants_detection(DetectMode mode, bool has_face_rois) {
  return mode == DetectMode::Always || (mode == DetectMode::Auto && !has_face_rois);
}

// The faces to add to this frame: a fresh detection every detect-interval frames that want one,
// the last detection's otherwise.
static std::vector<FaceDetection> detections(GstTaconiteLandmarks* self, const ImageView& frame, guint interval,
                                             double scale) {
  Stream& stream = *self->stream;
  if (stream.detected.due(interval)) {
    if (!stream.detector) stream.detector = std::make_unique<FaceDetector>();
    std::vector<FaceDetection> faces = stream.detector->detect(frame, scale);
    GST_LOG_OBJECT(self, "detected %zu faces", faces.size());
    stream.detected.detected(std::move(faces));
  }
  return stream.detected.take();
}

// The box clipped to the frame, or nothing when they do not intersect.
static bool clip_box(const FaceBox& box, gint64 fw, gint64 fh, FaceBox* clipped) {
  const gint64 x0 = std::max<gint64>(box.x, 0), y0 = std::max<gint64>(box.y, 0);
  const gint64 x1 = std::min(box.x + box.width, fw), y1 = std::min(box.y + box.height, fh);
  if (x1 <= x0 || y1 <= y0) return false;
  *clipped = {x0, y0, x1 - x0, y1 - y0};
  return true;
}

// A face that gets landmarks: a ROI of the buffer, or a detection that becomes one. The buffer
// cannot take metas while its frame is mapped (the mapping holds a reference), so the landmarks
// are found first and written after unmapping.
struct Face {
  GstVideoRegionOfInterestMeta* roi = nullptr;  // nullptr: a detection, added as a ROI when written
  FaceBox box;                                  // frame pixels; a detection's is clipped to the frame
  double confidence = 0.0;                      // a detection's score
  std::optional<FaceLandmarks> landmarks;
};

// The faces of a frame, largest first: its face ROIs that intersect the frame (and are not far
// larger than it) and the detections, clipped.
static std::vector<Face> gather_faces(GstTaconiteLandmarks* self,
                                      const std::vector<GstVideoRegionOfInterestMeta*>& rois,
                                      const std::vector<FaceDetection>& found, gint64 fw, gint64 fh) {
  std::vector<Face> faces;
  FaceBox inside;
  for (GstVideoRegionOfInterestMeta* roi : rois) {
    const FaceBox box{roi->x, roi->y, roi->w, roi->h};
    if (box.width > kMaxBoxFrames * fw || box.height > kMaxBoxFrames * fh || !clip_box(box, fw, fh, &inside)) {
      GST_LOG_OBJECT(self, "ROI %d (%u,%u %ux%u) skipped: outside the frame or far larger than it", roi->id, roi->x,
                     roi->y, roi->w, roi->h);
      continue;
    }
    faces.push_back({roi, box, 0.0, std::nullopt});
  }
  for (const FaceDetection& detection : found)
    if (clip_box(detection.box, fw, fh, &inside))
      faces.push_back({nullptr, inside, detection.confidence, std::nullopt});
  std::stable_sort(faces.begin(), faces.end(), [](const Face& a, const Face& b) {
    return static_cast<guint64>(a.box.width) * a.box.height > static_cast<guint64>(b.box.width) * b.box.height;
  });
  return faces;
}

// Adds the detected faces as ROIs (each with an id no other ROI of the buffer has) and every face's
// landmarks to its ROI's params.
static void write_faces(GstBuffer* buffer, const std::vector<Face>& faces) {
  const auto detected = std::count_if(faces.begin(), faces.end(), [](const Face& face) { return !face.roi; });
  const std::vector<gint> ids = unused_roi_ids(buffer, static_cast<std::size_t>(detected));
  std::size_t next_id = 0;
  for (const Face& face : faces) {
    GstVideoRegionOfInterestMeta* roi = face.roi;
    if (!roi) {
      roi = gst_buffer_add_video_region_of_interest_meta(buffer, "face", static_cast<guint>(face.box.x),
                                                         static_cast<guint>(face.box.y),
                                                         static_cast<guint>(face.box.width),
                                                         static_cast<guint>(face.box.height));
      roi->id = ids[next_id++];
      gst_taconite_roi_set_detection(roi, face.confidence);
    }
    if (face.landmarks) write_landmarks(roi, *face.landmarks);
  }
}

/* ------------------------------------------------------------------------------------------ */
/* GstBaseTransform                                                                            */

static gboolean start_unguarded(GstTaconiteLandmarks* self) {
  GST_OBJECT_LOCK(self);
  const std::string path = self->settings->model;
  GST_OBJECT_UNLOCK(self);
  taconite::Result<std::shared_ptr<const LandmarkModel>> model = LandmarkModel::load(path);
  if (!model) {
    GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ, ("Could not load the face landmark model %s.", path.c_str()),
                      ("%s. Set the 'model' property to dlib's shape_predictor_68_face_landmarks.dat.",
                       model.error().message.c_str()));
    return FALSE;
  }
  GST_INFO_OBJECT(self, "loaded landmark model %s", path.c_str());
  self->stream->model = std::move(model.value());
  *self->faces_skipped = 0;
  return TRUE;
}

static gboolean start(GstBaseTransform* trans) {
  auto* self = GST_TACONITE_LANDMARKS(trans);
  return bool_guarded(GST_ELEMENT(self), "Could not start taconitelandmarks.", [&] { return start_unguarded(self); });
}

static gboolean stop(GstBaseTransform* trans) {
  auto* self = GST_TACONITE_LANDMARKS(trans);
  return bool_guarded(GST_ELEMENT(self), "Could not stop taconitelandmarks.", [&]() -> bool {
    self->stream->model.reset();
    self->stream->detector.reset();
    self->stream->have_info = false;
    self->stream->detected.reset();
    return TRUE;
  });
}

static gboolean set_caps(GstBaseTransform* trans, GstCaps* incaps, GstCaps* /*outcaps*/) {
  auto* self = GST_TACONITE_LANDMARKS(trans);
  return bool_guarded(GST_ELEMENT(self), "taconitelandmarks could not take the caps.", [&]() -> bool {
    if (!gst_video_info_from_caps(&self->stream->info, incaps)) {
      GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("Unusable video caps."),
                        ("caps %" GST_PTR_FORMAT, static_cast<gpointer>(incaps)));
      return FALSE;
    }
    self->stream->have_info = true;
    self->stream->detected.reset();  // the boxes were for the old frame size
    return TRUE;
  });
}

static gboolean sink_event(GstBaseTransform* trans, GstEvent* event) {
  auto* self = GST_TACONITE_LANDMARKS(trans);
  return bool_guarded(GST_ELEMENT(self), "taconitelandmarks could not handle an event.", [&]() -> bool {
    if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP || GST_EVENT_TYPE(event) == GST_EVENT_STREAM_START)
      self->stream->detected.reset();
    return GST_BASE_TRANSFORM_CLASS(gst_taconite_landmarks_parent_class)->sink_event(trans, event);
  });
}

// Whether this buffer may get params or metas: only then is it made writable.
static bool needs_writing(GstTaconiteLandmarks* self, GstBuffer* buffer) {
  GST_OBJECT_LOCK(self);
  const GQuark roi_type = g_quark_from_string(self->settings->roi_type.c_str());
  const DetectMode mode = self->settings->detect;
  GST_OBJECT_UNLOCK(self);
  const bool has_rois = !face_rois(buffer, roi_type).empty();
  return has_rois || wants_detection(mode, has_rois);
}

static GstFlowReturn prepare_output_buffer(GstBaseTransform* trans, GstBuffer* input, GstBuffer** output) {
  auto* self = GST_TACONITE_LANDMARKS(trans);
  return flow_guarded(GST_ELEMENT(self), "Could not prepare a video buffer for its face landmarks.", [&] {
    if (!needs_writing(self, input)) {
      *output = input;  // passed on untouched, even when shared
      return GST_FLOW_OK;
    }
    return GST_BASE_TRANSFORM_CLASS(gst_taconite_landmarks_parent_class)->prepare_output_buffer(trans, input, output);
  });
}

// Finds the landmarks of the largest faces, as many as max-faces and the per-frame prediction
// budget allow; returns how many faces got none.
static std::size_t predict_faces(const LandmarkModel& model, const ImageView& frame, std::vector<Face>& faces,
                                 const Settings& settings) {
  const guint reserve = 2 * settings.box_samples;  // the most runs one face can take
  guint runs_left = kMaxPredictionsPerFrame;
  std::size_t done = 0;
  for (Face& face : faces) {
    if (done == settings.max_faces || runs_left < reserve) break;
    face.landmarks = model.predict(frame, face.box, static_cast<int>(settings.box_samples));
    runs_left -= reserve;
    ++done;
  }
  return faces.size() - done;
}

static GstFlowReturn transform_ip_unguarded(GstTaconiteLandmarks* self, GstBuffer* buffer) {
  GST_OBJECT_LOCK(self);
  const Settings settings = *self->settings;
  GST_OBJECT_UNLOCK(self);
  const GQuark roi_type = g_quark_from_string(settings.roi_type.c_str());
  const bool has_rois = !face_rois(buffer, roi_type).empty();
  const bool detect = wants_detection(settings.detect, has_rois);
  // Not writable: prepare_output_buffer found nothing to write and passed the shared buffer on.
  if ((!has_rois && !detect) || !gst_buffer_is_writable(buffer)) return GST_FLOW_OK;
  if (!self->stream->have_info) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, ("A buffer arrived before caps."), (nullptr));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  std::vector<Face> faces;
  {
    ReadableFrame frame;
    if (const taconite::Status mapped = frame.map(self->stream->info, buffer); !mapped) {
      GST_ELEMENT_ERROR(self, STREAM, FAILED, ("A video buffer does not hold the frame it describes."),
                        ("%s", mapped.error().message.c_str()));
      return GST_FLOW_ERROR;
    }
    const ImageView& pixels = frame.view();
    const std::vector<FaceDetection> found =
        detect ? detections(self, pixels, settings.detect_interval, settings.detect_scale)
               : std::vector<FaceDetection>{};
    faces = gather_faces(self, face_rois(buffer, roi_type), found, pixels.width, pixels.height);
    if (const std::size_t skipped = predict_faces(*self->stream->model, pixels, faces, settings)) {
      *self->faces_skipped += skipped;
      GST_DEBUG_OBJECT(self, "max-faces=%u, box-samples=%u, %u predictions per frame: %zu smaller faces get no "
                       "landmarks", settings.max_faces, settings.box_samples, kMaxPredictionsPerFrame, skipped);
    }
  }
  write_faces(buffer, faces);  // the frame is unmapped: the buffer is writable again
  return GST_FLOW_OK;
}

static GstFlowReturn transform_ip(GstBaseTransform* trans, GstBuffer* buffer) {
  auto* self = GST_TACONITE_LANDMARKS(trans);
  // OpenCV and dlib report failures by exceptions; none may cross into GStreamer's C code.
  return flow_guarded(GST_ELEMENT(self), "Could not find the face landmarks of a video buffer.",
                      [&] { return transform_ip_unguarded(self, buffer); });
}

/* ------------------------------------------------------------------------------------------ */
/* GObject                                                                                     */

// Every property, declared once; defaults are Settings{}'s.
static void declare_properties(PropertyTable<GstTaconiteLandmarks, Settings>& t) {
  t.string("model", "Model",
           "Path of dlib's 68-point shape predictor file; loaded when going from READY to PAUSED. "
           "Default: \"/usr/share/dlib/shape_predictor_68_face_landmarks.dat\" (Debian libdlib-data)",
           &Settings::model, Mutable::ReadyOnly);
  t.string("roi-type", "ROI type",
           "roi_type of the GstVideoRegionOfInterestMeta that get landmarks (facedetect emits "
           "\"face\"); detected faces are always added as \"face\". Default: \"face\"",
           &Settings::roi_type, Mutable::AnyTime);
  t.uint("max-faces", "Maximum faces",
         "Give landmarks to at most this many ROIs per frame, the largest ones (a few ms of CPU each); "
         "ROIs outside the frame do not count. Default: 32",
         1, kMaxMaxFaces, &Settings::max_faces, Mutable::AnyTime);
  t.enumeration("detect", "Detect",
                "When to run dlib's HOG frontal-face detector and add \"face\" ROIs: on frames without a "
                "face ROI (auto), on every frame (always) or never. Default: auto",
                detect_mode_get_type, &Settings::detect, Mutable::AnyTime);
  t.uint("detect-interval", "Detection interval",
         "Run the detector on one in this many frames that want a detection; the frames in between "
         "get the boxes of the last detection. Reset on flush, stream start and caps change. "
         "Default: 1 (every frame)",
         1, 1000, &Settings::detect_interval, Mutable::AnyTime);
  t.real("detect-scale", "Detection scale",
         "Run the detector on a gray copy of the frame scaled by this factor (faster; the smallest "
         "face found, about 80 pixels at 1, grows to 80/scale pixels). Default: 1",
         0.1, 1.0, &Settings::detect_scale, Mutable::AnyTime);
  t.uint("box-samples", "Box samples",
         "Predictions averaged per face: 1 runs the predictor once on the face box; up to 5 adds runs "
         "on the box shifted by 6 % left, right, up and down and averages the points (steadier "
         "landmarks on small or tilted faces for that many times the work). Default: 1",
         1, kMaxBoxSamples, &Settings::box_samples, Mutable::AnyTime);
  t.counter("faces-skipped", "Faces skipped",
            "Faces (ROIs inside the frame and detections) left without landmarks since the element started, by "
            "max-faces or by the 256 predictions per frame (each face reserves 2 x box-samples)",
            [](GstTaconiteLandmarks& self) -> guint64 { return *self.faces_skipped; }, Lock::Own);
}

static void finalize(GObject* object) {
  auto* self = GST_TACONITE_LANDMARKS(object);
  delete self->stream;
  delete self->settings;
  delete self->faces_skipped;
  G_OBJECT_CLASS(gst_taconite_landmarks_parent_class)->finalize(object);
}

static void gst_taconite_landmarks_init(GstTaconiteLandmarks* self) {
  self->settings = new Settings();
  self->stream = new Stream();
  self->faces_skipped = new std::atomic<guint64>(0);
  gst_video_info_init(&self->stream->info);
  gst_base_transform_set_in_place(GST_BASE_TRANSFORM(self), TRUE);
  gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(self), FALSE);
}

static void gst_taconite_landmarks_class_init(GstTaconiteLandmarksClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass* transform_class = GST_BASE_TRANSFORM_CLASS(klass);
  gobject_class->finalize = finalize;
  transform_class->start = GST_DEBUG_FUNCPTR(start);
  transform_class->stop = GST_DEBUG_FUNCPTR(stop);
  transform_class->set_caps = GST_DEBUG_FUNCPTR(set_caps);
  transform_class->sink_event = GST_DEBUG_FUNCPTR(sink_event);
  transform_class->prepare_output_buffer = GST_DEBUG_FUNCPTR(prepare_output_buffer);
  transform_class->transform_ip = GST_DEBUG_FUNCPTR(transform_ip);

  PropertyTable<GstTaconiteLandmarks, Settings>::install(gobject_class, &GstTaconiteLandmarks::settings, declare_properties);

  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);
  gst_element_class_set_static_metadata(
      element_class, "dlib face landmarks", "Filter/Analyzer/Video",
      "Adds dlib 68-point face landmarks (and the 5 alignment points taconiteadaface reads) to face ROIs, "
      "optionally detecting the faces with dlib's HOG detector",
      "taconite-adaface maintainers");
  gst_type_mark_as_plugin_api(detect_mode_get_type(), static_cast<GstPluginAPIFlags>(0));
}
