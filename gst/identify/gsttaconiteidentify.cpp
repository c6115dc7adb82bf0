/**
 * SECTION:element-taconiteidentify
 * @title: taconiteidentify
 *
 * Names the faces taconiteadaface embedded: each #GstTaconiteEmbeddingMeta of a ROI is searched in
 * a face gallery (an SQLite file made with `taconite-gallery`, searched with FAISS) and the answer
 * is written to the ROI's params where applications already look:
 *
 * - DL Streamer-style, a structure `identity` with `label_state` (`pending` while the face's track
 *   votes, `known`, `unknown`) and, once decided, `label` (the identity's name, or `unknown`),
 *   `label_id` (the identity id from 1, -1 for unknown) and `confidence` (the cosine similarity);
 * - a structure `taconite-identity` with `name`, `identity-id`, `similarity` (this frame's best
 *   match), `settled`, `votes`, `track-id` (when tracked), `gallery-revision`, and the `top-k`
 *   candidates as `candidates` (names) and `candidate-similarities` (doubles).
 *
 * A face whose best similarity is below `threshold` is `unknown` (open-set decision). A tracked
 * face (ROI param `object_id`, e.g. from taconitetrack) is decided per track: each newly computed
 * embedding votes, and the track takes the identity holding a strict majority of its last
 * `vote-window` votes once it has `min-votes`; until then its `identity` param is `pending` (and
 * `taconite-identity` says settled=false), and one bad frame never flips a decided label. A tracked
 * face without a usable embedding shows its track's state (pending if never decided).
 * Untracked faces are decided frame by frame. Only new embeddings are searched: a reused (cached)
 * embedding keeps its track's last answer, and `search-budget` bounds the exact search of one
 * buffer. Each time a track is first decided on an identity
 * (including `unknown`), an element message `taconite-identity` is posted: `stream` (the `stream`
 * property, default the element's name), `stream-id`, `track-id`, `name`, `identity-id`,
 * `label-state`, `similarity` (mean of the winning votes), `running-time` and `utc` (ISO 8601).
 *
 * The gallery is loaded in the READY to PAUSED transition (missing, corrupt, wrong-schema or
 * foreign-model files fail it with an error naming the file); an HNSW index that is not saved yet
 * is built in the background while the gallery is searched exactly. While playing, a background
 * thread polls the file every `poll-interval` ms (or on the `reload` action signal): a new revision
 * or a file replaced by another (`mv new.db people.db`) is loaded and swapped in without stopping
 * video; a deleted file posts one warning and the loaded gallery stays in use. Set `bundle` to
 * check the gallery's model fingerprint against the bundle taconiteadaface runs; without it only
 * the model name and embedding size are checked.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! facedetect display=false ! taconitelandmarks ! taconitetrack ! \
 *     taconiteadaface bundle=/path/to/bundle reinfer-interval=5 ! taconiteidentify gallery=people.db ! \
 *     fakesink
 * ]|
 *
 * Since: 0.4
 */
#include "gsttaconiteidentify.h"

#include <gst/taconite/gsttaconitemeta.h>
#include <gst/video/video.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cxx_boundary.hpp"
#include "gallery_watcher.hpp"
#include "identity_votes.hpp"
#include "model_fingerprint.hpp"
#include "property_table.hpp"
#include "roi_track_param.hpp"

GST_DEBUG_CATEGORY_STATIC(taconite_identify_debug);
#define GST_CAT_DEFAULT taconite_identify_debug

