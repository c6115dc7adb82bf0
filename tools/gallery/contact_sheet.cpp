#include "contact_sheet.hpp"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <vector>

#include "image_header.hpp"

namespace taconite::gallery_cli {

namespace {

// Mid grey: "no picture" reads as a gap, not as a dark face.
const cv::Scalar kNoPicture(128, 128, 128);

// The crop as a tile; empty when there is none or it does not decode.
cv::Mat decode_tile(const std::vector<unsigned char>& jpeg) {
  if (jpeg.empty()) return {};
  Result<ImageSize> size = read_image_size(jpeg);
  if (!size || size.value().width > kMaxCropSide || size.value().height > kMaxCropSide) return {};
  cv::Mat crop;
  try {
    crop = cv::imdecode(jpeg, cv::IMREAD_COLOR);
  } catch (const cv::Exception&) {
    return {};
  }
  if (crop.empty()) return {};
  if (crop.cols != kSheetTile || crop.rows != kSheetTile)
    cv::resize(crop, crop, cv::Size(kSheetTile, kSheetTile), 0, 0, cv::INTER_AREA);
  return crop;
}

}  // namespace

SheetGrid sheet_grid(std::size_t faces) {
  const int shown = static_cast<int>(std::clamp<std::size_t>(faces, 1, kSheetFaces));
  const int columns = std::min(shown, kSheetColumns);
  return {columns, (shown + columns - 1) / columns};
}

gallery::Status write_contact_sheet(const std::filesystem::path& path, std::span<const gallery::UnknownFaceRow* const> faces) {
  std::vector<const gallery::UnknownFaceRow*> best(faces.begin(), faces.end());
  std::stable_sort(best.begin(), best.end(), [](const gallery::UnknownFaceRow* a, const gallery::UnknownFaceRow* b) {
    return a->quality != b->quality ? a->quality > b->quality : a->id < b->id;
  });
  if (best.size() > kSheetFaces) best.resize(kSheetFaces);
  const SheetGrid grid = sheet_grid(best.size());
  cv::Mat sheet(grid.rows * kSheetTile, grid.columns * kSheetTile, CV_8UC3, kNoPicture);
  for (std::size_t i = 0; i < best.size(); ++i) {
    const cv::Mat tile = decode_tile(best[i]->jpeg);
    if (tile.empty()) continue;
    const int column = static_cast<int>(i) % grid.columns, row = static_cast<int>(i) / grid.columns;
    tile.copyTo(sheet(cv::Rect(column * kSheetTile, row * kSheetTile, kSheetTile, kSheetTile)));
  }
  bool written = false;
  try {
    written = cv::imwrite(path.string(), sheet, {cv::IMWRITE_JPEG_QUALITY, 90});
  } catch (const cv::Exception& e) {
    return Error{ErrorKind::Io, path.string() + ": cannot write the contact sheet (" + e.what() + ")"};
  }
  if (!written) return Error{ErrorKind::Io, path.string() + ": cannot write the contact sheet"};
  return gallery::Ok{};
}

}  // namespace taconite::gallery_cli
