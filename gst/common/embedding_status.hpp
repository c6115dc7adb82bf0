// The names of GstTaconiteEmbeddingMeta's status, as params, messages and documents write them.
#pragma once

#include <gst/taconite/gsttaconitemeta.h>

namespace taconite::gst {

// "computed", "cached" or "skipped" (the `status` field of params, messages and documents).
const char* status_name(GstTaconiteEmbeddingStatus status);

}  // namespace taconite::gst
