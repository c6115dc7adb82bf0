#include "photo_faces.hpp"

#include <algorithm>
#include <system_error>

#include "face_preprocess.hpp"
#include "image_list.hpp"

namespace taconite::realfaces {

namespace fs = std::filesystem;

Result<std::vector<Photo>> list_photos(const fs::path& photos_dir) {
  std::vector<Photo> photos;
  std::error_code ec;
  for (fs::directory_iterator person(photos_dir, ec), end; !ec && person != end; person.increment(ec)) {
    if (!person->is_directory(ec)) continue;
    Result<std::vector<fs::path>> files = faces::directory_images(person->path());
    if (!files) return files.error();
    const std::string name = person->path().filename().string();
    for (const fs::path& file : files.value()) {
      if (photos.size() == kMaxPhotos)
        return Error{ErrorKind::Input, photos_dir.string() + ": more than " + std::to_string(kMaxPhotos) + " photos"};
      const std::string leaf = file.filename().string();
      photos.push_back({name == "_impostors" ? name + "/" + leaf : name, name + "/" + leaf});
    }
  }
  if (ec) return Error{ErrorKind::Io, photos_dir.string() + ": cannot be listed (" + ec.message() + ")"};
  std::sort(photos.begin(), photos.end(), [](const Photo& a, const Photo& b) { return a.relative < b.relative; });
  return photos;
}

Result<cv::Mat> largest_aligned_face(faces::FaceFinder& finder, const cv::Mat& bgr) {
  Result<std::vector<vision::FaceBox>> found = finder.find(bgr);
  if (!found) return found.error();
  if (found.value().empty()) return Error{ErrorKind::Input, "no face found"};
  return finder.aligned_face(0);  // the finders put the largest first
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
