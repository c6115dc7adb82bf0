/**
 * SECTION:element-taconiteidentify
 * @title: taconiteidentify
 *
 * Names the faces taconiteadaface embedded: each #GstTaconiteEmbeddingMeta of a ROI is searched in
 * a face gallery (an SQLite file made with `taconite-gallery`, searched with FAISS) and the answer
 * is written to the ROI's params where applications already look:
 *
 * - DL Streamer-style, a structure `identity` with `label_state` (`pending` until the face's track
 *   has voted once, `known`, `unknown`) and, once decided, `label` (the identity's name, or `unknown`),
 *   `label_id` (the identity id from 1, -1 for unknown) and `confidence` (the cosine similarity);
 * - a structure `taconite-identity` with `name`, `identity-id`, `similarity` (this frame's best
 *   match), `settled`, `votes`, `track-id` (when tracked), `gallery-revision`, and the `top-k`
 *   candidates as `candidates` (names) and `candidate-similarities` (doubles).
 *
 * A face whose best similarity is below `threshold` is `unknown` (open-set decision). `threshold`
 * unset is the model's: the `threshold` of the description of the ONNX model `model` (with
 * `model-proc`), else 0.4; the start posts an INFO message with the threshold in use and where it
 * came from, and reading `threshold` gives it. A tracked face (ROI param `object_id`, e.g. from
 * taconitetrack) is decided per track, a rule made for the few, quality-ranked embeddings of
 * best-shot embedding (taconiteadaface `reinfer-mode=best`): each newly computed embedding votes
 * for its identity (or unknown), weighted by the face's quality (taconiteadaface's `quality`
 * param: `embedding-score`, else `score`, clamped to 0.05..1; 1 without it). The first vote
 * decides the track. Afterwards the track's identity is the one with the largest total weight over
 * its last `vote-window` votes (a tie keeps the decision), but another identity takes a decided
 * track only when it also holds `min-votes` of those votes, so one bad frame never flips a label.
 * Its `confidence` is the mean similarity of the decided identity's votes in the window. A track
 * is `pending` (and `taconite-identity` says settled=false) only until its first vote; a tracked
 * face without a usable embedding shows its track's state (pending if it never voted).
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
 * video; a deleted file posts one warning and the loaded gallery stays in use. Set `model` (alias
 * `bundle`) to check the gallery's model fingerprint against the model taconiteadaface runs (only
 * its files are read, the network is not loaded); without it only the model name and embedding
 * size are checked.
 *
 * With `keep-unknowns` (off by default) the best face (by taconiteadaface's quality) of each track
 * that ends decided unknown (taconitetrack ending it, else track-timeout; end of stream, flush, new
 * stream, stop) is kept in the gallery for review with `taconite-gallery unknowns`: embedding,
 * aligned 112x112 JPEG, stream, time span, nearest identity. A writer thread behind a queue of 32 does the writing; a full queue
 * or a failed write drops the face (`unknowns-dropped`), the video never waits; a gallery file
 * deleted while playing fails the writes, one replaced is written into when of the same model.
 * Messages never show a PostgreSQL password (masked as ****). Retention:
 * `unknowns-max-count`, `unknowns-max-age`. It stores pictures of people: see docs/gstreamer.md.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! taconitedetect model=face_detection_yunet_2023mar.onnx ! \
 *     taconitetrack ! taconiteadaface model=mobilefacenet.onnx reinfer-mode=best ! \
 *     taconiteidentify gallery=people.db model=mobilefacenet.onnx keep-unknowns=true ! fakesink
 * ]|
 *
 * Since: 0.4
 */
#include "gsttaconiteidentify.h"

#include <gst/taconite/gsttaconiteface.h>
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
#include "displayed_location.hpp"
#include "face_selection.hpp"
#include "gallery_watcher.hpp"
#include "identity_structures.hpp"
#include "identity_votes.hpp"
#include "model_fingerprint.hpp"
#include "property_table.hpp"
#include "roi_params.hpp"
#include "roi_track_param.hpp"
#include "taconite/model.hpp"
#include "tracks_ended.hpp"
#include "unknown_keeper.hpp"

GST_DEBUG_CATEGORY_STATIC(taconite_identify_debug);
#define GST_CAT_DEFAULT taconite_identify_debug

