// taconite-gallery calibrate: the match threshold for a gallery from its own templates
// (leave-one-out genuine probes) and impostor faces (a directory of photos of people not enrolled,
// else the unknown faces the gallery keeps, else the genuine probes' best other identity), scored
// as taconiteidentify decides (gallery/calibration.hpp, gallery/open_set_scores.hpp).
#pragma once

#include <functional>
#include <string>

#include "calibration.hpp"
#include "gallery_store.hpp"
#include "image_faces.hpp"

namespace taconite::gallery_cli {

struct CalibrateOptions {
  std::string gallery;
  std::string impostors;  // a directory of photos; empty: the gallery's unknown faces
  double target_fpir = gallery::kDefaultTargetFpir;
  bool json = false;      // one JSON object on stdout instead of the text report
  std::string plot;       // a PNG to write; empty: none
};

// Runs the calibration and prints its report. `images` finds and embeds the impostor photos
// (needed only with options.impostors); `warn` prints one warning (an impostor photo skipped, the
// impostors' source).
gallery::Status calibrate(const CalibrateOptions& options, const gallery::GalleryStore& store, faces::ImageFaces* images,
                          const std::function<void(const std::string&)>& warn);

}  // namespace taconite::gallery_cli
