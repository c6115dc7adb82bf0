// taconitepublish built without libmosquitto (meson -Dmqtt=disabled, or libmosquitto-dev missing):
// method=mqtt refuses at start with this error, so the element stays usable with method=file.
// start() never makes a publisher, so the other members are never reached on an object.
#include "mqtt_publisher.hpp"

namespace taconite::gst {

Result<std::unique_ptr<MqttPublisher>> MqttPublisher::start(const MqttSettings& /*settings*/,
                                                            std::shared_ptr<PublishCounters> /*counters*/,
                                                            Notify /*notify*/, Connected /*on_connected*/) {
  return Error{ErrorKind::Input,
               "method=mqtt is not available: this taconite plugin was built without MQTT support (libmosquitto; "
               "rebuild with libmosquitto-dev installed and meson -Dmqtt=enabled); use method=file"};
}

// Without libmosquitto's check any topic passes here: start() refuses method=mqtt right after.
bool MqttPublisher::valid_topic(const std::string& /*topic*/) { return true; }

MqttPublisher::~MqttPublisher() = default;

void MqttPublisher::publish(std::string /*topic*/, std::string /*payload*/, bool /*retain*/) {}

bool MqttPublisher::connected() { return false; }

void MqttPublisher::drain(unsigned /*timeout_ms*/) {}

}  // namespace taconite::gst
