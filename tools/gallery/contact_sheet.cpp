#include "contact_sheet.hpp"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <vector>

#include "image_header.hpp"
#include "iso_time.hpp"

namespace taconite::gallery_cli {

namespace {

// Mid grey: "no picture" reads as a gap, not as a dark face.
const cv::Scalar kNoPicture(128, 128, 128);
// Light text on a dark strip, legible on any face above it.
const cv::Scalar kCaptionBackground(40, 40, 40);
const cv::Scalar kCaptionText(235, 235, 235);
constexpr int kFont = cv::FONT_HERSHEY_SIMPLEX;
constexpr double kFontScale = 0.35;
constexpr int kLineHeight = kSheetCaption / 4;
constexpr int kCaptionMargin = 3;  // pixels left of the text and kept free right of it
// More characters than a tile can show (~5 px each at the least): what is measured to fit is
// bounded, however long a stored stream name is.
constexpr std::size_t kMaxCaptionChars = 40;

// The crop as a tile; empty when there is none or it does not decode.
cv::Mat decode_tile(const std::vector<unsigned char>& jpeg) {
  if (jpeg.empty()) return {};
  Result<faces::ImageSize> size = faces::read_image_size(jpeg);
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

// The text as the Hershey font can draw it: one '?' per character outside printable ASCII (a
// UTF-8 sequence counts once: its continuation bytes are skipped).
std::string printable_ascii(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte & 0xC0) == 0x80) continue;
    out += byte >= 0x20 && byte < 0x7F ? c : '?';
  }
  return out;
}

int text_width(const std::string& text) {
  int baseline = 0;
  return cv::getTextSize(text, kFont, kFontScale, 1, &baseline).width;
}

// Cut to the tile's width, ".." marking the cut; the loop ends as the text only shrinks.
std::string fitted(std::string text) {
  constexpr int kWidth = kSheetTile - 2 * kCaptionMargin;
  if (text.size() > kMaxCaptionChars) text.resize(kMaxCaptionChars);
  if (text_width(text) <= kWidth) return text;
  while (!text.empty() && text_width(text + "..") > kWidth) text.pop_back();
  return text + "..";
}

// The caption's lines, top to bottom.
std::vector<std::string> caption_lines(const gallery::UnknownFaceRow& face) {
  std::vector<std::string> lines = {"face " + std::to_string(face.id), printable_ascii(face.stream.substr(0, 4 * kMaxCaptionChars))};
  if (const std::optional<std::string> when = iso_utc(face.first_seen_ms)) {
    lines.push_back(when->substr(0, 10));                // 2025-12-01
    lines.push_back(when->substr(11, 8) + " UTC");      // 12:00:04 UTC
  } else {
    lines.push_back("time invalid");
    lines.push_back("");
  }
  for (std::string& line : lines) line = fitted(std::move(line));
  return lines;
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
  cv::Mat sheet(grid.rows * kSheetCell, grid.columns * kSheetTile, CV_8UC3, kNoPicture);
  for (std::size_t i = 0; i < best.size(); ++i) {
    const int left = static_cast<int>(i) % grid.columns * kSheetTile, top = static_cast<int>(i) / grid.columns * kSheetCell;
    if (const cv::Mat tile = decode_tile(best[i]->jpeg); !tile.empty())
      tile.copyTo(sheet(cv::Rect(left, top, kSheetTile, kSheetTile)));
    cv::Mat caption = sheet(cv::Rect(left, top + kSheetTile, kSheetTile, kSheetCaption));
    caption.setTo(kCaptionBackground);
    const std::vector<std::string> lines = caption_lines(*best[i]);
    for (std::size_t l = 0; l < lines.size(); ++l)
      cv::putText(caption, lines[l], cv::Point(kCaptionMargin, static_cast<int>(l + 1) * kLineHeight - 3), kFont,
                  kFontScale, kCaptionText, 1, cv::LINE_AA);
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
