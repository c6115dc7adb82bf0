#include "photo_faces.hpp"

#include <algorithm>
#include <cctype>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <system_error>

#include "face_preprocess.hpp"

namespace taconite::realfaces {

namespace fs = std::filesystem;

namespace {

bool is_photo(const fs::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

vision::ImageView view_of(const cv::Mat& bgr) {
  vision::ImageView view;
  view.format = vision::PixelFormat::Bgr;
  view.width = bgr.cols;
  view.height = bgr.rows;
  view.planes[0] = bgr.data;
  view.strides[0] = static_cast<int>(bgr.step[0]);
  return view;
}

}  // namespace

std::variant<std::vector<Photo>, std::string> list_photos(const fs::path& photos_dir) {
  std::vector<Photo> photos;
  std::error_code ec;
  for (fs::directory_iterator person(photos_dir, ec), end; !ec && person != end; person.increment(ec)) {
    if (!person->is_directory(ec)) continue;
    const std::string name = person->path().filename().string();
    for (fs::directory_iterator file(person->path(), ec); !ec && file != end; file.increment(ec)) {
      if (!file->is_regular_file(ec) || !is_photo(file->path())) continue;
      if (photos.size() == kMaxPhotos)
        return photos_dir.string() + ": more than " + std::to_string(kMaxPhotos) + " photos";
      const std::string leaf = file->path().filename().string();
      photos.push_back({name == "_impostors" ? name + "/" + leaf : name, name + "/" + leaf});
    }
  }
  if (ec) return photos_dir.string() + ": cannot be listed (" + ec.message() + ")";
  std::sort(photos.begin(), photos.end(),
            [](const Photo& a, const Photo& b) { return a.relative < b.relative; });
  return photos;
}

std::variant<cv::Mat, std::string> read_photo(const fs::path& path) {
  cv::Mat bgr;
  try {
    bgr = cv::imread(path.string(), cv::IMREAD_COLOR);
  } catch (const cv::Exception& e) {
    return path.string() + ": cannot be decoded (" + e.what() + ")";
  }
  if (bgr.empty()) return path.string() + ": not a readable image";
  return bgr;
}

std::optional<FivePoints> yunet_points(vision::YuNetDetector& detector, const cv::Mat& bgr) {
  const std::vector<vision::DetectedFace> faces = detector.detect(bgr);
  if (faces.empty()) return std::nullopt;
  const auto largest = std::max_element(faces.begin(), faces.end(), [](const auto& a, const auto& b) {
    return a.box.area() < b.box.area();
  });
  FivePoints five;
  for (int i = 0; i < 5; ++i) five[i] = {largest->landmarks[i].x, largest->landmarks[i].y};
  return five;
}

std::variant<std::unique_ptr<DlibPoints>, std::string> DlibPoints::load(const std::string& predictor) {
  std::string problem;
  std::shared_ptr<const vision::LandmarkModel> landmarks = vision::LandmarkModel::load(predictor, &problem);
  if (!landmarks) return problem;
  return std::unique_ptr<DlibPoints>(new DlibPoints(std::move(landmarks)));
}

DlibPoints::DlibPoints(std::shared_ptr<const vision::LandmarkModel> landmarks) : landmarks_(std::move(landmarks)) {}

std::optional<FivePoints> DlibPoints::find(const cv::Mat& bgr) {
  const double scale = std::max(bgr.cols, bgr.rows) <= kUpscaleBelow ? 2.0 : 1.0;
  cv::Mat searched = bgr;
  if (scale != 1.0) cv::resize(bgr, searched, cv::Size(), scale, scale, cv::INTER_LINEAR);
  const vision::ImageView view = view_of(searched);
  const std::vector<vision::FaceDetection> found = detector_.detect(view, 1.0);
  if (found.empty()) return std::nullopt;
  const auto largest = std::max_element(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.box.width * a.box.height < b.box.width * b.box.height;
  });
  FivePoints five = landmarks_->predict(view, largest->box).five();
  for (vision::Point2& p : five) p = {p.x / scale, p.y / scale};
  return five;
}

std::optional<cv::Mat> aligned_face(const cv::Mat& bgr, const FivePoints& five, int width, int height) {
  const std::optional<cv::Matx23d> to_template = vision::alignment_transform(five, width, height);
  if (!to_template) return std::nullopt;
  return vision::aligned_face_rgb(view_of(bgr), *to_template, width, height);
}

std::vector<float> model_input(const cv::Mat& aligned_rgb, const Preprocessing& preprocessing) {
  std::vector<float> chw;
  vision::to_normalised_chw(aligned_rgb, preprocessing.width, preprocessing.height,
                            vision::normalisation_of(preprocessing), chw);
  return chw;
}

Result<std::vector<Embedding>> embed_faces(Session& session, const std::vector<cv::Mat>& aligned_rgb) {
  const Preprocessing p = session.model()->preprocessing();
  std::vector<Embedding> embeddings;
  for (std::size_t i = 0; i < aligned_rgb.size(); ++i) {
    const std::vector<float> chw = model_input(aligned_rgb[i], p);
    Result<Embedding> e = session.embed({chw, 3, p.height, p.width});
    if (!e) return Error{e.error().kind, "face " + std::to_string(i) + ": " + e.error().message};
    embeddings.push_back(std::move(e.value()));
  }
  return embeddings;
}

}  // namespace taconite::realfaces
