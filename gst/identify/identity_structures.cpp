#include "identity_structures.hpp"

#include <gst/taconite/gsttaconiteface.h>

namespace taconite::gst {

namespace {

using vision::kUnknownIdentity;

constexpr const char* kTaconiteIdentityParam = "taconite-identity";
// The message's label-state: decided on a gallery identity, decided unknown.
constexpr const char* kKnown = "known";
constexpr const char* kUnknownState = "unknown";

}  // namespace

bool set_roi_identity(GstVideoRegionOfInterestMeta* roi, const vision::IdentityVote* decided) {
  if (!decided) return gst_taconite_roi_set_identity_pending(roi);
  return gst_taconite_roi_set_identity(roi, decided->name.c_str(), static_cast<gint>(decided->identity),
                                       decided->similarity);
}

GstStructure* taconite_param(const std::vector<vision::IdentityCandidate>& candidates,
                             const vision::TrackDecision& decision, double similarity, std::optional<gint64> track,
                             std::int64_t revision) {
  GValue names = G_VALUE_INIT, sims = G_VALUE_INIT;
  gst_value_array_init(&names, candidates.size());
  gst_value_array_init(&sims, candidates.size());
  for (const vision::IdentityCandidate& m : candidates) {
    GValue v = G_VALUE_INIT;
    g_value_init(&v, G_TYPE_STRING);
    g_value_set_string(&v, m.name.c_str());
    gst_value_array_append_and_take_value(&names, &v);
    GValue d = G_VALUE_INIT;
    g_value_init(&d, G_TYPE_DOUBLE);
    g_value_set_double(&d, m.similarity);
    gst_value_array_append_and_take_value(&sims, &d);
  }
  const vision::IdentityVote& who = decision.identity;
  GstStructure* s = gst_structure_new(
      kTaconiteIdentityParam, "name", G_TYPE_STRING, decision.settled ? who.name.c_str() : "", "identity-id",
      G_TYPE_INT64, static_cast<gint64>(decision.settled ? who.identity : kUnknownIdentity), "similarity",
      G_TYPE_DOUBLE, similarity, "settled", G_TYPE_BOOLEAN, decision.settled, "votes", G_TYPE_UINT, decision.votes,
      "gallery-revision", G_TYPE_INT64, static_cast<gint64>(revision), nullptr);
  if (track) gst_structure_set(s, "track-id", G_TYPE_INT64, *track, nullptr);
  gst_structure_take_value(s, "candidates", &names);
  gst_structure_take_value(s, "candidate-similarities", &sims);
  return s;
}

GstStructure* identity_message(const std::string& stream, const std::string& stream_id, gint64 track,
                               const vision::IdentityVote& who, GstClockTime running_time) {
  GDateTime* now_utc = g_date_time_new_now_utc();
  gchar* utc = g_date_time_format_iso8601(now_utc);
  g_date_time_unref(now_utc);
  GstStructure* m = gst_structure_new(
      kTaconiteIdentityParam, "stream", G_TYPE_STRING, stream.c_str(), "stream-id", G_TYPE_STRING, stream_id.c_str(),
      "track-id", G_TYPE_INT64, track, "name", G_TYPE_STRING, who.name.c_str(), "identity-id", G_TYPE_INT64,
      static_cast<gint64>(who.identity), "label-state", G_TYPE_STRING,
      who.identity == kUnknownIdentity ? kUnknownState : kKnown, "similarity", G_TYPE_DOUBLE, who.similarity,
      "running-time", G_TYPE_UINT64, static_cast<guint64>(running_time), "utc", G_TYPE_STRING, utc, nullptr);
  g_free(utc);
  return m;
}

}  // namespace taconite::gst