namespace {

using namespace taconite::gst;
using taconite::vision::IdentityCandidate;
using taconite::vision::IdentityVote;
using taconite::vision::IdentityVotes;
using taconite::vision::kUnknownIdentity;
using taconite::vision::TrackDecision;
using taconite::vision::TrackSearch;
using taconite::vision::VotePolicy;
namespace gallery = taconite::gallery;

constexpr const char* kUnknownLabel = "unknown";
// The threshold of a model that recommends none (a bundle, or a description without `threshold`).
constexpr double kFallbackThreshold = 0.4;
constexpr guint kDefaultTopK = 3;
constexpr guint kDefaultVoteWindow = 5;
constexpr guint kDefaultMinVotes = 2;
constexpr guint kDefaultTrackTimeout = 150;
constexpr guint kDefaultPollInterval = 1000;
constexpr guint kMaxVoteWindow = 100;
// Templates the exact searches of one buffer may scan: ~2 searches of a 1 M gallery, ~130 ms of
// one AVX2 core (docs/performance.md).
constexpr guint64 kDefaultSearchBudget = 2000000;
constexpr guint64 kMaxUnknownsAge = 100ull * 365 * 24 * 3600;  // keep-unknowns: 100 years at most

// Property values; guarded by the object lock.
struct Settings {
  std::string gallery, model, model_proc, track_id_param = "object_id";
  std::string stream;  // empty: the element's name
  std::optional<double> threshold;  // set by the user; none: the model's (model_threshold)
  double model_threshold = kFallbackThreshold;  // the model's recommendation (or the fallback), found at start
  guint top_k = kDefaultTopK, vote_window = kDefaultVoteWindow, min_votes = kDefaultMinVotes;
  guint track_timeout = kDefaultTrackTimeout, poll_interval = kDefaultPollInterval;
  guint64 approximate_above = gallery::IndexOptions{}.approximate_above;
  guint ef_search = gallery::IndexOptions{}.hnsw_ef_search;
  guint64 search_budget = kDefaultSearchBudget;
  bool post_messages = true;
  bool keep_unknowns = false;
  guint unknowns_max_count = gallery::UnknownRetention{}.max_count;
  guint64 unknowns_max_age = gallery::UnknownRetention{}.max_age_s;
};

// What only the streaming thread touches.
struct Stream {
  IdentityVotes votes;
  guint64 frame = 0;
  std::string stream_id;
  bool warned_empty = false, warned_non_finite = false;
  std::unique_ptr<UnknownKeeper> unknowns;  // keep-unknowns: made in start, gone in stop
};

}  // namespace