namespace {

using namespace taconite::gst;
using taconite::vision::IdentityVote;
using taconite::vision::IdentityVotes;
using taconite::vision::kUnknownIdentity;
using taconite::vision::TrackDecision;
using taconite::vision::TrackSearch;
using taconite::vision::VotePolicy;
namespace gallery = taconite::gallery;

constexpr const char* kIdentityParam = "identity";
constexpr const char* kTaconiteIdentityParam = "taconite-identity";
constexpr const char* kUnknownLabel = "unknown";
// The identity param's label_state (docs/gstreamer.md): voting, decided on a gallery identity, decided unknown.
constexpr const char* kPending = "pending";
constexpr const char* kKnown = "known";
constexpr const char* kUnknownState = "unknown";
constexpr double kDefaultThreshold = 0.4;
constexpr guint kDefaultTopK = 3;
constexpr guint kDefaultVoteWindow = 5;
constexpr guint kDefaultMinVotes = 3;
constexpr guint kDefaultTrackTimeout = 150;
constexpr guint kDefaultPollInterval = 1000;
constexpr guint kMaxVoteWindow = 100;
// Templates the exact searches of one buffer may scan: ~2 searches of a 1 M gallery, ~130 ms of
// one AVX2 core (docs/performance.md).
constexpr guint64 kDefaultSearchBudget = 2000000;

// Property values; guarded by the object lock.
struct Settings {
  std::string gallery, bundle, track_id_param = "object_id";
  std::string stream;  // empty: the element's name
  double threshold = kDefaultThreshold;
  guint top_k = kDefaultTopK, vote_window = kDefaultVoteWindow, min_votes = kDefaultMinVotes;
  guint track_timeout = kDefaultTrackTimeout, poll_interval = kDefaultPollInterval;
  guint64 approximate_above = gallery::IndexOptions{}.approximate_above;
  guint ef_search = gallery::IndexOptions{}.hnsw_ef_search;
  guint64 search_budget = kDefaultSearchBudget;
  bool post_messages = true;
};

// What only the streaming thread touches.
struct Stream {
  IdentityVotes votes;
  guint64 frame = 0;
  std::string stream_id;
  bool warned_empty = false, warned_non_finite = false;
};

}  // namespace

struct _GstTaconiteIdentify {
  GstBaseTransform parent;
  Settings* settings;
  Stream* stream;
  // Made in start, gone in stop; guarded by the object lock (the reload signal may come from any
  // thread, also while the streaming thread is blocked downstream).
  std::shared_ptr<GalleryWatcher>* watcher;
};


enum { SIGNAL_RELOAD, N_SIGNALS };
static guint signals[N_SIGNALS];

static GstStaticPadTemplate sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS("video/x-raw(ANY)"));
static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS("video/x-raw(ANY)"));

G_DEFINE_TYPE_WITH_CODE(GstTaconiteIdentify, gst_taconite_identify, GST_TYPE_BASE_TRANSFORM,
                        GST_DEBUG_CATEGORY_INIT(taconite_identify_debug, "taconiteidentify", 0,
                                                "taconiteidentify element"));
GST_ELEMENT_REGISTER_DEFINE(taconiteidentify, "taconiteidentify", GST_RANK_NONE, GST_TYPE_TACONITE_IDENTIFY);

/* ------------------------------------------------------------------------------------------ */
/* Streaming                                                                                   */

