#include "image_faces.hpp"

#include <gst/video/video.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "bundle/regular_file.hpp"
#include "common/failure.hpp"
#include "face_alignment.hpp"
#include "face_preprocess.hpp"
#include "image_header.hpp"

namespace taconite::gallery_cli {

struct ImageFaces::Impl {
  IrEmbedder& engine;
  std::shared_ptr<const gst::LandmarkModel> landmarks;
  gst::FaceDetector detector;
  std::string path;
  GstVideoInfo info{};
  GstBuffer* buffer = nullptr;            // the (possibly upscaled) image as a BGR frame
  double scale = 1.0;                     // buffer pixels per image pixel
  std::vector<gst::FaceBox> faces;        // image pixels
  std::vector<gst::FaceBox> frame_faces;  // buffer pixels

  Impl(IrEmbedder& e, std::shared_ptr<const gst::LandmarkModel> l) : engine(e), landmarks(std::move(l)) {}
  ~Impl() { release(); }
  void release() {
    if (buffer) gst_buffer_unref(buffer);
    buffer = nullptr;
  }
};

ImageFaces::ImageFaces(IrEmbedder& engine, std::shared_ptr<const gst::LandmarkModel> landmarks)
    : impl_(std::make_unique<Impl>(engine, std::move(landmarks))) {}
ImageFaces::~ImageFaces() = default;

const std::vector<gst::FaceBox>& ImageFaces::faces() const { return impl_->faces; }

gallery::Status ImageFaces::load(const std::string& path) {
  Impl& d = *impl_;
  d.release();
  d.faces.clear();
  d.frame_faces.clear();
  d.path = path;
  // Read through one descriptor opened without blocking: a FIFO is refused, not waited on, and
  // the bytes checked are the bytes decoded.
  std::vector<std::uint8_t> bytes;
  try {
    const bundle::RegularFile file = bundle::RegularFile::open(path);
    if (file.size() > kMaxFileBytes)
      return Error{ErrorKind::Input, path + ": " + std::to_string(file.size()) + " bytes, more than the " +
                                         std::to_string(kMaxFileBytes >> 20) + " MiB an image file may have"};
    bytes.resize(static_cast<std::size_t>(file.size()));
    file.read_all(bytes.data());
  } catch (const Failure& f) {
    return f.error();
  }
  Result<ImageSize> size = read_image_size(bytes);
  if (!size) return Error{ErrorKind::Input, path + ": " + size.error().message};
  const ImageSize& s = size.value();
  if (s.width > kMaxPixels / s.height)
    return Error{ErrorKind::Input, path + ": its " + s.format + " header gives " + std::to_string(s.width) + "x" +
                                       std::to_string(s.height) + " pixels, more than " + std::to_string(kMaxPixels) +
                                       " allowed (refused from the header, before decoding)"};
  cv::Mat image;
  try {
    image = cv::imdecode(bytes, cv::IMREAD_COLOR);
  } catch (const cv::Exception& e) {
    return Error{ErrorKind::Io, path + ": cannot be decoded (" + e.what() + ")"};
  }
  bytes = {};
  if (image.empty()) return Error{ErrorKind::Io, path + ": not a readable image"};
  // The decoder's own size is checked too, should it ever disagree with the header.
  if (static_cast<long long>(image.cols) * image.rows > kMaxPixels)
    return Error{ErrorKind::Input, path + ": " + std::to_string(image.cols) + "x" + std::to_string(image.rows) +
                                       " pixels, more than " + std::to_string(kMaxPixels) + " allowed"};
  d.scale = std::max(image.cols, image.rows) <= kUpscaleBelow ? 2.0 : 1.0;
  if (d.scale != 1.0) cv::resize(image, image, cv::Size(), d.scale, d.scale, cv::INTER_LINEAR);

  gst_video_info_set_format(&d.info, GST_VIDEO_FORMAT_BGR, static_cast<guint>(image.cols),
                            static_cast<guint>(image.rows));
  d.buffer = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&d.info), nullptr);
  GstVideoFrame frame;
  if (!d.buffer || !gst_video_frame_map(&frame, &d.info, d.buffer, GST_MAP_WRITE))
    return Error{ErrorKind::Io, path + ": cannot allocate the image frame"};
  const int stride = GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0);
  auto* pixels = static_cast<guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, 0));
  for (int y = 0; y < image.rows; ++y)
    std::memcpy(pixels + static_cast<std::ptrdiff_t>(y) * stride, image.ptr(y),
                static_cast<std::size_t>(image.cols) * 3);
  std::vector<gst::FaceDetection> found = d.detector.detect(frame, 1.0);
  gst_video_frame_unmap(&frame);

  std::stable_sort(found.begin(), found.end(), [](const gst::FaceDetection& a, const gst::FaceDetection& b) {
    return a.box.width * a.box.height > b.box.width * b.box.height;
  });
  for (const gst::FaceDetection& f : found) {
    d.frame_faces.push_back(f.box);
    d.faces.push_back({std::llround(f.box.x / d.scale), std::llround(f.box.y / d.scale),
                       std::llround(f.box.width / d.scale), std::llround(f.box.height / d.scale)});
  }
  return gallery::Ok{};
}

Result<ImageFace> ImageFaces::embed(std::size_t index) {
  Impl& d = *impl_;
  if (!d.buffer || index >= d.frame_faces.size())
    return Error{ErrorKind::Input, d.path + ": no face #" + std::to_string(index)};
  const InputDims dims = d.engine.input_dims();
  std::vector<float> chw;
  GstVideoFrame frame;
  if (!gst_video_frame_map(&frame, &d.info, d.buffer, GST_MAP_READ))
    return Error{ErrorKind::Io, d.path + ": cannot map the image frame"};
  const gst::FaceLandmarks landmarks = d.landmarks->predict(frame, d.frame_faces[index]);
  const std::array<gst::Point2, 5> five = landmarks.five();
  const std::optional<cv::Matx23d> to_template = gst::alignment_transform(five, dims.width, dims.height);
  if (to_template) gst::aligned_face_to_chw(frame, *to_template, dims.width, dims.height, ChannelOrder::Rgb, chw);
  gst_video_frame_unmap(&frame);
  if (!to_template) return Error{ErrorKind::Input, d.path + ": the face's landmarks give no alignment"};
  Result<Embedding> embedding = d.engine.embed({chw, 3, dims.height, dims.width});
  if (!embedding) return embedding.error();
  double sum = 0.0;
  for (float v : embedding.value()) sum += static_cast<double>(v) * v;
  return ImageFace{std::move(embedding.value()), std::sqrt(sum)};
}

}  // namespace taconite::gallery_cli