struct _GstTaconiteIdentify {
  GstBaseTransform parent;
  Settings* settings;
  Stream* stream;
  // Made in start, gone in stop; guarded by the object lock (the reload signal may come from any
  // thread, also while the streaming thread is blocked downstream).
  std::shared_ptr<GalleryWatcher>* watcher;
  // keep-unknowns' counts, readable after stop; a fresh pair from each start.
  std::shared_ptr<UnknownCounters>* unknown_counters;
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

// One face of a buffer: its embedding, ROI, track and what the element answers.
struct FaceAnswer {
  GstVideoRegionOfInterestMeta* roi = nullptr;
  const GstTaconiteEmbeddingMeta* embedding = nullptr;
  std::optional<gint64> track;
  bool votes = false;   // a new embedding (or a reused one that never voted): its answer counts
  bool search = false;  // searched this buffer (else it keeps the track's last answer)
  guint64 waited = G_MAXUINT64;  // buffers since the track's last search (never: the most)
  std::vector<IdentityCandidate> candidates;  // best first
  TrackDecision decision;
  double similarity = 0.0;  // the best match's
};

// The gallery's answer in the votes' terms (vision/ knows no gallery types).
std::vector<IdentityCandidate> candidates_of(const std::vector<gallery::IdentityMatch>& matches) {
  std::vector<IdentityCandidate> candidates;
  candidates.reserve(matches.size());
  for (const gallery::IdentityMatch& m : matches) candidates.push_back({m.identity_id, m.name, m.similarity});
  return candidates;
}

// The one ROI of the buffer with `id`; null when there is none or several (facedetect leaves every
// id at 0: an embedding keyed by a shared id belongs to no single face).
GstVideoRegionOfInterestMeta* unique_roi(const std::vector<GstVideoRegionOfInterestMeta*>& rois, gint id) {
  GstVideoRegionOfInterestMeta* found = nullptr;
  for (GstVideoRegionOfInterestMeta* roi : rois) {
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

TrackVerdict track_verdict(const TrackDecision& d) {
  if (!d.settled) return TrackVerdict::Pending;
  return d.identity.identity == kUnknownIdentity ? TrackVerdict::Unknown : TrackVerdict::Known;
}

}  // namespace

// The `stream` property, or the element's name when it is empty (taken under the object lock).
static std::string stream_name_locked(GstTaconiteIdentify* self) {
  return self->settings->stream.empty() ? GST_OBJECT_NAME(self) : self->settings->stream;
}

namespace {

// What one buffer's steps share: the settings and gallery it is identified with, its frame number
// and clocks.
struct BufferScope {
  Settings settings;
  std::string stream_name;
  std::shared_ptr<const gallery::GalleryIndex> index;
  guint64 now = 0;
  std::int64_t utc_ms = 0;  // the clock of the messages' `utc`
  GstClockTime running_time = GST_CLOCK_TIME_NONE;
  double threshold = kFallbackThreshold;
};

}  // namespace

// Tracking ids of the frame's ROIs, with how many ROIs carry each: an id on two ROIs names neither.
static std::unordered_map<gint64, int> count_track_uses(const std::vector<GstVideoRegionOfInterestMeta*>& rois,
                                                        const std::string& param) {
  std::unordered_map<gint64, int> uses;
  for (const GstVideoRegionOfInterestMeta* roi : rois)
    if (std::optional<gint64> id = roi_track_id(roi, param)) ++uses[*id];
  return uses;
}

// Warns once (until people are enrolled) that an empty gallery makes every face unknown.
static void warn_when_gallery_empty(GstTaconiteIdentify* self, Stream& stream, const BufferScope& b) {
  if (b.index->templates() > 0) {
    stream.warned_empty = false;
    return;
  }
  if (stream.warned_empty) return;
  stream.warned_empty = true;
  GST_ELEMENT_WARNING(self, RESOURCE, NOT_FOUND,
                      ("The gallery %s is empty: every face is unknown.",
                       gallery::displayed_location(b.settings.gallery).c_str()),
                      ("Enroll people with taconite-gallery enroll; the element picks them up while playing."));
}

// The faces: embedding metas of ROIs, each once, with its tracking id. An embedding of another size
// or model than the gallery's is a stream error (false, posted).
static bool read_faces(GstTaconiteIdentify* self, GstBuffer* buffer,
                       const std::vector<GstVideoRegionOfInterestMeta*>& rois, const BufferScope& b, Stream& stream,
                       std::vector<FaceAnswer>& faces) {
  const gallery::GalleryIndex& index = *b.index;
  gpointer state = nullptr;
  while (GstMeta* meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_TACONITE_EMBEDDING_META_API_TYPE)) {
    auto* e = reinterpret_cast<const GstTaconiteEmbeddingMeta*>(meta);
    if (e->roi_id == GST_TACONITE_WHOLE_BUFFER_ROI_ID || e->dim == 0 || !e->embedding) continue;
    GstVideoRegionOfInterestMeta* roi = unique_roi(rois, e->roi_id);
    if (!roi) {
      GST_LOG_OBJECT(self, "embedding of ROI id %d: no single ROI has that id, skipped", e->roi_id);
      continue;
    }
    if (static_cast<int>(e->dim) != index.dim()) {
      GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                        ("Embeddings of %u values, the gallery %s holds %d.", e->dim,
                         gallery::displayed_location(b.settings.gallery).c_str(), index.dim()),
                        ("Enroll the gallery with the bundle taconiteadaface runs."));
      return false;
    }
    if (e->model && *e->model && !index.model().empty() && index.model() != e->model) {
      GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                        ("Embeddings of model %s, the gallery %s was made with %s.", e->model,
                         gallery::displayed_location(b.settings.gallery).c_str(), index.model().c_str()),
                        ("Embeddings of different models are not comparable: enroll the gallery with the bundle "
                         "taconiteadaface runs."));
      return false;
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
    a.track = roi_track_id(roi, b.settings.track_id_param);
    faces.push_back(a);
  }
  return true;
}

