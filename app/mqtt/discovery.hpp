// Home Assistant MQTT discovery documents for taconite-run's cameras and people
// (https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery): one device per camera holding
// a `sensor` (the last person seen), an `image` (the last snapshot) and one `binary_sensor` per
// known person (occupancy). Pure functions: topics and JSON text, nothing sent.
#pragma once

#include <string>

namespace taconite::app {

struct DiscoveryNames {
  std::string topic_prefix;      // our state topics: <topic_prefix>/...
  std::string discovery_prefix;  // Home Assistant's: <discovery_prefix>/<component>/<node_id>/<object_id>/config
  std::string node_id;           // [a-z0-9_]: the client id's slug
  std::string sw_version;
  int off_delay_s = 30;  // binary sensors turn off by themselves this long after their last ON
};

struct CameraNames {
  std::string name;  // as configured: the topic level (camera_name_problem() found nothing)
  std::string slug;  // for ids
};

// One retained discovery message: its config topic and document (empty document: delete).
struct DiscoveryMessage {
  std::string topic, payload;
};

// Topics of one camera's state (<topic_prefix>/<camera>/...).
std::string availability_topic(const DiscoveryNames& names);
std::string camera_topic(const DiscoveryNames& names, const CameraNames& camera, const std::string& leaf);

DiscoveryMessage last_person_sensor(const DiscoveryNames& names, const CameraNames& camera);
DiscoveryMessage snapshot_image(const DiscoveryNames& names, const CameraNames& camera);
// `person`: the real name (the entity's name); `person_slug`: its topic level and id part.
DiscoveryMessage person_binary_sensor(const DiscoveryNames& names, const CameraNames& camera, const std::string& person,
                                      const std::string& person_slug);

}  // namespace taconite::app
