// The faces of a still image through the pipelines' stock front end: dlib HOG detection, dlib
// 68-point landmarks, the 5-point similarity alignment to the model's template, then the embedder.
// Enrollment and `match` thereby see a face as taconitelandmarks + taconiteadaface do.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "face_landmarks.hpp"
#include "gallery_store.hpp"
#include "taconite/taconite.hpp"

namespace taconite::gallery_cli {

struct ImageFace {
  std::vector<float> embedding;  // raw network output (not normalised)
  double norm = 0.0;             // its L2 norm
};

class ImageFaces {
 public:
  ImageFaces(IrEmbedder& engine, std::shared_ptr<const vision::LandmarkModel> landmarks);
  ~ImageFaces();
  ImageFaces(const ImageFaces&) = delete;
  ImageFaces& operator=(const ImageFaces&) = delete;

  // Decodes the image and finds its faces. The file must be a regular file (a FIFO or device is
  // refused, never waited on) of at most kMaxFileBytes whose header (image_header.hpp) gives at
  // most kMaxPixels: both are checked before anything is decoded. Images whose longer side is at
  // most kUpscaleBelow pixels are searched at twice their size: HOG finds faces of ~80 pixels and
  // up, upscaled ~40 (opencv-doc's messi5.jpg shows a 38-pixel face).
  gallery::Status load(const std::string& path);
  // The faces of the loaded image, largest first, in its pixels.
  const std::vector<vision::FaceBox>& faces() const;
  // Aligns and embeds faces()[index].
  Result<ImageFace> embed(std::size_t index);

  static constexpr int kUpscaleBelow = 1024;
  static constexpr long long kMaxPixels = 64LL << 20;  // larger images are refused (memory bound)
  static constexpr std::uint64_t kMaxFileBytes = std::uint64_t{512} << 20;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace taconite::gallery_cli
