// A contact sheet of one cluster of unknown faces (taconite-gallery unknowns --sheets): the faces'
// aligned crops in a grid, best quality first, each captioned with its face id, camera and first
// sighting (UTC), as one JPEG a person can look at before naming the cluster.
#pragma once

#include <filesystem>
#include <span>

#include "gallery_store.hpp"

namespace taconite::gallery_cli {

inline constexpr int kSheetTile = 112;       // a tile: the aligned crop's size
inline constexpr int kSheetCaption = 48;     // the caption under a tile: 4 lines of text
inline constexpr int kSheetCell = kSheetTile + kSheetCaption;  // a tile and its caption, top to bottom
inline constexpr int kSheetColumns = 8;      // tiles in a row (fewer when the cluster is smaller)
inline constexpr std::size_t kSheetFaces = 48;  // tiles at most (6 rows): a sheet stays viewable
// A crop whose JPEG header declares more pixels a side than this is not decoded (a grey tile).
inline constexpr int kMaxCropSide = 1024;

// The grid for `faces` faces: columns x rows of cells (kSheetTile wide, kSheetCell high).
struct SheetGrid {
  int columns = 0, rows = 0;
};
SheetGrid sheet_grid(std::size_t faces);

// Writes `path` (JPEG): the faces (read with their pictures) best quality first, ties by id, at
// most kSheetFaces; each crop scaled to a tile, a grey tile for a face kept without a picture or
// with one that does not decode; under each its caption: "face ID", the camera, the date and
// time of its first sighting ("2025-12-01", "12:00:04 UTC"), in printable ASCII (the font has
// nothing else: any other character is '?'), each line cut with ".." to the tile's width. Io error naming the file when it cannot be
// written.
gallery::Status write_contact_sheet(const std::filesystem::path& path, std::span<const gallery::UnknownFaceRow* const> faces);

}  // namespace taconite::gallery_cli