namespace {

void remove_param(GstVideoRegionOfInterestMeta* roi, const char* name) {
  for (GList* l = roi->params; l;) {
    GList* next = l->next;
    if (gst_structure_has_name(static_cast<GstStructure*>(l->data), name)) {
      gst_structure_free(static_cast<GstStructure*>(l->data));
      roi->params = g_list_delete_link(roi->params, l);
    }
    l = next;
  }
}

// Replaces the ROI's param structure of the same name (the ROI's buffer is writable).
void replace_param(GstVideoRegionOfInterestMeta* roi, GstStructure* param) {
  remove_param(roi, gst_structure_get_name(param));
  gst_video_region_of_interest_meta_add_param(roi, param);
}

// The `identity` param of a face: "pending" while its track votes (no label), else the decided
// label, label_id (-1: unknown) and confidence (docs/gstreamer.md, label_state).
GstStructure* identity_param(const IdentityVote* decided) {
  if (!decided) return gst_structure_new(kIdentityParam, "label_state", G_TYPE_STRING, kPending, nullptr);
  return gst_structure_new(kIdentityParam, "label_state", G_TYPE_STRING,
                           decided->identity == kUnknownIdentity ? kUnknownState : kKnown, "label", G_TYPE_STRING,
                           decided->name.c_str(), "label_id", G_TYPE_INT, static_cast<gint>(decided->identity),
                           "confidence", G_TYPE_DOUBLE, decided->similarity, nullptr);
}

// One face of a buffer: its embedding, ROI, track and what the element answers.
struct FaceAnswer {
  GstVideoRegionOfInterestMeta* roi = nullptr;
  const GstTaconiteEmbeddingMeta* embedding = nullptr;
  std::optional<gint64> track;
  bool votes = false;   // a new embedding (or a reused one that never voted): its answer counts
  bool search = false;  // searched this buffer (else it keeps the track's last answer)
  guint64 waited = G_MAXUINT64;  // buffers since the track's last search (never: the most)
  std::vector<gallery::IdentityMatch> matches;
  TrackDecision decision;
  double similarity = 0.0;  // the best match's
};

GstStructure* taconite_param(const FaceAnswer& a, std::int64_t revision) {
  GValue names = G_VALUE_INIT, sims = G_VALUE_INIT;
  gst_value_array_init(&names, a.matches.size());
  gst_value_array_init(&sims, a.matches.size());
  for (const gallery::IdentityMatch& m : a.matches) {
    GValue v = G_VALUE_INIT;
    g_value_init(&v, G_TYPE_STRING);
    g_value_set_string(&v, m.name.c_str());
    gst_value_array_append_and_take_value(&names, &v);
    GValue d = G_VALUE_INIT;
    g_value_init(&d, G_TYPE_DOUBLE);
    g_value_set_double(&d, m.similarity);
    gst_value_array_append_and_take_value(&sims, &d);
  }
  const IdentityVote& who = a.decision.identity;
  GstStructure* s = gst_structure_new(
      kTaconiteIdentityParam, "name", G_TYPE_STRING, a.decision.settled ? who.name.c_str() : "", "identity-id",
      G_TYPE_INT64, static_cast<gint64>(a.decision.settled ? who.identity : kUnknownIdentity), "similarity",
      G_TYPE_DOUBLE, a.similarity, "settled", G_TYPE_BOOLEAN, a.decision.settled, "votes", G_TYPE_UINT,
      a.decision.votes, "gallery-revision", G_TYPE_INT64, static_cast<gint64>(revision), nullptr);
  if (a.track) gst_structure_set(s, "track-id", G_TYPE_INT64, *a.track, nullptr);
  gst_structure_take_value(s, "candidates", &names);
  gst_structure_take_value(s, "candidate-similarities", &sims);
  return s;
}

// The one ROI of the buffer with `id`; null when there is none or several (facedetect leaves every
// id at 0: an embedding keyed by a shared id belongs to no single face).
GstVideoRegionOfInterestMeta* unique_roi(GstBuffer* buffer, gint id) {
  GstVideoRegionOfInterestMeta* found = nullptr;
  gpointer state = nullptr;
  while (GstMeta* meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) {
    auto* roi = reinterpret_cast<GstVideoRegionOfInterestMeta*>(meta);
    if (roi->id != id) continue;
    if (found) return nullptr;
    found = roi;
  }
  return found;
}

// Picks the faces searched this buffer: new embeddings first, then the longest unsearched tracks,
// while the exact searches' templates fit `budget` (0: no limit); the first search always runs.
void plan_searches(std::vector<FaceAnswer>& faces, std::size_t cost, guint64 budget) {
  std::vector<FaceAnswer*> wanted;
  for (FaceAnswer& a : faces)
    if (a.search) wanted.push_back(&a);
  std::stable_sort(wanted.begin(), wanted.end(), [](const FaceAnswer* x, const FaceAnswer* y) {
    return x->votes != y->votes ? x->votes : x->waited > y->waited;
  });
  guint64 spent = 0;
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    if (i > 0 && budget > 0 && spent + cost > budget) {
      wanted[i]->search = false;
      continue;
    }
    spent += cost;
  }
}

}  // namespace