// What each face needs: a reused (cached) embedding is the same vector again, no new evidence, so it
// keeps its track's last answer unless that answer is of another gallery revision. Then the
// searches are bounded by the budget.
static void plan_answers(std::vector<FaceAnswer>& faces, const std::unordered_map<gint64, int>& track_uses,
                         const IdentityVotes& votes, const BufferScope& b) {
  for (FaceAnswer& a : faces) {
    if (a.track && track_uses.at(*a.track) > 1) a.track.reset();  // an id on two faces names neither
    const bool fresh = a.embedding->status != GST_TACONITE_EMBEDDING_CACHED;
    const TrackSearch* last = a.track ? votes.last_search(*a.track) : nullptr;
    a.votes = fresh || !a.track || votes.deferred(*a.track);
    a.search = a.votes || !last || last->gallery_revision != b.index->revision();
    if (last) a.waited = b.now - last->frame;
  }
  plan_searches(faces, b.index->approximate() ? 0 : b.index->templates(), b.settings.search_budget);
}

// The face's candidates: searched in the gallery, or its track's last ones. A new embedding's vote
// (weighted by taconiteadaface's quality of the face: a better view counts more) when it votes.
static std::optional<IdentityVote> search_or_recall(FaceAnswer& a, const IdentityVotes& votes, const BufferScope& b) {
  std::optional<IdentityVote> vote;
  if (a.search) {
    a.candidates = candidates_of(
        b.index->search({a.embedding->embedding, a.embedding->dim}, static_cast<int>(b.settings.top_k)));
    if (a.votes) {
      vote = IdentityVote{kUnknownIdentity, kUnknownLabel, 0.0, taconite::vision::vote_weight(roi_quality(a.roi))};
      if (!a.candidates.empty() && a.candidates.front().similarity >= b.threshold) {
        vote->identity = a.candidates.front().identity;
        vote->name = a.candidates.front().name;
      }
      if (!a.candidates.empty()) vote->similarity = a.candidates.front().similarity;
    }
  } else if (const TrackSearch* last = votes.last_search(*a.track)) {
    a.candidates = last->candidates;
  }
  if (!a.candidates.empty()) a.similarity = a.candidates.front().similarity;
  return vote;
}

// The face's decision: its track's votes (remembering this search, or deferring the vote of one
// over the budget), or, untracked, this frame's vote alone.
static void decide(FaceAnswer& a, const std::optional<IdentityVote>& vote, IdentityVotes& votes, const BufferScope& b) {
  if (!a.track) {
    a.decision = {true, *vote, false, 1};
    return;
  }
  VotePolicy policy;
  policy.window = b.settings.vote_window;
  policy.min_votes = b.settings.min_votes;
  policy.timeout = b.settings.track_timeout;
  a.decision = votes.add(*a.track, b.now, vote, policy);
  if (tracker_owned(a.roi)) votes.keep_until_ended(*a.track);  // taconitetrack ends it
  if (a.search)
    votes.remember(*a.track, {b.now, b.index->revision(), a.candidates});
  else if (a.votes)
    votes.defer(*a.track);
}

// The identity params of the face's ROI (DL Streamer's `identity` and `taconite-identity`).
static void write_identity_params(GstTaconiteIdentify* self, const FaceAnswer& a, const BufferScope& b) {
  set_roi_identity(a.roi, a.decision.settled ? &a.decision.identity : nullptr);
  gst_taconite_roi_replace_param(a.roi, taconite_param(a.candidates, a.decision, a.similarity, a.track, b.index->revision()));
  GST_LOG_OBJECT(self, "ROI %d track %" G_GINT64_FORMAT ": %s best %s %.4f, decided %s", a.roi->id,
                 a.track.value_or(-1), a.search ? "searched" : "kept",
                 a.candidates.empty() ? "-" : a.candidates.front().name.c_str(), a.similarity,
                 a.decision.settled ? a.decision.identity.name.c_str() : "(voting)");
}

// Posts the `taconite-identity` message when the face's track was first decided on its identity.
static void post_first_decision(GstTaconiteIdentify* self, const FaceAnswer& a, const Stream& stream,
                                const BufferScope& b) {
  if (!b.settings.post_messages || !a.track || !a.decision.first_for_identity) return;
  GstStructure* m = identity_message(b.stream_name, stream.stream_id, *a.track, a.decision.identity, b.running_time);
  gst_element_post_message(GST_ELEMENT(self), gst_message_new_element(GST_OBJECT(self), m));
}

