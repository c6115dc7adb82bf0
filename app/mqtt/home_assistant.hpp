// taconite-run's link to Home Assistant over MQTT (docs/app.md#home-assistant-over-mqtt): the
// cameras' track events, who was seen (a sensor per camera, an occupancy binary sensor per known
// person per camera), the last snapshot (an image entity) and availability, announced through
// MQTT discovery. Never blocks its callers: everything goes through MqttPublisher's bounded queue,
// and an absent broker is retried in the background with a bounded backoff.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "discovery.hpp"
#include "mqtt_publisher.hpp"
#include "pipeline_observer.hpp"
#include "taconite/error.hpp"

namespace taconite::app {

struct HomeAssistantOptions {
  std::string host = "localhost";
  int port = 1883;
  std::string credentials_file;           // user name and password (an owner-only file); empty: anonymous
  std::string tls_ca, tls_cert, tls_key;  // tls_ca enables TLS; cert + key: a client certificate
  std::string topic_prefix = "taconite";
  std::string discovery_prefix = "homeassistant";
  std::string client_id = "taconite";       // also the discovery node id (slugged)
  double person_timeout_s = 30;             // Home Assistant's off_delay of the person sensors (whole seconds, >= 1)
  std::vector<std::string> cameras;         // the topic levels: no '/', '+', '#'
  std::vector<std::string> people;          // the gallery's names (set_people() later)
  std::size_t max_entities = 1000;          // people x cameras + 2 per camera at most; more people are refused
  std::size_t max_queue_bytes = 16u << 20;  // outgoing queue while the broker is away
  std::size_t max_snapshot_bytes = 4u << 20;
  std::size_t max_open_tracks = 4096;  // known tracks followed at once for the person sensors
  std::string sw_version;              // the devices' sw_version; empty: this build's version (meson project version)
  // Diagnostics (warnings: true); none without. Called from the caller's or the network thread.
  std::function<void(bool warning, const std::string&)> log;
};

struct HomeAssistantCounters {
  std::atomic<std::uint64_t> events{0};             // track events published
  std::atomic<std::uint64_t> unknown_camera{0};     // events / states / snapshots of cameras not configured
  std::atomic<std::uint64_t> people_refused{0};     // names refused (bound, length, slug collision), per set_people
  std::atomic<std::uint64_t> snapshots_refused{0};  // bigger than max_snapshot_bytes
  std::atomic<std::uint64_t> tracks_refused{0};     // known tracks beyond max_open_tracks
};

class HomeAssistantMqtt : public PipelineObserver {
 public:
  // Checks the options (errors name the option / camera / file), reads the credentials file and
  // starts connecting in the background: returns at once, also while the broker is down.
  static Result<std::unique_ptr<HomeAssistantMqtt>> start(HomeAssistantOptions options);
  ~HomeAssistantMqtt() override;  // stop()
  HomeAssistantMqtt(const HomeAssistantMqtt&) = delete;
  HomeAssistantMqtt& operator=(const HomeAssistantMqtt&) = delete;

  // The gallery's names changed: sensors for new people are announced, removed ones deleted.
  void set_people(std::vector<std::string> people);
  // The configured cameras changed (a reload): removed cameras' entities and retained states are
  // deleted, new ones announced, kept ones keep their state. An error (naming the camera) changes nothing.
  Status set_cameras(const std::vector<std::string>& cameras);
  // The snapshot writer's JPEG of a track (retained on <prefix>/<camera>/snapshot).
  void publish_snapshot(const std::string& camera, const std::string& uid, std::string jpeg);
  // Publishes offline (and OFF for people still seen), waits up to ~1 s for it to leave, disconnects.
  void stop();

  void on_track_event(const TrackEvent& event) override;
  void on_camera_state(const std::string& camera, CameraState state, const std::string& detail) override;

  // Whether the broker accepted the current connection (for a status page).
  bool connected();
  const HomeAssistantCounters& counters() const { return counters_; }
  const gst::PublishCounters& publish_counters() const { return *publish_counters_; }

 private:
  struct Camera {
    CameraNames names;
    bool online = false;
    std::string last_person;             // "" until someone is seen
    std::string snapshot;                // the last JPEG, sent again after a reconnection
    std::map<std::string, int> present;  // person slug -> open known tracks of that person here
  };
  struct OpenTrack {
    std::string camera;
    std::string person_slug;  // "" when not a known person with a sensor
    std::string decided;      // the person it was last reported as ("unknown" included)
    std::string label;        // its known label ("" when not known), for set_people
  };

  explicit HomeAssistantMqtt(HomeAssistantOptions options);
  static Status make_cameras(const std::vector<std::string>& names, std::size_t max_entities, std::vector<Camera>* out);
  void apply_people_locked();
  void on_connected();
  void republish_locked();
  void log(bool warning, const std::string& text) const;
  Camera* camera_locked(const std::string& name);
  std::map<std::string, std::string> accepted_people_locked(const std::vector<std::string>& people);
  std::vector<DiscoveryMessage> discovery_locked() const;
  void set_presence_locked(Camera& camera, const std::string& person_slug, int delta);
  void publish_retained(std::string topic, std::string payload);
  void refresh_presence();

  HomeAssistantOptions options_;
  DiscoveryNames names_;
  HomeAssistantCounters counters_;
  std::shared_ptr<gst::PublishCounters> publish_counters_ = std::make_shared<gst::PublishCounters>();

  std::mutex lock_;
  std::condition_variable wake_;
  std::vector<Camera> cameras_;
  std::vector<std::string> requested_people_;  // as given: who fits may change with the cameras
  std::map<std::string, std::string> people_;  // slug -> real name: the people with sensors
  std::map<std::string, OpenTrack> tracks_;    // track uid -> where and who
  bool stopped_ = false;
  bool connected_before_start_ = false;  // the first connection's hook ran before start() held the publisher
  std::thread refresher_;                // re-sends ON for people still present before off_delay turns them off
  std::unique_ptr<gst::MqttPublisher> publisher_;  // last: destroyed first, its threads call into us
};

}  // namespace taconite::app
