#include "best_faces.hpp"

#include <cmath>

namespace taconite::gst {

bool BestQuality::beaten_by(double quality) const {
  return std::isfinite(quality) && (!best_ || quality > *best_);
}

}  // namespace taconite::gst
