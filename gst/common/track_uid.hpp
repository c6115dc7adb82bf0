// A track's uid: a random UUID v4, so no track of any stream, run or machine has another's. Made
// by taconitetrack for every track it confirms, and by taconitepublish for a track without one
// (no taconitetrack upstream).
#pragma once

#include <string>

namespace taconite::gst {

std::string new_track_uid();

}  // namespace taconite::gst
