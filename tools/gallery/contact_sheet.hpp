// A contact sheet of one cluster of unknown faces (taconite-gallery unknowns): the faces' aligned
// crops in a grid, best quality first, as one JPEG a person can look at before naming the cluster.
#pragma once

#include <filesystem>
#include <span>

#include "gallery_store.hpp"

namespace taconite::gallery_cli {

inline constexpr int kSheetTile = 112;       // a tile: the aligned crop's size
inline constexpr int kSheetColumns = 8;      // tiles in a row (fewer when the cluster is smaller)
inline constexpr std::size_t kSheetFaces = 48;  // tiles at most (6 rows): a sheet stays viewable
// A crop whose JPEG header declares more pixels a side than this is not decoded (a grey tile).
inline constexpr int kMaxCropSide = 1024;

// The grid for `faces` faces: columns x rows of kSheetTile pixels.
struct SheetGrid {
  int columns = 0, rows = 0;
};
SheetGrid sheet_grid(std::size_t faces);

// Writes `path` (JPEG): the faces (read with their pictures) best quality first, ties by id, at
// most kSheetFaces; each crop scaled to a tile, a grey tile for a face kept without a picture or
// with one that does not decode. Io error naming the file when it cannot be written.
gallery::Status write_contact_sheet(const std::filesystem::path& path, std::span<const gallery::UnknownFaceRow* const> faces);

}  // namespace taconite::gallery_cli
