#include "image_faces.hpp"

#include <cmath>

#include "image_file.hpp"

namespace taconite::faces {

ModelInput model_input_of(const IrEmbedder& engine) {
  const InputDims dims = engine.input_dims();
  return {dims.width, dims.height, vision::normalisation_of(engine.shared_model()->preprocessing())};
}

gallery::Status ImageFaces::load(const std::string& path) {
  path_ = path;
  faces_.clear();
  image_.release();
  Result<cv::Mat> image = read_image(path);
  if (!image) return image.error();
  image_ = std::move(image.value());
  Result<std::vector<vision::FaceBox>> faces = finder_.find(image_);
  if (!faces) return Error{faces.error().kind, path + ": " + faces.error().message};
  faces_ = std::move(faces.value());
  return gallery::Ok{};
}

Result<ImageFace> ImageFaces::embed(std::size_t index) {
  if (image_.empty() || index >= faces_.size()) return Error{ErrorKind::Input, path_ + ": no face #" + std::to_string(index)};
  if (gallery::Status s = finder_.model_input(index, chw_); !s)
    return Error{s.error().kind, path_ + ": " + s.error().message};
  const InputDims dims = engine_.input_dims();
  Result<Embedding> embedding = engine_.embed({chw_, 3, dims.height, dims.width});
  if (!embedding) return Error{embedding.error().kind, path_ + ": " + embedding.error().message};
  double sum = 0.0;
  for (float v : embedding.value()) sum += static_cast<double>(v) * v;
  return ImageFace{std::move(embedding.value()), std::sqrt(sum)};
}

}  // namespace taconite::faces