static GstFlowReturn identify_buffer(GstTaconiteIdentify* self, GstBuffer* buffer) {
  GstBaseTransform* trans = GST_BASE_TRANSFORM(self);
  Stream& stream = *self->stream;
  GST_OBJECT_LOCK(self);
  const Settings s = *self->settings;
  const std::string stream_name = s.stream.empty() ? GST_OBJECT_NAME(self) : s.stream;
  const std::shared_ptr<GalleryWatcher> watcher = *self->watcher;
  GST_OBJECT_UNLOCK(self);
  if (!watcher) return GST_FLOW_OK;
  const std::shared_ptr<const gallery::GalleryIndex> index = watcher->current();
  const guint64 now = stream.frame++;
  VotePolicy policy;
  policy.window = s.vote_window;
  policy.min_votes = s.min_votes;
  policy.timeout = s.track_timeout;
  stream.votes.evict(now, s.track_timeout);

  if (index->templates() == 0 && !stream.warned_empty) {
    stream.warned_empty = true;
    GST_ELEMENT_WARNING(self, RESOURCE, NOT_FOUND,
                        ("The gallery %s is empty: every face is unknown.", s.gallery.c_str()),
                        ("Enroll people with taconite-gallery enroll; the element picks them up while playing."));
  } else if (index->templates() > 0) {
    stream.warned_empty = false;
  }

  // Tracking ids of the frame's ROIs: an id on two ROIs names neither.
  std::unordered_map<gint64, int> track_uses;
  gpointer state = nullptr;
  while (GstMeta* meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) {
    const auto* roi = reinterpret_cast<GstVideoRegionOfInterestMeta*>(meta);
    if (std::optional<gint64> id = roi_track_id(roi, s.track_id_param)) ++track_uses[*id];
  }

  // The faces: embedding metas of ROIs, each once, with its tracking id when unique in the frame.
  std::vector<FaceAnswer> faces;
  state = nullptr;
  while (GstMeta* meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_TACONITE_EMBEDDING_META_API_TYPE)) {
    auto* e = reinterpret_cast<const GstTaconiteEmbeddingMeta*>(meta);
    if (e->roi_id == GST_TACONITE_WHOLE_BUFFER_ROI_ID || e->dim == 0 || !e->embedding) continue;
    GstVideoRegionOfInterestMeta* roi = unique_roi(buffer, e->roi_id);
    if (!roi) {
      GST_LOG_OBJECT(self, "embedding of ROI id %d: no single ROI has that id, skipped", e->roi_id);
      continue;
    }
    if (static_cast<int>(e->dim) != index->dim()) {
      GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                        ("Embeddings of %u values, the gallery %s holds %d.", e->dim, s.gallery.c_str(), index->dim()),
                        ("Enroll the gallery with the bundle taconiteadaface runs."));
      return GST_FLOW_ERROR;
    }
    if (e->model && *e->model && !index->model().empty() && index->model() != e->model) {
      GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                        ("Embeddings of model %s, the gallery %s was made with %s.", e->model, s.gallery.c_str(),
                         index->model().c_str()),
                        ("Embeddings of different models are not comparable: enroll the gallery with the bundle "
                         "taconiteadaface runs."));
      return GST_FLOW_ERROR;
    }
    if (!gallery::finite_query({e->embedding, e->dim})) {
      if (!stream.warned_non_finite)
        GST_ELEMENT_WARNING(self, STREAM, FORMAT, ("An embedding holds NaN or Inf values: its face is not identified."),
                            ("ROI id %d; the model's output overflowed. Reported once per stream.", e->roi_id));
      stream.warned_non_finite = true;
      continue;
    }
    FaceAnswer a;
    a.roi = roi;
    a.embedding = e;
    a.track = roi_track_id(roi, s.track_id_param);
    faces.push_back(a);
  }

  // What each face needs: a reused (cached) embedding is the same vector again, no new evidence,
  // so it keeps its track's last answer unless that answer is of another gallery revision.
  for (FaceAnswer& a : faces) {
    if (a.track && track_uses[*a.track] > 1) a.track.reset();  // an id on two faces names neither
    const bool fresh = a.embedding->status != GST_TACONITE_EMBEDDING_CACHED;
    const TrackSearch* last = a.track ? stream.votes.last_search(*a.track) : nullptr;
    a.votes = fresh || !a.track || stream.votes.deferred(*a.track);
    a.search = a.votes || !last || last->gallery_revision != index->revision();
    if (last) a.waited = now - last->frame;
  }
  plan_searches(faces, index->approximate() ? 0 : index->templates(), s.search_budget);

  const GstClockTime running_time = trans->segment.format == GST_FORMAT_TIME
                                        ? gst_segment_to_running_time(&trans->segment, GST_FORMAT_TIME,
                                                                      GST_BUFFER_PTS(buffer))
                                        : GST_CLOCK_TIME_NONE;
  for (FaceAnswer& a : faces) {
    if (!a.search && !a.track) continue;  // untracked and over the budget: no answer this buffer
    std::optional<IdentityVote> vote;
    if (a.search) {
      a.matches = index->search({a.embedding->embedding, a.embedding->dim}, static_cast<int>(s.top_k));
      if (a.votes) {
        vote = IdentityVote{kUnknownIdentity, kUnknownLabel, 0.0};
        if (!a.matches.empty() && a.matches.front().similarity >= s.threshold)
          vote = IdentityVote{a.matches.front().identity_id, a.matches.front().name, a.matches.front().similarity};
        else if (!a.matches.empty())
          vote->similarity = a.matches.front().similarity;
      }
    } else if (const TrackSearch* last = stream.votes.last_search(*a.track)) {
      a.matches = last->matches;
    }
    if (!a.matches.empty()) a.similarity = a.matches.front().similarity;
    if (a.track) {
      a.decision = stream.votes.add(*a.track, now, vote, policy);
      if (a.search)
        stream.votes.remember(*a.track, {now, index->revision(), a.matches});
      else if (a.votes)
        stream.votes.defer(*a.track);
    } else {
      a.decision = {true, *vote, false, 1};
    }
    replace_param(a.roi, identity_param(a.decision.settled ? &a.decision.identity : nullptr));
    replace_param(a.roi, taconite_param(a, index->revision()));
    GST_LOG_OBJECT(self, "ROI %d track %" G_GINT64_FORMAT ": %s best %s %.4f, decided %s", a.roi->id,
                   a.track.value_or(-1), a.search ? "searched" : "kept",
                   a.matches.empty() ? "-" : a.matches.front().name.c_str(), a.similarity,
                   a.decision.settled ? a.decision.identity.name.c_str() : "(voting)");
    if (s.post_messages && a.track && a.decision.first_for_identity) {
      const IdentityVote& who = a.decision.identity;
      GDateTime* now_utc = g_date_time_new_now_utc();
      gchar* utc = g_date_time_format_iso8601(now_utc);
      g_date_time_unref(now_utc);
      GstStructure* m = gst_structure_new(
          kTaconiteIdentityParam, "stream", G_TYPE_STRING, stream_name.c_str(), "stream-id", G_TYPE_STRING,
          stream.stream_id.c_str(), "track-id", G_TYPE_INT64, *a.track, "name", G_TYPE_STRING, who.name.c_str(),
          "identity-id", G_TYPE_INT64, static_cast<gint64>(who.identity), "label-state", G_TYPE_STRING,
          who.identity == kUnknownIdentity ? kUnknownState : kKnown, "similarity", G_TYPE_DOUBLE, who.similarity,
          "running-time", G_TYPE_UINT64, static_cast<guint64>(running_time), "utc", G_TYPE_STRING, utc, nullptr);
      g_free(utc);
      gst_element_post_message(GST_ELEMENT(self), gst_message_new_element(GST_OBJECT(self), m));
    }
  }

  // Every other tracked face (no usable embedding this buffer: skipped, NaN, not embedded) shows its
  // track's decision, or "pending"; an untracked face without an answer gets no identity param.
  std::unordered_set<const GstVideoRegionOfInterestMeta*> answered;
  for (const FaceAnswer& a : faces) answered.insert(a.roi);
  state = nullptr;
  while (GstMeta* meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) {
    auto* roi = reinterpret_cast<GstVideoRegionOfInterestMeta*>(meta);
    const std::optional<gint64> id = roi_track_id(roi, s.track_id_param);
    if (!id || track_uses[*id] > 1 || answered.contains(roi)) continue;
    replace_param(roi, identity_param(stream.votes.decided(*id)));
  }
  return GST_FLOW_OK;
}

