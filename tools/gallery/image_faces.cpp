#include "image_faces.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "bundle/regular_file.hpp"
#include "common/failure.hpp"
#include "image_header.hpp"
#include "similarity_alignment.hpp"

namespace taconite::gallery_cli {

struct ImageFaces::Impl {
  IrEmbedder& engine;
  std::shared_ptr<const vision::LandmarkModel> landmarks;
  vision::FaceDetector detector;
  std::string path;
  cv::Mat image;                             // the (possibly upscaled) image, BGR
  double scale = 1.0;                        // image pixels per file pixel
  std::vector<vision::FaceBox> faces;        // file pixels
  std::vector<vision::FaceBox> frame_faces;  // image pixels

  Impl(IrEmbedder& e, std::shared_ptr<const vision::LandmarkModel> l) : engine(e), landmarks(std::move(l)) {}

  vision::ImageView view() const {
    vision::ImageView view;
    view.format = vision::PixelFormat::Bgr;
    view.width = image.cols;
    view.height = image.rows;
    view.planes[0] = image.data;
    view.strides[0] = static_cast<int>(image.step[0]);
    return view;
  }
};

ImageFaces::ImageFaces(IrEmbedder& engine, std::shared_ptr<const vision::LandmarkModel> landmarks)
    : impl_(std::make_unique<Impl>(engine, std::move(landmarks))) {}
ImageFaces::~ImageFaces() = default;

const std::vector<vision::FaceBox>& ImageFaces::faces() const { return impl_->faces; }

gallery::Status ImageFaces::load(const std::string& path) {
  Impl& d = *impl_;
  d.image.release();
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

  d.image = std::move(image);
  std::vector<vision::FaceDetection> found = d.detector.detect(d.view(), 1.0);

  std::stable_sort(found.begin(), found.end(), [](const vision::FaceDetection& a, const vision::FaceDetection& b) {
    return a.box.width * a.box.height > b.box.width * b.box.height;
  });
  for (const vision::FaceDetection& f : found) {
    d.frame_faces.push_back(f.box);
    d.faces.push_back({std::llround(f.box.x / d.scale), std::llround(f.box.y / d.scale),
                       std::llround(f.box.width / d.scale), std::llround(f.box.height / d.scale)});
  }
  return gallery::Ok{};
}

Result<ImageFace> ImageFaces::embed(std::size_t index) {
  Impl& d = *impl_;
  if (d.image.empty() || index >= d.frame_faces.size())
    return Error{ErrorKind::Input, d.path + ": no face #" + std::to_string(index)};
  const InputDims dims = d.engine.input_dims();
  std::vector<float> chw;
  const vision::ImageView view = d.view();
  const vision::FaceLandmarks landmarks = d.landmarks->predict(view, d.frame_faces[index]);
  const std::array<vision::Point2, 5> five = landmarks.five();
  const std::optional<cv::Matx23d> to_template = vision::alignment_transform(five, dims.width, dims.height);
  if (!to_template) return Error{ErrorKind::Input, d.path + ": the face's landmarks give no alignment"};
  vision::aligned_face_to_chw(view, *to_template, dims.width, dims.height,
                              vision::normalisation_of(d.engine.shared_model()->preprocessing()), chw);
  Result<Embedding> embedding = d.engine.embed({chw, 3, dims.height, dims.width});
  if (!embedding) return embedding.error();
  double sum = 0.0;
  for (float v : embedding.value()) sum += static_cast<double>(v) * v;
  return ImageFace{std::move(embedding.value()), std::sqrt(sum)};
}

}  // namespace taconite::gallery_cli
