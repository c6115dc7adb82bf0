#include "discovery.hpp"

#include <json-glib/json-glib.h>

#include "json_write.hpp"

namespace taconite::app {

namespace {

void member(JsonBuilder* b, const char* name, const std::string& value) {
  json_builder_set_member_name(b, name);
  json_builder_add_string_value(b, value.c_str());
}

std::string unique_id(const DiscoveryNames& names, const CameraNames& camera, const std::string& what) {
  return names.node_id + "_" + camera.slug + "_" + what;
}

std::string config_topic(const DiscoveryNames& names, const char* component, const std::string& object_id) {
  return names.discovery_prefix + "/" + component + "/" + names.node_id + "/" + object_id + "/config";
}

// What every entity of a camera shares: ids, availability (ours and the camera's, both needed)
// and the camera's device. `fill` adds the component's own members.
template <typename Fill>
DiscoveryMessage entity(const DiscoveryNames& names, const CameraNames& camera, const char* component,
                        const std::string& what, const std::string& display_name, Fill fill) {
  const std::string id = unique_id(names, camera, what);
  JsonBuilder* b = json_builder_new();
  json_builder_begin_object(b);
  member(b, "name", display_name);
  member(b, "unique_id", id);
  member(b, "object_id", id);
  fill(b);
  json_builder_set_member_name(b, "availability");
  json_builder_begin_array(b);
  for (const std::string& topic : {availability_topic(names), camera_topic(names, camera, "available")}) {
    json_builder_begin_object(b);
    member(b, "topic", topic);
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
  member(b, "availability_mode", "all");
  json_builder_set_member_name(b, "device");
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "identifiers");
  json_builder_begin_array(b);
  json_builder_add_string_value(b, (names.node_id + "_" + camera.slug).c_str());
  json_builder_end_array(b);
  member(b, "name", "taconite " + camera.name);
  member(b, "manufacturer", "taconite-adaface");
  member(b, "model", "taconite-run camera");
  member(b, "sw_version", names.sw_version);
  json_builder_end_object(b);
  json_builder_end_object(b);
  JsonNode* root = json_builder_get_root(b);
  std::string payload = json::write_json(root);  // a name that is not UTF-8 is written with U+FFFD
  json_node_unref(root);
  g_object_unref(b);
  return {config_topic(names, component, id), std::move(payload)};
}

}  // namespace

std::string availability_topic(const DiscoveryNames& names) { return names.topic_prefix + "/available"; }

std::string camera_topic(const DiscoveryNames& names, const CameraNames& camera, const std::string& leaf) {
  return names.topic_prefix + "/" + camera.name + "/" + leaf;
}

DiscoveryMessage last_person_sensor(const DiscoveryNames& names, const CameraNames& camera) {
  return entity(names, camera, "sensor", "last_person", "Last person", [&](JsonBuilder* b) {
    member(b, "state_topic", camera_topic(names, camera, "person"));
    member(b, "icon", "mdi:account-eye");
  });
}

DiscoveryMessage snapshot_image(const DiscoveryNames& names, const CameraNames& camera) {
  return entity(names, camera, "image", "snapshot", "Snapshot", [&](JsonBuilder* b) {
    member(b, "image_topic", camera_topic(names, camera, "snapshot"));
    member(b, "content_type", "image/jpeg");
  });
}

DiscoveryMessage person_binary_sensor(const DiscoveryNames& names, const CameraNames& camera, const std::string& person,
                                      const std::string& person_slug) {
  return entity(names, camera, "binary_sensor", "person_" + person_slug, person, [&](JsonBuilder* b) {
    member(b, "state_topic", camera_topic(names, camera, person_slug));
    member(b, "device_class", "occupancy");
    member(b, "payload_on", "ON");
    member(b, "payload_off", "OFF");
    json_builder_set_member_name(b, "off_delay");
    json_builder_add_int_value(b, names.off_delay_s);
  });
}

}  // namespace taconite::app
