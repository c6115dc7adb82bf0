#include "image_list.hpp"

#include <algorithm>
#include <string>

namespace taconite::faces {

namespace fs = std::filesystem;

bool has_image_extension(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png" || ext == ".bmp" || ext == ".webp" || ext == ".tif" ||
         ext == ".tiff" || ext == ".pgm" || ext == ".ppm";
}

Result<std::vector<fs::path>> directory_images(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && has_image_extension(e.path())) files.push_back(e.path());
    if (files.size() > kMaxDirectoryImages)
      return Error{ErrorKind::Input, dir.string() + ": more than " + std::to_string(kMaxDirectoryImages) +
                                         " images; give it in parts"};
  }
  if (ec) return Error{ErrorKind::Io, dir.string() + ": " + ec.message()};
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace taconite::faces