// Answers one face: search (or recall), decide, keep-unknowns, params, message.
static void answer_face(GstTaconiteIdentify* self, FaceAnswer& a, Stream& stream, const BufferScope& b) {
  if (!a.search && !a.track) return;  // untracked and over the budget: no answer this buffer
  const std::optional<IdentityVote> vote = search_or_recall(a, stream.votes, b);
  decide(a, vote, stream.votes, b);
  if (stream.unknowns && a.track)  // the face is a candidate when its embedding is searched for the first time
    stream.unknowns->face(*a.track, b.now, b.utc_ms, track_verdict(a.decision), a.roi,
                          a.search && a.votes ? a.embedding : nullptr, a.candidates);
  write_identity_params(self, a, b);
  post_first_decision(self, a, stream, b);
}

// Every other tracked face (no usable embedding this buffer: skipped, NaN, not embedded) shows its
// track's decision, or "pending"; an untracked face without an answer gets no identity param.
static void show_track_decisions(const std::vector<GstVideoRegionOfInterestMeta*>& rois,
                                 const std::vector<FaceAnswer>& faces,
                                 const std::unordered_map<gint64, int>& track_uses, const IdentityVotes& votes,
                                 const BufferScope& b) {
  std::unordered_set<const GstVideoRegionOfInterestMeta*> answered;
  for (const FaceAnswer& a : faces) answered.insert(a.roi);
  for (GstVideoRegionOfInterestMeta* roi : rois) {
    const std::optional<gint64> id = roi_track_id(roi, b.settings.track_id_param);
    if (!id || track_uses.at(*id) > 1 || answered.contains(roi)) continue;
    set_roi_identity(roi, votes.decided(*id));
  }
}

// This buffer's scope (the settings taken under the object lock); none without a gallery loaded.
static std::optional<BufferScope> buffer_scope(GstTaconiteIdentify* self, GstBuffer* buffer) {
  BufferScope b;
  GST_OBJECT_LOCK(self);
  b.settings = *self->settings;
  b.stream_name = stream_name_locked(self);
  const std::shared_ptr<GalleryWatcher> watcher = *self->watcher;
  GST_OBJECT_UNLOCK(self);
  if (!watcher) return std::nullopt;
  b.index = watcher->current();
  b.now = self->stream->frame++;
  b.utc_ms = g_get_real_time() / 1000;
  const GstSegment& segment = GST_BASE_TRANSFORM(self)->segment;
  if (segment.format == GST_FORMAT_TIME)
    b.running_time = gst_segment_to_running_time(&segment, GST_FORMAT_TIME, GST_BUFFER_PTS(buffer));
  b.threshold = b.settings.threshold.value_or(b.settings.model_threshold);
  return b;
}

static GstFlowReturn identify_buffer(GstTaconiteIdentify* self, GstBuffer* buffer) {
  Stream& stream = *self->stream;
  const std::optional<BufferScope> scope = buffer_scope(self, buffer);
  if (!scope) return GST_FLOW_OK;
  const BufferScope& b = *scope;
  if (stream.unknowns) stream.unknowns->begin_buffer(b.now, b.settings.track_timeout, b.stream_name);
  stream.votes.evict(b.now, b.settings.track_timeout);
  warn_when_gallery_empty(self, stream, b);

  const std::vector<GstVideoRegionOfInterestMeta*> rois = buffer_rois(buffer);
  const std::unordered_map<gint64, int> track_uses = count_track_uses(rois, b.settings.track_id_param);
  std::vector<FaceAnswer> faces;
  if (!read_faces(self, buffer, rois, b, stream, faces)) return GST_FLOW_ERROR;
  plan_answers(faces, track_uses, stream.votes, b);
  for (FaceAnswer& a : faces) answer_face(self, a, stream, b);
  show_track_decisions(rois, faces, track_uses, stream.votes, b);
  if (stream.unknowns) stream.unknowns->end_buffer(buffer);
  return GST_FLOW_OK;
}

static GstFlowReturn transform_ip(GstBaseTransform* trans, GstBuffer* buffer) {
  return flow_guarded(GST_ELEMENT(trans), "taconiteidentify could not identify the faces of a buffer.",
                      [&] { return identify_buffer(GST_TACONITE_IDENTIFY(trans), buffer); });
}

