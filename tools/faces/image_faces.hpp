// The faces of a still image as a pipeline sees them: the photo read with its input checks
// (image_file.hpp), its faces found and aligned by a face finder (face_finder.hpp: dlib HOG +
// landmarks, YuNet, or an already aligned face), then embedded by the model. Enrolment, match and
// calibrate all go through it. Every error names the image's path.
#pragma once

#include <string>
#include <vector>

#include "face_finder.hpp"
#include "taconite/taconite.hpp"

namespace taconite::faces {

struct ImageFace {
  std::vector<float> embedding;  // raw network output (not normalised)
  double norm = 0.0;             // its L2 norm
};

class ImageFaces {
 public:
  ImageFaces(IrEmbedder& engine, FaceFinder& finder) : engine_(engine), finder_(finder) {}

  // Reads the image (read_image's checks) and finds its faces.
  gallery::Status load(const std::string& path);
  // The faces of the loaded image, largest first, in its pixels.
  const std::vector<vision::FaceBox>& faces() const { return faces_; }
  // Aligns and embeds faces()[index].
  Result<ImageFace> embed(std::size_t index);

 private:
  IrEmbedder& engine_;
  FaceFinder& finder_;
  std::string path_;
  cv::Mat image_;
  std::vector<vision::FaceBox> faces_;
  std::vector<float> chw_;
};

// The model input the finders make for `engine`.
ModelInput model_input_of(const IrEmbedder& engine);

}  // namespace taconite::faces