static GstFlowReturn transform_ip(GstBaseTransform* trans, GstBuffer* buffer) {
  return flow_guarded(GST_ELEMENT(trans), "taconiteidentify could not identify the faces of a buffer.",
                      [&] { return identify_buffer(GST_TACONITE_IDENTIFY(trans), buffer); });
}

static bool start_identifying(GstTaconiteIdentify* self) {
  GST_OBJECT_LOCK(self);
  const Settings s = *self->settings;
  GST_OBJECT_UNLOCK(self);
  if (s.gallery.empty()) {
    GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("No gallery given."),
                      ("Set the 'gallery' property to a gallery made with taconite-gallery create."));
    return FALSE;
  }
  std::optional<gallery::ModelFingerprint> required;
  if (!s.bundle.empty()) {
    taconite::Result<gallery::ModelFingerprint> fingerprint = gallery::fingerprint_bundle(s.bundle);
    if (!fingerprint) {
      GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ, ("Could not read the bundle %s.", s.bundle.c_str()),
                        ("%s", fingerprint.error().message.c_str()));
      return FALSE;
    }
    required = fingerprint.value();
  }
  gallery::IndexOptions options;
  options.approximate_above = s.approximate_above;
  options.hnsw_ef_search = static_cast<int>(s.ef_search);
  auto watcher = std::make_shared<GalleryWatcher>(
      s.gallery, options, s.poll_interval, [self](GalleryWatcher::Level level, const std::string& message) {
        switch (level) {
          case GalleryWatcher::Level::Warning:
            GST_ELEMENT_WARNING(self, RESOURCE, READ, ("%s", message.c_str()), (nullptr));
            break;
          case GalleryWatcher::Level::Info:  // a PostgreSQL gallery back after an outage
            GST_ELEMENT_INFO(self, RESOURCE, READ, ("%s", message.c_str()), (nullptr));
            break;
          case GalleryWatcher::Level::Note: GST_INFO_OBJECT(self, "%s", message.c_str()); break;
        }
      });
  std::string note;
  if (taconite::gallery::Status started = watcher->start(required, &note); !started) {
    GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ, ("Could not load the gallery %s.", s.gallery.c_str()),
                      ("%s", started.error().message.c_str()));
    return FALSE;
  }
  GST_INFO_OBJECT(self, "gallery %s: %s", s.gallery.c_str(), note.c_str());
  if (watcher->current()->skipped_templates() > 0)
    GST_ELEMENT_WARNING(self, RESOURCE, READ, ("The gallery %s: %s", s.gallery.c_str(), note.c_str()), (nullptr));
  GST_OBJECT_LOCK(self);
  *self->watcher = std::move(watcher);
  GST_OBJECT_UNLOCK(self);
  return true;
}

