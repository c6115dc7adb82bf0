// The photos of ../shared/realfaces as aligned model inputs, through the product's own front end:
// YuNet's 5 points (vision/yunet_detector, as taconitedetect) or dlib HOG + 68 -> 5 points
// (vision/face_landmarks, as taconitelandmarks and `taconite-gallery enroll`), then the 5-point
// similarity warp and the model's normalisation (vision/similarity_alignment, as taconiteadaface).
// Shared by the real-face bench and tests.
#pragma once

#include <array>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <opencv2/core.hpp>

#include "face_landmarks.hpp"
#include "similarity_alignment.hpp"
#include "taconite/model.hpp"
#include "yunet_detector.hpp"

namespace taconite::realfaces {

// One photo and whose face it shows. Impostor photos (photos/_impostors/) are each their own person.
struct Photo {
  std::string person;
  std::string relative;  // under photos/, e.g. "elon_musk/elon_musk_1.jpg"
};

// Bounds on what a photos directory may hold (larger ones are refused, not read).
inline constexpr std::size_t kMaxPhotos = 100000;

// Every photo under `photos_dir`/<person>/ (files ending .jpg, .jpeg or .png, any case), sorted by
// person then name; impostors' person is "_impostors/<file name>". An error names the directory
// when it cannot be listed or holds more than kMaxPhotos photos.
std::variant<std::vector<Photo>, std::string> list_photos(const std::filesystem::path& photos_dir);

// The photo decoded as 8-bit BGR, or an error naming the file.
std::variant<cv::Mat, std::string> read_photo(const std::filesystem::path& path);

using FivePoints = std::array<vision::Point2, 5>;

// The 5 points of the largest face YuNet finds on `bgr`, in its pixels; none when it finds no face.
// Throws cv::Exception only on an OpenCV failure.
std::optional<FivePoints> yunet_points(vision::YuNetDetector& detector, const cv::Mat& bgr);

// dlib's HOG detector and 68-point predictor as `taconite-gallery enroll` runs them on a photo:
// photos whose longer side is at most kUpscaleBelow pixels are searched at twice their size (HOG
// finds faces of ~80 pixels and up), the largest face's 68 points reduced to the template's 5.
class DlibPoints {
 public:
  // Loads the shape predictor (e.g. /usr/share/dlib/shape_predictor_68_face_landmarks.dat); an
  // error names the file.
  static std::variant<std::unique_ptr<DlibPoints>, std::string> load(const std::string& predictor);
  // The largest face's 5 points in `bgr`'s pixels; none when HOG finds no face.
  std::optional<FivePoints> find(const cv::Mat& bgr);

  static constexpr int kUpscaleBelow = 1024;

 private:
  explicit DlibPoints(std::shared_ptr<const vision::LandmarkModel> landmarks);
  std::shared_ptr<const vision::LandmarkModel> landmarks_;
  vision::FaceDetector detector_;
};

// The face at `five` in `bgr` warped to the template of a width x height input: an 8-bit RGB image
// (what every model of that size is fed before its own normalisation); none when the points
// determine no alignment.
std::optional<cv::Mat> aligned_face(const cv::Mat& bgr, const FivePoints& five, int width, int height);

// An aligned face (aligned_face()) as the model's input: CHW floats normalised as it says.
std::vector<float> model_input(const cv::Mat& aligned_rgb, const Preprocessing& preprocessing);

// The embeddings of aligned faces, one call each (Session::embed); the first error, naming the
// face's position, stops it.
Result<std::vector<Embedding>> embed_faces(Session& session, const std::vector<cv::Mat>& aligned_rgb);

}  // namespace taconite::realfaces
