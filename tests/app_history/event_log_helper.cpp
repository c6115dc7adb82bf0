// Test-only: makes a gallery and stores events in its log for the CLI tests.
//   event_log_helper create GALLERY
//   event_log_helper append GALLERY EPOCH CAMERA KIND UID LABEL|- [DWELL]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gallery_store.hpp"
#include "track_event_log.hpp"

int main(int argc, char** argv) {
  using namespace taconite::gallery;
  const std::string command = argc > 2 ? argv[1] : "";
  if (command == "create" && argc == 3) {
    auto created = GalleryStore::create(argv[2], ModelFingerprint{std::string(64, 'a'), "IR-test"}, 4);
    if (!created) return std::fprintf(stderr, "%s\n", created.error().message.c_str()), 1;
    return 0;
  }
  if (command == "append" && (argc == 8 || argc == 9)) {
    auto log = TrackEventLog::open(argv[2]);
    if (!log) return std::fprintf(stderr, "%s\n", log.error().message.c_str()), 1;
    StoredTrackEvent e;
    e.epoch_s = std::strtod(argv[3], nullptr);
    e.camera = argv[4];
    e.kind = argv[5];
    e.uid = argv[6];
    e.track_id = 1;
    if (std::string(argv[7]) != "-") e.label = argv[7], e.label_state = "known", e.label_id = 1, e.confidence = 0.9;
    if (argc == 9) e.dwell_s = std::strtod(argv[8], nullptr), e.reason = "lost";
    e.document = "{}";
    auto id = log.value().append(e);
    if (!id) return std::fprintf(stderr, "%s\n", id.error().message.c_str()), 1;
    return 0;
  }
  std::fprintf(stderr,
               "usage: event_log_helper create GALLERY | append GALLERY EPOCH CAMERA KIND UID LABEL|- [DWELL]\n");
  return 2;
}