static gboolean start(GstBaseTransform* trans) {
  return bool_guarded(GST_ELEMENT(trans), "taconiteidentify could not start.",
                      [&] { return start_identifying(GST_TACONITE_IDENTIFY(trans)); });
}

static gboolean stop(GstBaseTransform* trans) {
  GstTaconiteIdentify* self = GST_TACONITE_IDENTIFY(trans);
  // (joining the thread and freeing memory throw nothing the guard would not catch)
  return bool_guarded(GST_ELEMENT(trans), "taconiteidentify could not stop.", [self] {
  GST_OBJECT_LOCK(self);
  std::shared_ptr<GalleryWatcher> watcher = std::move(*self->watcher);
  self->watcher->reset();
  GST_OBJECT_UNLOCK(self);
  watcher.reset();  // joins its thread (outside the lock: its reports post messages)
  auto fresh = std::make_unique<Stream>();
  delete self->stream;
  self->stream = fresh.release();
  return true;
  });
}

static void forget_stream(GstTaconiteIdentify* self, GstEvent* event) {
  switch (GST_EVENT_TYPE(event)) {
    case GST_EVENT_STREAM_START: {
      const gchar* id = nullptr;
      gst_event_parse_stream_start(event, &id);
      self->stream->stream_id = id ? id : "";
      self->stream->votes.clear();  // a new stream's track ids are other faces
      break;
    }
    case GST_EVENT_FLUSH_STOP: self->stream->votes.clear(); break;
    default: break;
  }
}