// Settles the threshold a start uses when the property is not set: the model's recommendation, else
// the fallback; says which (bus INFO message and debug log), and the property reads it from now on.
static void report_threshold(GstTaconiteIdentify* self, const Settings& s, std::optional<double> recommended) {
  const double model_threshold = recommended.value_or(kFallbackThreshold);
  std::string source;
  if (s.threshold)
    source = "the threshold property";
  else if (recommended)
    source = "the model's recommended threshold: the description " +
             (s.model_proc.empty() ? "beside " + s.model : s.model_proc);
  else if (!s.model.empty())
    source = "the fallback: the model " + s.model + " recommends none";
  else
    source = "the fallback: no model set";
  const double used = s.threshold.value_or(model_threshold);
  GST_INFO_OBJECT(self, "match threshold %.4g (%s)", used, source.c_str());
  GST_ELEMENT_INFO(self, RESOURCE, SETTINGS, ("Match threshold %.4g (%s).", used, source.c_str()), (nullptr));
  GST_OBJECT_LOCK(self);
  self->settings->model_threshold = model_threshold;
  GST_OBJECT_UNLOCK(self);
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
  std::optional<double> recommended;
  if (!s.model.empty()) {
    taconite::Result<gallery::ModelFingerprint> fingerprint = gallery::fingerprint_model(s.model, s.model_proc);
    // The description alone is read (the network is taconiteadaface's to load).
    taconite::Result<std::optional<double>> threshold =
        fingerprint ? taconite::Model::read_recommended_threshold(s.model, s.model_proc)
                    : taconite::Result<std::optional<double>>(fingerprint.error());
    if (!threshold) {
      GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ, ("Could not read the model %s.", s.model.c_str()),
                        ("%s", threshold.error().message.c_str()));
      return FALSE;
    }
    required = fingerprint.value();
    recommended = threshold.value();
  }
  report_threshold(self, s, recommended);
  gallery::IndexOptions options;
  options.approximate_above = s.approximate_above;
  options.hnsw_ef_search = static_cast<int>(s.ef_search);
  // Warnings: a gallery outage or failing unknown-face writes (once each); infos (bus messages):
  // they work again; notes: the debug log only.
  const auto post = [self](GalleryWatcher::Level level, const std::string& message) {
    switch (level) {
      case GalleryWatcher::Level::Warning:
        GST_ELEMENT_WARNING(self, RESOURCE, READ, ("%s", message.c_str()), (nullptr));
        break;
      case GalleryWatcher::Level::Info: GST_ELEMENT_INFO(self, RESOURCE, READ, ("%s", message.c_str()), (nullptr)); break;
      case GalleryWatcher::Level::Note: GST_INFO_OBJECT(self, "%s", message.c_str()); break;
    }
  };
  auto watcher = std::make_shared<GalleryWatcher>(s.gallery, options, s.poll_interval, post);
  const std::string shown = gallery::displayed_location(s.gallery);  // messages never show a password
  std::string note;
  if (taconite::gallery::Status started = watcher->start(required, &note); !started) {
    GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ, ("Could not load the gallery %s.", shown.c_str()),
                      ("%s", started.error().message.c_str()));
    return FALSE;
  }
  GST_INFO_OBJECT(self, "gallery %s: %s", shown.c_str(), note.c_str());
  if (watcher->current()->skipped_templates() > 0)
    GST_ELEMENT_WARNING(self, RESOURCE, READ, ("The gallery %s: %s", shown.c_str(), note.c_str()), (nullptr));
  auto counters = std::make_shared<UnknownCounters>();
  if (s.keep_unknowns)
    self->stream->unknowns = std::make_unique<UnknownKeeper>(
        s.gallery, gallery::ModelFingerprint{watcher->current()->model_fingerprint(), watcher->current()->model()},
        gallery::UnknownRetention{s.unknowns_max_count, static_cast<std::int64_t>(s.unknowns_max_age)},
        counters, [post](bool warning, const std::string& message) {
          post(warning ? GalleryWatcher::Level::Warning : GalleryWatcher::Level::Info, message);
        });
  GST_OBJECT_LOCK(self);
  *self->watcher = std::move(watcher);
  *self->unknown_counters = std::move(counters);
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
    const std::string stream_name = stream_name_locked(self);
    GST_OBJECT_UNLOCK(self);
    if (self->stream->unknowns) self->stream->unknowns->stop(stream_name);  // the open tracks end; bounded wait
    watcher.reset();  // joins its thread (outside the lock: its reports post messages)
    auto fresh = std::make_unique<Stream>();
    delete self->stream;
    self->stream = fresh.release();
    return true;
  });
}

