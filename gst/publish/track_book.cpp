#include "track_book.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "track_uid.hpp"

namespace taconite::gst {

namespace {

// taconiteidentify's label_state of a track before its first vote, and of a decided nobody (whose
// label is "unknown" too).
constexpr const char* kPendingState = "pending";
constexpr const char* kUnknownState = "unknown";

// An identity worth an update: its state, label or id changed (the confidence moves every frame).
bool identity_changed(const std::optional<RoiIdentity>& before, const RoiIdentity& now) {
  return !before || before->label_state != now.label_state || before->label != now.label ||
         before->label_id != now.label_id;
}

}  // namespace

void TrackBook::end(std::map<std::int64_t, OpenTrack>::iterator it, const std::string& reason, const EventTime& at,
                    std::vector<TrackEvent>& events) {
  OpenTrack& track = it->second;
  if (track.identity) track.identified = track.identity->label_state != kPendingState;
  // A track that ends is never pending: one taconiteidentify never judged (no embedding of it was
  // searched) ends unknown, and `identified` says that nothing was judged.
  if (track.identity && !*track.identified) track.identity = RoiIdentity{kUnknownState, kUnknownState, -1, {}};
  events.push_back(TrackEvent{TrackEvent::Kind::End, reason, at, std::move(track)});
  tracks_.erase(it);
}

void TrackBook::frame(std::span<const Sighting> sightings, const EventTime& at, std::vector<TrackEvent>& events,
                      std::vector<std::size_t>& better) {
  ++frame_;
  std::set<std::int64_t> seen;
  for (std::size_t i = 0; i < sightings.size(); ++i) {
    const Sighting& s = sightings[i];
    if (!seen.insert(s.track_id).second) continue;
    auto it = tracks_.find(s.track_id);
    if (it == tracks_.end()) {
      if (tracks_.size() >= max_tracks_) {  // the one not seen for longest makes room
        auto oldest = std::min_element(tracks_.begin(), tracks_.end(), [](const auto& a, const auto& b) {
          return a.second.last_frame < b.second.last_frame;
        });
        end(oldest, "evicted", at, events);
        ++evicted_;
      }
      OpenTrack track;
      track.track_id = s.track_id;
      track.tracker_owned = !s.uid.empty();
      track.uid = track.tracker_owned ? s.uid : new_track_uid();
      track.first = at;
      track.identity = s.identity;
      it = tracks_.emplace(s.track_id, std::move(track)).first;
      it->second.last = at;
      it->second.frames = 1;
      it->second.last_frame = frame_;
      events.push_back(TrackEvent{TrackEvent::Kind::New, {}, at, it->second});
    } else {
      OpenTrack& track = it->second;
      track.last = at;
      ++track.frames;
      track.last_frame = frame_;
      if (s.identity) {
        const bool changed = identity_changed(track.identity, *s.identity);
        track.identity = s.identity;
        if (changed) events.push_back(TrackEvent{TrackEvent::Kind::Update, {}, at, track});
      }
    }
    if (s.quality && it->second.offered.beaten_by(*s.quality)) better.push_back(i);
  }
  for (auto it = tracks_.begin(); it != tracks_.end();) {
    auto next = std::next(it);
    // The fallback timeout, for tracks without taconitetrack upstream.
    if (!it->second.tracker_owned && frame_ - it->second.last_frame > timeout_frames_) end(it, "lost", at, events);
    it = next;
  }
}

void TrackBook::end_tracks(const TracksEnded& ended, const EventTime& at, std::vector<TrackEvent>& events) {
  for (const EndedTrack& t : ended.tracks) {
    auto it = tracks_.find(t.id);
    if (it != tracks_.end() && (t.uid.empty() || t.uid == it->second.uid)) end(it, ended.reason.c_str(), at, events);
  }
}

bool TrackBook::awaiting_face(const TracksEnded& ended) const {
  return std::any_of(ended.tracks.begin(), ended.tracks.end(), [&](const EndedTrack& t) {
    const auto it = tracks_.find(t.id);
    if (it == tracks_.end()) return false;
    const OpenTrack& track = it->second;
    const std::optional<double> offered = track.offered.value();
    return offered && (!track.best_face || track.best_face->quality < *offered);
  });
}

std::string TrackBook::uid_of(std::int64_t track_id) const {
  const auto it = tracks_.find(track_id);
  return it == tracks_.end() ? std::string() : it->second.uid;
}

void TrackBook::offered(std::int64_t track_id, double quality) {
  if (auto it = tracks_.find(track_id); it != tracks_.end()) it->second.offered.take(quality);
}

void TrackBook::face_ready(EncodedFace face, const EventTime& at, std::vector<TrackEvent>& events) {
  auto it = tracks_.find(face.track_id);
  if (it == tracks_.end() || it->second.uid != face.uid) return;  // ended (the id may be a new track's now)
  it->second.best_face = std::move(face);
  events.push_back(TrackEvent{TrackEvent::Kind::Update, {}, at, it->second});
}

void TrackBook::end_all(const char* reason, const EventTime& at, std::vector<TrackEvent>& events) {
  std::vector<std::map<std::int64_t, OpenTrack>::iterator> order;
  for (auto it = tracks_.begin(); it != tracks_.end(); ++it) order.push_back(it);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a->second.first.utc_us != b->second.first.utc_us ? a->second.first.utc_us < b->second.first.utc_us
                                                            : a->first < b->first;
  });
  for (auto it : order) end(it, reason, at, events);
}

}  // namespace taconite::gst
