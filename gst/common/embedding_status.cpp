#include "embedding_status.hpp"

namespace taconite::gst {

const char* status_name(GstTaconiteEmbeddingStatus status) {
  switch (status) {
    case GST_TACONITE_EMBEDDING_COMPUTED: return "computed";
    case GST_TACONITE_EMBEDDING_CACHED: return "cached";
    case GST_TACONITE_EMBEDDING_SKIPPED: return "skipped";
  }
  return "computed";
}

}  // namespace taconite::gst
