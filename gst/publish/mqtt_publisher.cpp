#include "mqtt_publisher.hpp"

#include <mosquitto.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "input_file.hpp"

namespace taconite::gst {

namespace {

void init_library_once() {
  static std::once_flag once;
  std::call_once(once, [] { mosquitto_lib_init(); });
}

std::string library_error(int rc, int err) { return rc == MOSQ_ERR_ERRNO ? std::strerror(err) : mosquitto_strerror(rc); }

}  // namespace

MqttPublisher::MqttPublisher(const MqttSettings& settings, std::shared_ptr<PublishCounters> counters, Notify notify,
                             Connected on_connected)
    : settings_(settings),
      counters_(std::move(counters)),
      notify_(std::move(notify)),
      on_connected_(std::move(on_connected)) {}

std::string MqttPublisher::where() const { return settings_.host + ":" + std::to_string(settings_.port); }

Result<std::unique_ptr<MqttPublisher>> MqttPublisher::start(const MqttSettings& settings,
                                                            std::shared_ptr<PublishCounters> counters, Notify notify,
                                                            Connected on_connected) {
  init_library_once();
  std::unique_ptr<MqttPublisher> publisher(
      new MqttPublisher(settings, std::move(counters), std::move(notify), std::move(on_connected)));
  if (Status s = publisher->configure(); !s) return s.error();
  publisher->started_ = settings.retry_at_start;  // before the threads: they read it under the lock
  publisher->network_ = std::thread(&MqttPublisher::run_network, publisher.get());
  publisher->worker_ = std::thread(&MqttPublisher::run_worker, publisher.get());
  if (!settings.retry_at_start)
    if (Status s = publisher->wait_for_first_connection(); !s) return s.error();
  return publisher;
}

Status MqttPublisher::configure() {
  const MqttSettings& s = settings_;
  mosq_ = mosquitto_new(s.client_id.empty() ? nullptr : s.client_id.c_str(), true, this);
  if (!mosq_)
    return Error{ErrorKind::Device, "cannot create an MQTT client (client-id '" + s.client_id + "'): " +
                                        std::strerror(errno)};
  mosquitto_int_option(mosq_, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
  // Our network thread drives the connection: libmosquitto must not write from the worker's calls.
  mosquitto_threaded_set(mosq_, true);
  if (!s.username.empty()) {
    if (const int rc = mosquitto_username_pw_set(mosq_, s.username.c_str(), s.password.empty() ? nullptr
                                                                                             : s.password.c_str());
        rc != MOSQ_ERR_SUCCESS)
      return Error{ErrorKind::Input, "cannot use the MQTT credentials: " + library_error(rc, errno)};
  }
  if (!s.tls_ca.empty() || !s.tls_cert.empty() || !s.tls_key.empty()) {
    if (s.tls_ca.empty())
      return Error{ErrorKind::Input, "TLS needs tls-ca (the CA certificate that signed the broker's certificate)"};
    if (s.tls_cert.empty() != s.tls_key.empty())
      return Error{ErrorKind::Input, "tls-cert and tls-key go together (a client certificate and its private key)"};
    // Regular files only: OpenSSL would wait forever on a FIFO without a writer.
    for (const auto& [property, path] : {std::pair{"tls-ca", s.tls_ca}, {"tls-cert", s.tls_cert}, {"tls-key", s.tls_key}})
      if (!path.empty())
        if (std::string why = regular_file_problem(path); !why.empty())
          return Error{ErrorKind::Io, std::string("cannot read TLS file ") + property + " '" + path + "': " + why};
    const int rc = mosquitto_tls_set(mosq_, s.tls_ca.c_str(), nullptr, s.tls_cert.empty() ? nullptr : s.tls_cert.c_str(),
                                     s.tls_key.empty() ? nullptr : s.tls_key.c_str(), nullptr);
    if (rc != MOSQ_ERR_SUCCESS)
      return Error{ErrorKind::Io, "cannot use the TLS files (tls-ca '" + s.tls_ca + "', tls-cert '" + s.tls_cert +
                                      "', tls-key '" + s.tls_key + "'): " + library_error(rc, errno)};
  }
  if (s.will) {
    if (!valid_topic(s.will->topic))
      return Error{ErrorKind::Input, "the MQTT last will's topic '" + s.will->topic + "' is not a topic to publish to"};
    const int rc = mosquitto_will_set(mosq_, s.will->topic.c_str(), static_cast<int>(s.will->payload.size()),
                                      s.will->payload.data(), s.qos, s.will->retain);
    if (rc != MOSQ_ERR_SUCCESS)
      return Error{ErrorKind::Input, "cannot set the MQTT last will on '" + s.will->topic + "': " +
                                         library_error(rc, errno)};
  }
  mosquitto_connect_callback_set(mosq_, &MqttPublisher::on_connect);
  mosquitto_publish_callback_set(mosq_, &MqttPublisher::on_publish);
  mosquitto_log_callback_set(mosq_, &MqttPublisher::on_log);
  return Ok{};
}

// Without retry_at_start: the first attempt decides. The network thread ends an attempt after
// connect_timeout_ms; the extra second only covers a host name lookup that takes longer.
Status MqttPublisher::wait_for_first_connection() {
  std::unique_lock<std::mutex> lk(lock_);
  changed_.wait_for(lk, std::chrono::milliseconds(settings_.connect_timeout_ms + 1000),
                    [&] { return ever_connected_ || failures_ > 0; });
  if (ever_connected_) {
    started_ = true;
    return Ok{};
  }
  return Error{ErrorKind::Io, "cannot connect to the MQTT broker " + where() + ": " +
                                  (failures_ > 0 ? last_failure_
                                                 : "no answer within " + std::to_string(settings_.connect_timeout_ms) +
                                                       " ms")};
}

// Connects, runs the connection until it ends, waits, connects again... until the stop.
void MqttPublisher::run_network() {
  unsigned delay_s = 0;  // the first attempt at once
  bool first = true;
  std::unique_lock<std::mutex> lk(lock_);
  while (!stopping_) {
    if (delay_s > 0 && changed_.wait_for(lk, std::chrono::seconds(delay_s), [&] { return stopping_; })) break;
    connack_ = -1;
    last_error_log_.clear();
    lk.unlock();
    const std::string reason = run_connection(first);
    first = false;
    lk.lock();
    if (stopping_) break;
    // The backoff restarts after a connection that worked; a refusal counts as a failed attempt.
    const bool worked = connack_ == 0;
    delay_s = worked ? kReconnectMinSeconds : std::clamp(2 * delay_s, kReconnectMinSeconds, kReconnectMaxSeconds);
    ++failures_;
    last_failure_ = reason;
    // Refusals and TLS failures are worth a warning each time they change; other failures during
    // an outage (connection refused while the broker restarts) are the outage itself.
    const bool refused_or_tls = connack_ > 0 || last_error_log_.find("SSL") != std::string::npos;
    const std::string notice = connection_ended_locked(reason, refused_or_tls);
    changed_.notify_all();
    if (!notice.empty()) {
      lk.unlock();
      notify_(Notice::Warning, notice);
      lk.lock();
    }
  }
  lk.unlock();
  if (mosquitto_socket(mosq_) >= 0) {  // a polite goodbye, without waiting for the network
    mosquitto_disconnect(mosq_);
    mosquitto_loop_write(mosq_, 1);
  }
}

// One connection attempt and, when the broker accepts it, the connection until it ends. Returns
// why it failed or ended ("" when stopping).
std::string MqttPublisher::run_connection(bool first) {
  const MqttSettings& s = settings_;
  // Non-blocking connect (only the host name lookup blocks): a host that drops packets is given
  // up on by the deadline below, not by the kernel's minutes-long SYN retries.
  int rc = first ? mosquitto_connect_async(mosq_, s.host.c_str(), s.port, static_cast<int>(s.keepalive_seconds))
                 : mosquitto_reconnect_async(mosq_);
  int err = errno;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(s.connect_timeout_ms);
  while (rc == MOSQ_ERR_SUCCESS) {
    rc = mosquitto_loop(mosq_, kLoopWakeMs, 1);
    err = errno;
    std::lock_guard<std::mutex> guard(lock_);
    if (stopping_) return "";
    if (connack_ > 0) return failure_reason_locked(rc, err);  // refused: whatever libmosquitto does next
    if (rc == MOSQ_ERR_SUCCESS && connack_ == -1 && std::chrono::steady_clock::now() > deadline)
      return "no answer within " + std::to_string(s.connect_timeout_ms) + " ms" +
             (s.tls_ca.empty() ? " (if that port expects TLS, set tls-ca)" : "");
  }
  std::lock_guard<std::mutex> guard(lock_);
  return failure_reason_locked(rc, err);
}

std::string MqttPublisher::failure_reason_locked(int rc, int err) const {
  if (connack_ > 0)
    return std::string("the broker refused the connection: ") + mosquitto_connack_string(connack_) +
           (connack_ == 4 || connack_ == 5 ? " (check the user name and password of the credentials file)" : "");
  std::string reason = library_error(rc, err);
  if (!last_error_log_.empty()) reason += " (" + last_error_log_ + ")";  // OpenSSL's words for a TLS failure
  return reason;
}

// After an attempt failed or a connection ended (lock held): the accounting, and the warning to
// post ("" for none).
std::string MqttPublisher::connection_ended_locked(const std::string& reason, bool repeatable) {
  const bool was_connected = connected_;
  if (connected_) {
    connected_ = false;
    ++disconnects_;
    if (settings_.qos == 0) {  // libmosquitto discards unsent QoS 0 messages with the connection
      counters_->dropped += in_library_;
      in_library_ = 0;
    }
  }
  if (!started_ && !ever_connected_) return "";  // start() reports it as an error
  const std::string holding = "holding up to " + std::to_string(settings_.max_pending) + " messages";
  if (!in_outage_) {
    in_outage_ = true;
    dropped_at_outage_ = counters_->dropped;
    warned_reason_ = reason;
    if (was_connected)
      return "lost the connection to the MQTT broker " + where() + " (" + reason + "); reconnecting, " + holding;
    return "cannot connect to the MQTT broker " + where() + (ever_connected_ ? "" : " at start") + " (" + reason +
           "); retrying in the background, " + holding;
  }
  if (!repeatable || reason == warned_reason_) return "";
  warned_reason_ = reason;
  return "cannot connect to the MQTT broker " + where() + " (" + reason + "); still retrying, " + holding;
}

bool MqttPublisher::valid_topic(const std::string& topic) {
  return mosquitto_pub_topic_check(topic.c_str()) == MOSQ_ERR_SUCCESS;
}

MqttPublisher::~MqttPublisher() {
  {
    std::lock_guard<std::mutex> guard(lock_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (worker_.joinable()) worker_.join();
  if (network_.joinable()) network_.join();
  if (mosq_) mosquitto_destroy(mosq_);
  // Everything still pending is lost now.
  counters_->dropped += queue_.size() + in_library_;
}

void MqttPublisher::publish(std::string topic, std::string payload, bool retain) {
  {
    std::lock_guard<std::mutex> guard(lock_);
    Message message{std::move(topic), std::move(payload), retain};
    if (message.bytes() > settings_.max_pending_bytes) {
      ++counters_->dropped;  // could never be queued
      return;
    }
    if (queue_.size() + in_library_ >= settings_.max_pending) {
      ++counters_->dropped;
      if (queue_.empty()) return;  // everything pending is with libmosquitto: the new one goes
      evict_oldest_locked();       // the oldest waiting message makes room for the newest
    }
    while (queue_bytes_ + message.bytes() > settings_.max_pending_bytes) {
      ++counters_->dropped;
      evict_oldest_locked();
    }
    queue_bytes_ += message.bytes();
    queue_.push_back(std::move(message));
  }
  changed_.notify_all();
}

void MqttPublisher::evict_oldest_locked() {
  queue_bytes_ -= queue_.front().bytes();
  queue_.pop_front();
}

bool MqttPublisher::connected() {
  std::lock_guard<std::mutex> guard(lock_);
  return connected_;
}

void MqttPublisher::drain(unsigned timeout_ms) {
  std::unique_lock<std::mutex> lk(lock_);
  changed_.wait_for(lk, std::chrono::milliseconds(timeout_ms),
                    [&] { return !connected_ || (queue_.empty() && in_library_ == 0); });
}

void MqttPublisher::run_worker() {
  std::unique_lock<std::mutex> lk(lock_);
  while (true) {
    changed_.wait(lk, [&] { return stopping_ || (connected_ && !queue_.empty()); });
    if (stopping_) return;
    Message message = std::move(queue_.front());
    queue_.pop_front();
    queue_bytes_ -= message.bytes();
    ++in_library_;
    const std::uint64_t connection = disconnects_;
    lk.unlock();
    const int rc = mosquitto_publish(mosq_, nullptr, message.topic.c_str(), static_cast<int>(message.payload.size()),
                                     message.payload.data(), settings_.qos, message.retain);
    lk.lock();
    if (rc == MOSQ_ERR_SUCCESS) continue;
    if (disconnects_ != connection && settings_.qos == 0) {
      --counters_->dropped;  // the lost connection counted this message among the lost ones: it is not
    } else if (in_library_ > 0) {
      --in_library_;
    }
    if (rc == MOSQ_ERR_NO_CONN) {
      // The connection just went; the network thread notices. Keep the message for the next one.
      queue_bytes_ += message.bytes();
      queue_.push_front(std::move(message));
      changed_.wait_for(lk, std::chrono::milliseconds(20), [&] { return stopping_ || !connected_; });
    } else {
      ++counters_->dropped;  // e.g. a payload beyond the broker's limit: it would never be accepted
    }
  }
}

void MqttPublisher::on_connect(mosquitto* /*mosq*/, void* data, int rc) {
  auto* self = static_cast<MqttPublisher*>(data);
  std::string back;
  {
    std::lock_guard<std::mutex> guard(self->lock_);
    self->connack_ = rc;
    if (rc == 0) {
      self->connected_ = true;
      self->ever_connected_ = true;
      if (self->in_outage_) {
        self->in_outage_ = false;
        self->warned_reason_.clear();
        back = "reconnected to the MQTT broker " + self->where() + "; " +
               std::to_string(self->counters_->dropped - self->dropped_at_outage_) +
               " messages dropped during the outage";
      }
    }
  }
  self->changed_.notify_all();
  if (!back.empty()) self->notify_(Notice::Info, back);
  if (rc == 0 && self->on_connected_) self->on_connected_();
}

void MqttPublisher::on_publish(mosquitto* /*mosq*/, void* data, int /*mid*/) {
  auto* self = static_cast<MqttPublisher*>(data);
  {
    std::lock_guard<std::mutex> guard(self->lock_);
    if (self->in_library_ > 0) --self->in_library_;
    ++self->counters_->published;
  }
  self->changed_.notify_all();
}

void MqttPublisher::on_log(mosquitto* /*mosq*/, void* data, int level, const char* text) {
  if (!(level & MOSQ_LOG_ERR) || !text) return;
  auto* self = static_cast<MqttPublisher*>(data);
  std::lock_guard<std::mutex> guard(self->lock_);
  self->last_error_log_ = text;
}

}  // namespace taconite::gst