// At the end of a stream, a flush or a new stream every track ends (a new stream's track ids are
// other faces).
static void forget_stream(GstTaconiteIdentify* self, GstEvent* event) {
  const GstEventType type = GST_EVENT_TYPE(event);
  if (type != GST_EVENT_STREAM_START && type != GST_EVENT_FLUSH_STOP && type != GST_EVENT_EOS) return;
  if (self->stream->unknowns) {
    GST_OBJECT_LOCK(self);
    const std::string stream_name = stream_name_locked(self);
    GST_OBJECT_UNLOCK(self);
    self->stream->unknowns->end_all(stream_name);
  }
  if (type == GST_EVENT_STREAM_START) {
    const gchar* id = nullptr;
    gst_event_parse_stream_start(event, &id);
    self->stream->stream_id = id ? id : "";
  }
  if (type != GST_EVENT_EOS) self->stream->votes.clear();
}

// taconitetrack ended tracks: their votes go, and the unknown ones' best faces to the writer now.
// The ids are taconitetrack's, in the object_id param: another track-id-param holds other ids.
static void end_ended_tracks(GstTaconiteIdentify* self, GstEvent* event) {
  const std::optional<TracksEnded> ended = tracks_ended(event);
  if (!ended) return;
  GST_OBJECT_LOCK(self);
  const bool ours = self->settings->track_id_param == kObjectIdParam;
  const std::string stream_name = stream_name_locked(self);
  GST_OBJECT_UNLOCK(self);
  if (!ours) return;
  std::vector<std::int64_t> ids;
  ids.reserve(ended->tracks.size());
  for (const EndedTrack& track : ended->tracks) {
    self->stream->votes.end(track.id);
    ids.push_back(track.id);
  }
  if (self->stream->unknowns) self->stream->unknowns->end_tracks(ids, stream_name);
  GST_DEBUG_OBJECT(self, "%zu tracks ended (%s)", ids.size(), ended->reason.c_str());
}

// The caps tell the unknown faces' pictures how to read a frame.
static gboolean set_caps(GstBaseTransform* trans, GstCaps* incaps, GstCaps* /*outcaps*/) {
  GstTaconiteIdentify* self = GST_TACONITE_IDENTIFY(trans);
  return bool_guarded(GST_ELEMENT(trans), "taconiteidentify could not take the caps.", [&] {
    if (self->stream->unknowns) self->stream->unknowns->set_caps(incaps);
    return true;
  });
}

