// The photos of ../shared/realfaces and their faces, shared by the real-face bench and tests: the
// photos listed per person, each one's largest face found and aligned by a tools/faces finder (so
// exactly as `taconite-gallery enroll` finds faces, and with YuNet as taconitedetect does), and
// aligned faces embedded by each model with its own normalisation (every model here is fed the
// same 8-bit RGB aligned face).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <opencv2/core.hpp>

#include "face_finder.hpp"
#include "taconite/model.hpp"

namespace taconite::realfaces {

// One photo and whose face it shows. Impostor photos (photos/_impostors/) are each their own person.
struct Photo {
  std::string person;
  std::string relative;  // under photos/, e.g. "elon_musk/elon_musk_1.jpg"
};

// Bounds on what a photos directory may hold (larger ones are refused, not read).
inline constexpr std::size_t kMaxPhotos = 100000;

// Every photo under `photos_dir`/<person>/ (faces::directory_images: image extensions, any case),
// sorted by person then name; impostors' person is "_impostors/<file name>". An error names the
// directory when it cannot be listed or holds more than kMaxPhotos photos.
Result<std::vector<Photo>> list_photos(const std::filesystem::path& photos_dir);

// The largest face `finder` finds in `bgr` (8-bit BGR), aligned to the finder's input size
// (FaceFinder::aligned_face); an input error saying it found none or why its landmarks give no
// alignment.
Result<cv::Mat> largest_aligned_face(faces::FaceFinder& finder, const cv::Mat& bgr);

// An aligned face (8-bit RGB of the model's input size) as the model's input: CHW floats
// normalised as it says.
std::vector<float> model_input(const cv::Mat& aligned_rgb, const Preprocessing& preprocessing);

// The embeddings of aligned faces, one call each (Session::embed); the first error, naming the
// face's position, stops it.
Result<std::vector<Embedding>> embed_faces(Session& session, const std::vector<cv::Mat>& aligned_rgb);

}  // namespace taconite::realfaces