static gboolean sink_event(GstBaseTransform* trans, GstEvent* event) {
  if (!bool_guarded(GST_ELEMENT(trans), "taconiteidentify could not handle an event.", [&] {
        forget_stream(GST_TACONITE_IDENTIFY(trans), event);
        return true;
      })) {
    gst_event_unref(event);
    return FALSE;
  }
  return GST_BASE_TRANSFORM_CLASS(gst_taconite_identify_parent_class)->sink_event(trans, event);
}

static void reload(GstTaconiteIdentify* self) {
  GST_OBJECT_LOCK(self);
  if (*self->watcher) (*self->watcher)->reload();  // only wakes the watcher's thread
  GST_OBJECT_UNLOCK(self);
}

/* ------------------------------------------------------------------------------------------ */
/* GObject                                                                                     */

// Every property, declared once; defaults are Settings{}'s.
static void declare_properties(PropertyTable<GstTaconiteIdentify, Settings>& t) {
  t.string("gallery", "Gallery",
           "Face gallery made with taconite-gallery create: an SQLite file, or a PostgreSQL "
           "connection string (postgresql://..., service=...; no password in it). Required. Default: unset",
           &Settings::gallery, Mutable::ReadyOnly);
  t.string("bundle", "Bundle",
           "The bundle taconiteadaface runs: when set, the gallery's model fingerprint must be this "
           "bundle's (else only the model name and embedding size are checked). Default: unset",
           &Settings::bundle, Mutable::ReadyOnly);
  t.real("threshold", "Threshold",
         "Least cosine similarity for a face to be named; below it the face is unknown. Depends on "
         "the model: calibrate it on your own enrolled faces. Default: 0.4",
         -1.0, 1.0, &Settings::threshold, Mutable::AnyTime);
  t.uint("top-k", "Top k", "Candidate identities listed per face in taconite-identity. Default: 3", 1,
         gallery::kMaxTopK, &Settings::top_k, Mutable::AnyTime);
  t.uint("vote-window", "Vote window", "Recent votes (newly computed embeddings) a track decides on. Default: 5",
         1, kMaxVoteWindow, &Settings::vote_window, Mutable::AnyTime);
  t.uint("min-votes", "Minimum votes",
         "Votes a track needs, and the winner must hold a strict majority of the window, before it is "
         "named; 1 decides on the first. Default: 3",
         1, kMaxVoteWindow, &Settings::min_votes, Mutable::AnyTime);
  t.string("stream", "Stream",
           "The stream (camera) name taconite-identity messages carry, as taconitepublish's stream; "
           "empty: the element's name. Default: empty",
           &Settings::stream, Mutable::AnyTime);
  t.string("track-id-param", "Track id param",
           "ROI param structure (field \"id\") or field holding the tracking id. Default: object_id",
           &Settings::track_id_param, Mutable::AnyTime);
  t.uint("track-timeout", "Track timeout", "Frames a track's votes are kept while it is not seen. Default: 150", 0,
         G_MAXUINT, &Settings::track_timeout, Mutable::AnyTime);
  t.uint("poll-interval", "Poll interval",
         "Milliseconds between two checks whether the gallery changed (a new index is built in the "
         "background); 0: only on the reload signal (and a PostgreSQL gallery's change notifications, "
         "which arrive whatever this is). Default: 1000",
         0, 3600000, &Settings::poll_interval, Mutable::ReadyOnly);
  t.uint64("approximate-above", "Approximate above",
           "Templates beyond which an HNSW index (persisted as <gallery>.hnsw) replaces exact search. "
           "Default: 1000000",
           0, G_MAXUINT64, &Settings::approximate_above, Mutable::ReadyOnly);
  t.uint("ef-search", "HNSW efSearch",
         "Query beam of the HNSW index (galleries above approximate-above): larger finds more of the "
         "exact matches and takes longer. Default: 128",
         1, gallery::kMaxEfSearch, &Settings::ef_search, Mutable::ReadyOnly);
  t.boolean("post-messages", "Post messages",
            "Post a taconite-identity element message when a track is first decided on an identity. "
            "Default: true",
            &Settings::post_messages, Mutable::AnyTime);
  t.uint64("search-budget", "Search budget",
           "Gallery templates the exact searches of one buffer may scan (each new embedding costs "
           "the gallery's template count; the first search of a buffer always runs). Faces over it "
           "keep their track's last answer and are searched on a later buffer, longest waiting "
           "first. 0: no limit. Default: 2000000",
           0, G_MAXUINT64, &Settings::search_budget, Mutable::AnyTime);
}