static gboolean sink_event(GstBaseTransform* trans, GstEvent* event) {
  if (!bool_guarded(GST_ELEMENT(trans), "taconiteidentify could not handle an event.", [&] {
        forget_stream(GST_TACONITE_IDENTIFY(trans), event);
        end_ended_tracks(GST_TACONITE_IDENTIFY(trans), event);
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
  t.optional_string("model", "Model",
                    "The model taconiteadaface runs (a bundle directory or an ONNX file): when set, the gallery's "
                    "model fingerprint must be this model's (else only the model name and embedding size are "
                    "checked), and an ONNX model's description gives the default threshold. Default: none",
                    &Settings::model, Mutable::ReadyOnly);
  t.optional_string("bundle", "Bundle", "Alias of 'model' (both set the same path). Default: none", &Settings::model,
                    Mutable::ReadyOnly);
  t.optional_string("model-proc", "Model description",
                    "The ONNX model's description (JSON, taconite-embedder/1), as taconiteadaface's model-proc; a "
                    "bundle takes none. Default: none (the model's path with .json for .onnx)",
                    &Settings::model_proc, Mutable::ReadyOnly);
  t.custom(
      [](GParamFlags flags) {
        return g_param_spec_double(
            "threshold", "Threshold",
            "Least cosine similarity for a face to be named; below it the face is unknown. Unset, it is the "
            "model's: the threshold of the ONNX model's description (model, model-proc), else 0.4; the start "
            "posts an INFO message saying which, and reading the property gives the threshold in use. Default: "
            "the model's, else 0.4",
            -1.0, 1.0, kFallbackThreshold, flags);
      },
      Mutable::AnyTime, [](GstTaconiteIdentify&, Settings& s, const GValue* v) { s.threshold = g_value_get_double(v); },
      [](GstTaconiteIdentify&, const Settings& s, GValue* v) {
        g_value_set_double(v, s.threshold.value_or(s.model_threshold));
      });
  t.uint("top-k", "Top k", "Candidate identities listed per face in taconite-identity. Default: 3", 1,
         gallery::kMaxTopK, &Settings::top_k, Mutable::AnyTime);
  t.uint("vote-window", "Vote window", "Recent votes (newly computed embeddings) a track decides on. Default: 5",
         1, kMaxVoteWindow, &Settings::vote_window, Mutable::AnyTime);
  t.uint("min-votes", "Minimum votes",
         "Votes (newly computed embeddings) another identity needs in a decided track's vote window to take "
         "it, besides the largest quality-weighted total; a track is decided on its first vote. 1: the "
         "heaviest identity of the window at once. Default: 2",
         1, kMaxVoteWindow, &Settings::min_votes, Mutable::AnyTime);
  t.string("stream", "Stream",
           "The stream (camera) name taconite-identity messages carry, as taconitepublish's stream; "
           "empty: the element's name. Default: empty",
           &Settings::stream, Mutable::AnyTime);
  t.string("track-id-param", "Track id param",
           "ROI param structure (field \"id\") or field holding the tracking id. Default: object_id",
           &Settings::track_id_param, Mutable::AnyTime);
  t.uint("track-timeout", "Track timeout",
         "Frames a track's votes (and keep-unknowns' face) are kept while it is not seen. Only a fallback for "
         "tracks without taconitetrack's uid: a taconitetrack track ends when taconitetrack ends it. Default: 150", 0,
         G_MAXUINT, &Settings::track_timeout, Mutable::AnyTime);
  t.uint("poll-interval", "Poll interval",
         "Milliseconds between two checks whether the gallery changed (a new index is built in the "
         "background); 0: only on the reload signal (and a PostgreSQL gallery's change notifications, "
         "which arrive whatever this is). Default: 1000",
         0, 3600000, &Settings::poll_interval, Mutable::ReadyOnly);
  t.uint64("approximate-above", "Approximate above",
           "Templates beyond which an HNSW index (persisted as <gallery>.hnsw) replaces exact search "
           "(a build without FAISS searches exactly all the same, with one warning). Default: 1000000",
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
  t.boolean("keep-unknowns", "Keep unknowns",
            "Keep the best face of each track that ends decided unknown (embedding, aligned 112x112 JPEG, stream, "
            "time span, nearest identity) in the gallery, for review with taconite-gallery unknowns. Default: false",
            &Settings::keep_unknowns, Mutable::ReadyOnly);
  t.uint("unknowns-max-count", "Unknowns max count",
         "keep-unknowns: unknown faces the gallery keeps at most (up to 100000); the oldest beyond go. Default: 10000", 1,
         static_cast<guint>(gallery::kMaxUnknownFaces), &Settings::unknowns_max_count, Mutable::ReadyOnly);
  t.uint64("unknowns-max-age", "Unknowns max age",
           "keep-unknowns: seconds an unknown face is kept in the gallery. Default: 2592000 (30 days)", 1,
           kMaxUnknownsAge, &Settings::unknowns_max_age, Mutable::ReadyOnly);
  t.counter("unknowns-kept", "Unknowns kept", "keep-unknowns: unknown faces written into the gallery since the start",
            [](GstTaconiteIdentify& self) -> guint64 { return (*self.unknown_counters)->stored; });
  t.counter("unknowns-dropped", "Unknowns dropped",
            "keep-unknowns: unknown faces lost since the start (the writer's queue was full, a write failed, or "
            "they were still queued when the element stopped)",
            [](GstTaconiteIdentify& self) -> guint64 { return (*self.unknown_counters)->dropped; });
}

static void finalize(GObject* object) {
  GstTaconiteIdentify* self = GST_TACONITE_IDENTIFY(object);
  delete self->watcher;
  delete self->unknown_counters;
  delete self->settings;
  delete self->stream;
  G_OBJECT_CLASS(gst_taconite_identify_parent_class)->finalize(object);
}

static void gst_taconite_identify_init(GstTaconiteIdentify* self) {
  self->settings = new Settings();
  self->stream = new Stream();
  self->watcher = new std::shared_ptr<GalleryWatcher>();
  self->unknown_counters = new std::shared_ptr<UnknownCounters>(std::make_shared<UnknownCounters>());
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
  transform_class->set_caps = GST_DEBUG_FUNCPTR(set_caps);

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
