// Reading a caller's face for the CLI: an image file (OpenCV) or a raw f32 CHW file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "taconite/embedder.hpp"

namespace taconite::cli {

// An owned CHW tensor ready for Session::embed / IrEmbedder::embed.
struct OwnedFace {
  std::vector<float> data;
  int channels = 3, height = 0, width = 0;
  FaceChw view() const { return {data, channels, height, width}; }
};

// Decodes, resizes to the model's width x height and normalises as `model` says (Model::
// preprocessing(): for a bundle ((x/255)-0.5)/0.5), CHW planes in its channel order.
Result<OwnedFace> read_face_image(const std::string& path, const Preprocessing& model);
// A raw little-endian f32 CHW file of c*height*width values (c = file size / (4*h*w)).
Result<OwnedFace> read_face_f32(const std::string& path, int height, int width);
// Writes values as raw f32; an Io error naming the path when that fails, else nothing.
std::optional<Error> write_f32(const std::string& path, const std::vector<float>& values);

}  // namespace taconite::cli