static void finalize(GObject* object) {
  GstTaconiteIdentify* self = GST_TACONITE_IDENTIFY(object);
  delete self->watcher;
  delete self->settings;
  delete self->stream;
  G_OBJECT_CLASS(gst_taconite_identify_parent_class)->finalize(object);
}

static void gst_taconite_identify_init(GstTaconiteIdentify* self) {
  self->settings = new Settings();
  self->stream = new Stream();
  self->watcher = new std::shared_ptr<GalleryWatcher>();
  gst_base_transform_set_in_place(GST_BASE_TRANSFORM(self), TRUE);
}

static void gst_taconite_identify_class_init(GstTaconiteIdentifyClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass* transform_class = GST_BASE_TRANSFORM_CLASS(klass);
  gobject_class->finalize = finalize;
  transform_class->transform_ip = GST_DEBUG_FUNCPTR(transform_ip);
  transform_class->start = GST_DEBUG_FUNCPTR(start);
  transform_class->stop = GST_DEBUG_FUNCPTR(stop);
  transform_class->sink_event = GST_DEBUG_FUNCPTR(sink_event);

  PropertyTable<GstTaconiteIdentify, Settings>::install(gobject_class, &GstTaconiteIdentify::settings, declare_properties);

  /**
   * GstTaconiteIdentify::reload:
   *
   * Re-reads the gallery in the background now (also when its revision did not change).
   */
  signals[SIGNAL_RELOAD] = g_signal_new_class_handler("reload", G_TYPE_FROM_CLASS(klass),
                                                      static_cast<GSignalFlags>(G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION),
                                                      G_CALLBACK(reload), nullptr, nullptr, nullptr, G_TYPE_NONE, 0);

  gst_element_class_add_static_pad_template(element_class, &sink_template);
  gst_element_class_add_static_pad_template(element_class, &src_template);
  gst_element_class_set_static_metadata(
      element_class, "Face identification", "Filter/Analyzer/Video",
      "Names the faces taconiteadaface embedded from a face gallery (SQLite + FAISS), with per-track voting; writes "
      "ROI params label/label_id/confidence",
      "taconite-adaface maintainers");
}
