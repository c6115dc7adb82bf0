#include "home_assistant.hpp"

#include <algorithm>
#include <cmath>

#include "credentials_file.hpp"
#include "topic_names.hpp"

namespace taconite::app {

namespace {

// Our own topic levels under <prefix>/<camera>/: a person's slug never takes one of them.
constexpr const char* kReservedLeaves = "available,events,person,snapshot";
constexpr unsigned kDrainAtStopMs = 1000;
constexpr double kMaxPersonTimeoutS = 24 * 3600;

const char* online_text(bool online) { return online ? "online" : "offline"; }

std::string prefix_problem(const std::string& prefix) {
  if (prefix.empty()) return "is empty";
  if (prefix.size() > 128) return "is longer than 128 bytes";
  if (prefix.front() == '/' || prefix.back() == '/') return "starts or ends with '/'";
  if (!gst::MqttPublisher::valid_topic(prefix + "/x")) return "is not a topic to publish to (wildcards, not UTF-8)";
  return "";
}

Error input(const std::string& text) { return Error{ErrorKind::Input, "Home Assistant MQTT: " + text}; }

}  // namespace

// The cameras of `names`, checked: each a topic level, no two with the same id, within max_entities.
Status HomeAssistantMqtt::make_cameras(const std::vector<std::string>& names, std::size_t max_entities,
                                       std::vector<Camera>* out) {
  if (names.empty()) return input("no cameras");
  if (2 * names.size() > max_entities)
    return input(std::to_string(names.size()) + " cameras need more than max_entities " + std::to_string(max_entities) +
                 " entities (2 each)");
  std::set<std::string> slugs;
  out->clear();
  for (const std::string& camera : names) {
    if (std::string why = camera_name_problem(camera); !why.empty())
      return input("camera '" + printable(camera) + "' cannot be an MQTT topic level: " + why);
    Camera c;
    c.names = {camera, slug(camera)};
    if (!slugs.insert(c.names.slug).second)
      return input("camera '" + camera + "' has the same id '" + c.names.slug + "' as another camera");
    out->push_back(std::move(c));
  }
  return Ok{};
}

HomeAssistantMqtt::HomeAssistantMqtt(HomeAssistantOptions options) : options_(std::move(options)) {}

Result<std::unique_ptr<HomeAssistantMqtt>> HomeAssistantMqtt::start(HomeAssistantOptions options) {
  for (const auto& [key, value] :
       {std::pair{"topic_prefix", options.topic_prefix}, {"discovery_prefix", options.discovery_prefix}})
    if (std::string why = prefix_problem(value); !why.empty())
      return input(std::string(key) + " '" + value + "' " + why);
  if (options.client_id.empty() || options.client_id.size() > 64) return input("client_id must have 1 to 64 bytes");
  if (!std::isfinite(options.person_timeout_s) || options.person_timeout_s < 1 ||
      options.person_timeout_s > kMaxPersonTimeoutS)
    return input("person_timeout_s " + std::to_string(options.person_timeout_s) + " is not within 1 .. 86400 s");
  if (options.port < 1 || options.port > 65535)
    return input("port " + std::to_string(options.port) + " is not 1 .. 65535");
  if (options.max_entities < 2 || options.max_entities > 100000) return input("max_entities is not within 2 .. 100000");
  if (options.max_queue_bytes < (64u << 10)) return input("max_queue_bytes is below 64 KiB");
  if (options.max_snapshot_bytes > options.max_queue_bytes) return input("max_snapshot_bytes is above max_queue_bytes");

  std::unique_ptr<HomeAssistantMqtt> self(new HomeAssistantMqtt(options));
  self->names_ = {options.topic_prefix, options.discovery_prefix, slug(options.client_id),
                  options.sw_version.empty() ? TACONITE_APP_VERSION : options.sw_version,
                  static_cast<int>(std::ceil(options.person_timeout_s))};
  if (Status s = make_cameras(options.cameras, options.max_entities, &self->cameras_); !s) return s.error();

  gst::MqttSettings settings;
  settings.host = options.host;
  settings.port = options.port;
  settings.client_id = options.client_id;
  settings.qos = 1;  // discovery and states must arrive; unacknowledged ones go again after a reconnection
  settings.retry_at_start = true;  // never wait for the broker: it may come later
  settings.max_pending = 100000;
  settings.max_pending_bytes = options.max_queue_bytes;
  settings.tls_ca = options.tls_ca;
  settings.tls_cert = options.tls_cert;
  settings.tls_key = options.tls_key;
  settings.will = gst::MqttWill{availability_topic(self->names_), "offline", true};
  if (!options.credentials_file.empty()) {
    auto credentials = gst::read_credentials_file(options.credentials_file, gst::CredentialsAccess::OwnerOnly);
    if (!credentials) return Error{credentials.error().kind, "Home Assistant MQTT: " + credentials.error().message};
    settings.username = credentials.value().username;
    settings.password = credentials.value().password;
  }
  {
    std::lock_guard<std::mutex> guard(self->lock_);
    self->requested_people_ = options.people;
    self->people_ = self->accepted_people_locked(options.people);
  }
  HomeAssistantMqtt* raw = self.get();
  auto publisher = gst::MqttPublisher::start(
      settings, self->publish_counters_,
      [raw](gst::MqttPublisher::Notice notice, const std::string& text) {
        raw->log(notice == gst::MqttPublisher::Notice::Warning, "Home Assistant MQTT: " + text);
      },
      [raw] { raw->on_connected(); });
  if (!publisher) return Error{publisher.error().kind, "Home Assistant MQTT: " + publisher.error().message};
  {
    std::lock_guard<std::mutex> guard(self->lock_);
    self->publisher_ = std::move(publisher).value();
    if (self->connected_before_start_) self->republish_locked();  // the hook came before the publisher was ours
  }
  self->refresher_ = std::thread(&HomeAssistantMqtt::refresh_presence, raw);
  return self;
}

HomeAssistantMqtt::~HomeAssistantMqtt() { stop(); }

bool HomeAssistantMqtt::connected() {
  std::lock_guard<std::mutex> guard(lock_);
  return publisher_ && publisher_->connected();
}

void HomeAssistantMqtt::log(bool warning, const std::string& text) const {
  if (options_.log) options_.log(warning, text);
}

void HomeAssistantMqtt::publish_retained(std::string topic, std::string payload) {
  if (publisher_) publisher_->publish(std::move(topic), std::move(payload), true);
}

HomeAssistantMqtt::Camera* HomeAssistantMqtt::camera_locked(const std::string& name) {
  for (Camera& c : cameras_)
    if (c.names.name == name) return &c;
  return nullptr;
}

// The people who get sensors, slug -> name: the first ones in `people` order that fit max_entities,
// without duplicates, names too long or slugs another name already has (each refusal counted).
std::map<std::string, std::string> HomeAssistantMqtt::accepted_people_locked(const std::vector<std::string>& people) {
  const std::size_t fit = (options_.max_entities - 2 * cameras_.size()) / cameras_.size();
  std::map<std::string, std::string> accepted;
  std::set<std::string> names;
  std::uint64_t refused = 0;
  std::string first_refusal;
  for (const std::string& person : people) {
    std::string why;
    const std::string s = slug(person, kReservedLeaves);
    if (person.empty() || person.size() > kMaxPersonNameBytes) {
      why = "the name is empty or longer than " + std::to_string(kMaxPersonNameBytes) + " bytes";
    } else if (names.count(person)) {
      continue;  // the same name twice: one person
    } else if (accepted.size() >= fit) {
      why = "more than " + std::to_string(fit) + " people (max_entities " + std::to_string(options_.max_entities) +
            " over " + std::to_string(cameras_.size()) + " cameras)";
    } else if (accepted.count(s)) {
      why = "its id '" + s + "' is another name's";
    }
    if (!why.empty()) {
      if (refused++ == 0) first_refusal = "'" + printable(person) + "': " + why;
      continue;
    }
    names.insert(person);
    accepted.emplace(s, person);
  }
  if (refused > 0) {
    counters_.people_refused += refused;
    log(true,
        "Home Assistant MQTT: " + std::to_string(refused) + " people get no sensors; the first, " + first_refusal);
  }
  return accepted;
}

std::vector<DiscoveryMessage> HomeAssistantMqtt::discovery_locked() const {
  std::vector<DiscoveryMessage> out;
  for (const Camera& c : cameras_) {
    out.push_back(last_person_sensor(names_, c.names));
    out.push_back(snapshot_image(names_, c.names));
    for (const auto& [person_slug, person] : people_)
      out.push_back(person_binary_sensor(names_, c.names, person, person_slug));
  }
  return out;
}

// Everything a broker that restarted (or a Home Assistant that subscribed late) needs, after every
// connection: discovery first, then availability, then the states.
void HomeAssistantMqtt::on_connected() {
  std::lock_guard<std::mutex> guard(lock_);
  if (stopped_) return;
  if (!publisher_) {
    connected_before_start_ = true;
    return;
  }
  republish_locked();
}

void HomeAssistantMqtt::republish_locked() {
  for (DiscoveryMessage& m : discovery_locked()) publish_retained(std::move(m.topic), std::move(m.payload));
  publish_retained(availability_topic(names_), "online");
  for (const Camera& c : cameras_) {
    publish_retained(camera_topic(names_, c.names, "available"), online_text(c.online));
    if (!c.last_person.empty()) publish_retained(camera_topic(names_, c.names, "person"), c.last_person);
    for (const auto& [person_slug, person] : people_) {
      const auto at = c.present.find(person_slug);
      publish_retained(camera_topic(names_, c.names, person_slug), at != c.present.end() ? "ON" : "OFF");
    }
    if (!c.snapshot.empty()) publish_retained(camera_topic(names_, c.names, "snapshot"), c.snapshot);
  }
}

void HomeAssistantMqtt::set_people(std::vector<std::string> people) {
  std::lock_guard<std::mutex> guard(lock_);
  if (stopped_) return;
  requested_people_ = std::move(people);
  apply_people_locked();
}

// Brings the people's sensors in line with requested_people_ (and the cameras there are now).
void HomeAssistantMqtt::apply_people_locked() {
  std::map<std::string, std::string> accepted = accepted_people_locked(requested_people_);
  for (const auto& [person_slug, person] : people_) {
    if (accepted.count(person_slug)) continue;
    for (Camera& c : cameras_) {  // an empty retained message deletes the entity and the kept state
      const DiscoveryMessage gone = person_binary_sensor(names_, c.names, person, person_slug);
      publish_retained(gone.topic, "");
      publish_retained(camera_topic(names_, c.names, person_slug), "");
      c.present.erase(person_slug);
    }
  }
  people_ = std::move(accepted);
  for (auto& [uid, track] : tracks_) {  // open tracks of people who got or lost a sensor
    std::string now;
    for (const auto& [person_slug, person] : people_)
      if (person == track.label) now = person_slug;
    if (now == track.person_slug) continue;
    Camera& c = *camera_locked(track.camera);  // tracks of a camera leave with it
    if (!track.person_slug.empty() && people_.count(track.person_slug)) set_presence_locked(c, track.person_slug, -1);
    track.person_slug = now;
    if (!now.empty()) set_presence_locked(c, now, +1);
  }
  for (Camera& c : cameras_)
    for (const auto& [person_slug, person] : people_) {
      const DiscoveryMessage m = person_binary_sensor(names_, c.names, person, person_slug);
      publish_retained(m.topic, m.payload);  // again for those already there: the same document
      if (!c.present.count(person_slug)) publish_retained(camera_topic(names_, c.names, person_slug), "OFF");
    }
}

Status HomeAssistantMqtt::set_cameras(const std::vector<std::string>& cameras) {
  std::vector<Camera> next;
  if (Status s = make_cameras(cameras, options_.max_entities, &next); !s) return s;
  std::lock_guard<std::mutex> guard(lock_);
  if (stopped_) return Ok{};
  for (const Camera& c : cameras_) {
    if (std::find(cameras.begin(), cameras.end(), c.names.name) != cameras.end()) continue;
    // Gone: its entities are deleted, its retained states cleared, its tracks forgotten.
    std::vector<DiscoveryMessage> gone = {last_person_sensor(names_, c.names), snapshot_image(names_, c.names)};
    for (const auto& [person_slug, person] : people_) {
      gone.push_back(person_binary_sensor(names_, c.names, person, person_slug));
      gone.push_back({camera_topic(names_, c.names, person_slug), ""});
    }
    for (const char* leaf : {"available", "person", "snapshot"})
      gone.push_back({camera_topic(names_, c.names, leaf), ""});
    for (DiscoveryMessage& m : gone) publish_retained(std::move(m.topic), "");
    for (auto it = tracks_.begin(); it != tracks_.end();)
      it = it->second.camera == c.names.name ? tracks_.erase(it) : std::next(it);
  }
  for (Camera& c : next) {  // a camera kept keeps its state
    if (Camera* before = camera_locked(c.names.name)) c = std::move(*before);
  }
  const std::vector<std::string> before_names = [&] {
    std::vector<std::string> names;
    for (const Camera& c : cameras_) names.push_back(c.names.name);
    return names;
  }();
  cameras_ = std::move(next);
  for (const Camera& c : cameras_) {
    if (std::find(before_names.begin(), before_names.end(), c.names.name) != before_names.end()) continue;
    for (DiscoveryMessage& m : std::vector{last_person_sensor(names_, c.names), snapshot_image(names_, c.names)})
      publish_retained(std::move(m.topic), std::move(m.payload));
    publish_retained(camera_topic(names_, c.names, "available"), online_text(c.online));
  }
  apply_people_locked();  // the new cameras' person sensors; fewer people may fit now
  return Ok{};
}

void HomeAssistantMqtt::set_presence_locked(Camera& camera, const std::string& person_slug, int delta) {
  const auto at = camera.present.find(person_slug);
  const int before = at == camera.present.end() ? 0 : at->second;
  const int now = std::max(0, before + delta);
  if (now == 0)
    camera.present.erase(person_slug);
  else
    camera.present[person_slug] = now;
  if ((before == 0) != (now == 0))
    publish_retained(camera_topic(names_, camera.names, person_slug), now ? "ON" : "OFF");
}

void HomeAssistantMqtt::on_track_event(const TrackEvent& event) {
  std::lock_guard<std::mutex> guard(lock_);
  if (stopped_) return;
  Camera* c = camera_locked(event.camera);
  if (!c) {
    if (counters_.unknown_camera++ == 0)
      log(true, "Home Assistant MQTT: events of camera '" + printable(event.camera) +
                    "', which is not configured, are not published (counted)");
    return;
  }
  publisher_->publish(camera_topic(names_, c->names, "events"), event.document, false);
  ++counters_.events;

  // Who it is, once decided: a gallery name, or "unknown".
  std::string person;
  if (event.label_state == "known" && event.label)
    person = *event.label;
  else if (event.label_state == "unknown")
    person = "unknown";

  auto at = tracks_.find(event.uid);
  if (at == tracks_.end() && event.kind != "end") {
    if (tracks_.size() >= options_.max_open_tracks) {
      if (counters_.tracks_refused++ == 0)
        log(true, "Home Assistant MQTT: more than " + std::to_string(options_.max_open_tracks) +
                      " open tracks; the person sensors ignore the newest (counted)");
    } else {
      at = tracks_.emplace(event.uid, OpenTrack{c->names.name, "", "", ""}).first;
    }
  }
  if (!person.empty() && (at == tracks_.end() || at->second.decided != person)) {
    if (at != tracks_.end()) at->second.decided = person;
    c->last_person = person;
    publish_retained(camera_topic(names_, c->names, "person"), person);
  }
  if (at == tracks_.end()) return;
  OpenTrack& track = at->second;
  std::string person_slug;
  if (event.label_state == "known" && event.label && event.kind != "end")
    for (const auto& [s, name] : people_)
      if (name == *event.label) person_slug = s;
  track.label = event.label_state == "known" && event.label ? *event.label : "";
  if (person_slug != track.person_slug) {
    if (!track.person_slug.empty()) set_presence_locked(*c, track.person_slug, -1);
    if (!person_slug.empty()) set_presence_locked(*c, person_slug, +1);
    track.person_slug = person_slug;
  }
  if (event.kind == "end") tracks_.erase(at);
}

void HomeAssistantMqtt::on_camera_state(const std::string& camera, CameraState state, const std::string& detail) {
  std::lock_guard<std::mutex> guard(lock_);
  if (stopped_ || state == CameraState::Starting) return;
  Camera* c = camera_locked(camera);
  if (!c) {
    ++counters_.unknown_camera;
    return;
  }
  const bool online = state == CameraState::Streaming;
  if (!online) {  // its tracks are over, whether or not their end events still come
    for (auto it = tracks_.begin(); it != tracks_.end();)
      it = it->second.camera == camera ? tracks_.erase(it) : std::next(it);
    for (const auto& [person_slug, open] : c->present)
      publish_retained(camera_topic(names_, c->names, person_slug), "OFF");
    c->present.clear();
  }
  if (online == c->online) return;
  c->online = online;
  publish_retained(camera_topic(names_, c->names, "available"), online_text(online));
  if (!online && !detail.empty()) log(false, "Home Assistant MQTT: camera '" + camera + "' offline: " + detail);
}

void HomeAssistantMqtt::publish_snapshot(const std::string& camera, const std::string& uid, std::string jpeg) {
  std::lock_guard<std::mutex> guard(lock_);
  if (stopped_) return;
  Camera* c = camera_locked(camera);
  if (!c) {
    ++counters_.unknown_camera;
    return;
  }
  if (jpeg.empty() || jpeg.size() > options_.max_snapshot_bytes) {
    if (counters_.snapshots_refused++ == 0)
      log(true, "Home Assistant MQTT: snapshot of track " + printable(uid) + " on '" + camera + "' has " +
                    std::to_string(jpeg.size()) + " bytes, not 1 .. max_snapshot_bytes " +
                    std::to_string(options_.max_snapshot_bytes) + ": not published (counted)");
    return;
  }
  c->snapshot = jpeg;  // kept to publish again after a reconnection
  publish_retained(camera_topic(names_, c->names, "snapshot"), std::move(jpeg));
}

// Home Assistant turns a person sensor off by itself off_delay after its last ON: ON goes again
// at half that period while the person is still there, so only a silent taconite lets it lapse.
void HomeAssistantMqtt::refresh_presence() {
  const auto period = std::chrono::milliseconds(static_cast<long>(names_.off_delay_s * 500));
  std::unique_lock<std::mutex> lk(lock_);
  while (!stopped_) {
    if (wake_.wait_for(lk, period, [&] { return stopped_; })) break;
    for (const Camera& c : cameras_)
      for (const auto& [person_slug, open] : c.present)
        publish_retained(camera_topic(names_, c.names, person_slug), "ON");
  }
}

void HomeAssistantMqtt::stop() {
  std::unique_ptr<gst::MqttPublisher> publisher;
  {
    std::lock_guard<std::mutex> guard(lock_);
    if (stopped_) return;
    for (Camera& c : cameras_) {
      for (const auto& [person_slug, open] : c.present)
        publish_retained(camera_topic(names_, c.names, person_slug), "OFF");
      c.present.clear();
    }
    tracks_.clear();
    publish_retained(availability_topic(names_), "offline");
    stopped_ = true;
    publisher = std::move(publisher_);
  }
  wake_.notify_all();
  if (refresher_.joinable()) refresher_.join();
  if (publisher) publisher->drain(kDrainAtStopMs);
  publisher.reset();  // a polite DISCONNECT: the broker keeps the will to itself
}

}  // namespace taconite::app
