// The images of a directory argument (enroll, calibrate --impostors): regular files with an image
// extension, sorted by name, at most kMaxDirectoryImages (bounds the listing).
#pragma once

#include <filesystem>
#include <vector>

#include "taconite/error.hpp"

namespace taconite::faces {

inline constexpr std::size_t kMaxDirectoryImages = 100000;

// True when the name ends in an image extension (.jpg, .jpeg, .png, .bmp, .webp, .tif, .tiff, .pgm, .ppm).
bool has_image_extension(const std::filesystem::path& p);

// The directory's images, sorted; an error naming it when it cannot be listed or holds too many.
Result<std::vector<std::filesystem::path>> directory_images(const std::filesystem::path& dir);

}  // namespace taconite::faces
