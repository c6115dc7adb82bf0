#include "track_events.hpp"

#include <gst/taconite/gsttaconiteroi.h>

#include "best_face_crop.hpp"
#include "face_selection.hpp"
#include "roi_params.hpp"
#include "roi_track_param.hpp"
#include "track_event_document.hpp"

namespace taconite::gst {

Result<std::unique_ptr<TrackEvents>> TrackEvents::start(const TrackEventsSettings& settings,
                                                        BestFaceWriter::Report report) {
  std::unique_ptr<TrackEvents> events(new TrackEvents(settings));
  if (settings.best_face.output != BestFaceOutput::None) {
    Result<std::unique_ptr<BestFaceWriter>> writer = BestFaceWriter::start(settings.best_face, std::move(report));
    if (!writer) return writer.error();
    events->writer_ = std::move(writer.value());
  }
  return events;
}

void TrackEvents::collect_finished(const EventTime& at, std::vector<TrackEvent>& events) {
  if (!writer_) return;
  for (EncodedFace& face : writer_->take_finished()) book_.face_ready(std::move(face), at, events);
}

std::vector<std::string> TrackEvents::documents(const std::vector<TrackEvent>& events) {
  std::vector<std::string> lines;
  lines.reserve(events.size());
  for (const TrackEvent& event : events) lines.push_back(track_event_document(event, settings_.stream, &repairs_));
  return lines;
}

std::vector<std::string> TrackEvents::frame(GstBuffer* buffer, const GstVideoInfo* info, const EventTime& at) {
  std::vector<GstVideoRegionOfInterestMeta*> rois;
  std::vector<Sighting> sightings;
  const GQuark face_type = settings_.roi_type.empty() ? 0 : g_quark_try_string(settings_.roi_type.c_str());
  for (GstVideoRegionOfInterestMeta* roi : buffer_rois(buffer)) {
    if (!settings_.roi_type.empty() && roi->roi_type != face_type) continue;
    const std::optional<gint64> id = roi_track_id(roi, kObjectIdParam);
    if (!id) continue;
    rois.push_back(roi);
    const gchar* uid = gst_taconite_roi_get_track_uid(roi);
    sightings.push_back(Sighting{*id, uid ? uid : "", roi_identity(roi), writer_ ? roi_quality(roi) : std::nullopt});
  }
  std::vector<TrackEvent> events;
  collect_finished(at, events);
  std::vector<std::size_t> better;
  book_.frame(sightings, at, events, better);

  // Better faces: the frame is mapped (read-only) only on a frame that has one the writer can take.
  if (!better.empty()) {
    std::vector<ImprovedFace> improved;
    improved.reserve(better.size());
    for (std::size_t i : better)
      improved.push_back(ImprovedFace{sightings[i].track_id, rois[i], *sightings[i].quality});
    const auto room = [this](const ImprovedFace&) {
      if (!writer_->full()) return true;
      writer_->refused();  // it would be refused: no mapping, alignment or copy for nothing
      return false;
    };
    const auto submit = [this](const ImprovedFace& face, cv::Mat crop) {
      ++aligned_;
      if (writer_->submit(face.track, book_.uid_of(face.track), face.quality, std::move(crop)))
        book_.offered(face.track, face.quality);
    };
    (void)crop_improved_faces(buffer, info, improved, room, submit);  // a frame that cannot be read gives no best faces
  }
  return documents(events);
}

std::vector<std::string> TrackEvents::end_tracks(const TracksEnded& ended, const EventTime& at) {
  std::vector<TrackEvent> events;
  if (writer_ && book_.awaiting_face(ended)) writer_->drain(kBestFaceDrainMs);
  collect_finished(at, events);
  book_.end_tracks(ended, at, events);
  return documents(events);
}

std::vector<std::string> TrackEvents::end_all(const char* reason, const EventTime& at) {
  std::vector<TrackEvent> events;
  if (writer_) writer_->drain(kBestFaceDrainMs);
  collect_finished(at, events);
  book_.end_all(reason, at, events);
  return documents(events);
}

}  // namespace taconite::gst
