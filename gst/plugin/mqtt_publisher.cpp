#include "mqtt_publisher.hpp"

#include <gio/gio.h>
#include <mosquitto.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <cstring>

namespace taconite::gst {

namespace {

void init_library_once() {
  static std::once_flag once;
  std::call_once(once, [] { mosquitto_lib_init(); });
}

// "" when `path` is readable, else why not (named after its property).
std::string unreadable(const char* property, const std::string& path) {
  if (access(path.c_str(), R_OK) == 0) return "";
  return std::string(property) + " '" + path + "': " + std::strerror(errno);
}

std::string library_error(int rc) {
  return rc == MOSQ_ERR_ERRNO ? std::strerror(errno) : mosquitto_strerror(rc);
}

// Whether a TCP connection to host:port opens within `timeout_ms`. libmosquitto's connect has no
// timeout (a host that drops packets would hold it for the kernel's ~2 minutes), so a short
// probe comes first; `error` gets GIO's reason.
bool reachable(const std::string& host, int port, unsigned timeout_ms, std::string* error) {
  GSocketClient* client = g_socket_client_new();
  g_socket_client_set_timeout(client, std::max(1u, (timeout_ms + 999) / 1000));
  GError* gerror = nullptr;
  GSocketConnection* connection =
      g_socket_client_connect_to_host(client, host.c_str(), static_cast<guint16>(port), nullptr, &gerror);
  if (connection) {
    g_io_stream_close(G_IO_STREAM(connection), nullptr, nullptr);
    g_object_unref(connection);
  } else {
    *error = gerror->message;
    g_error_free(gerror);
  }
  g_object_unref(client);
  return connection != nullptr;
}

}  // namespace

MqttPublisher::MqttPublisher(const MqttSettings& settings, std::shared_ptr<PublishCounters> counters, Notify notify)
    : settings_(settings), counters_(std::move(counters)), notify_(std::move(notify)) {}

std::string MqttPublisher::where() const { return settings_.host + ":" + std::to_string(settings_.port); }

std::unique_ptr<MqttPublisher> MqttPublisher::start(const MqttSettings& settings,
                                                    std::shared_ptr<PublishCounters> counters, Notify notify,
                                                    std::string* error) {
  init_library_once();
  std::unique_ptr<MqttPublisher> publisher(new MqttPublisher(settings, std::move(counters), std::move(notify)));
  if (!publisher->configure(error) || !publisher->connect_at_start(error)) return nullptr;
  publisher->worker_ = std::thread(&MqttPublisher::run_worker, publisher.get());
  return publisher;
}

bool MqttPublisher::configure(std::string* error) {
  const MqttSettings& s = settings_;
  mosq_ = mosquitto_new(s.client_id.empty() ? nullptr : s.client_id.c_str(), true, this);
  if (!mosq_) {
    *error = "cannot create an MQTT client (client-id '" + s.client_id + "'): " + std::strerror(errno);
    return false;
  }
  mosquitto_int_option(mosq_, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
  if (!s.username.empty()) {
    if (const int rc = mosquitto_username_pw_set(mosq_, s.username.c_str(), s.password.empty() ? nullptr
                                                                                             : s.password.c_str());
        rc != MOSQ_ERR_SUCCESS) {
      *error = "cannot use the MQTT credentials: " + library_error(rc);
      return false;
    }
  }
  if (!s.tls_ca.empty() || !s.tls_cert.empty() || !s.tls_key.empty()) {
    if (s.tls_ca.empty()) {
      *error = "TLS needs tls-ca (the CA certificate that signed the broker's certificate)";
      return false;
    }
    if (s.tls_cert.empty() != s.tls_key.empty()) {
      *error = "tls-cert and tls-key go together (a client certificate and its private key)";
      return false;
    }
    for (const auto& [property, path] : {std::pair{"tls-ca", s.tls_ca}, {"tls-cert", s.tls_cert}, {"tls-key", s.tls_key}})
      if (!path.empty())
        if (std::string why = unreadable(property, path); !why.empty()) {
          *error = "cannot read TLS file " + why;
          return false;
        }
    const int rc = mosquitto_tls_set(mosq_, s.tls_ca.c_str(), nullptr, s.tls_cert.empty() ? nullptr : s.tls_cert.c_str(),
                                     s.tls_key.empty() ? nullptr : s.tls_key.c_str(), nullptr);
    if (rc != MOSQ_ERR_SUCCESS) {
      *error = "cannot use the TLS files (tls-ca '" + s.tls_ca + "', tls-cert '" + s.tls_cert + "', tls-key '" +
               s.tls_key + "'): " + library_error(rc);
      return false;
    }
  }
  mosquitto_reconnect_delay_set(mosq_, kReconnectMinSeconds, kReconnectMaxSeconds, true);
  mosquitto_connect_callback_set(mosq_, &MqttPublisher::on_connect);
  mosquitto_disconnect_callback_set(mosq_, &MqttPublisher::on_disconnect);
  mosquitto_publish_callback_set(mosq_, &MqttPublisher::on_publish);
  mosquitto_log_callback_set(mosq_, &MqttPublisher::on_log);
  return true;
}

bool MqttPublisher::connect_at_start(std::string* error) {
  const MqttSettings& s = settings_;
  const int keepalive = static_cast<int>(s.keepalive_seconds);
  std::string unreachable_reason;
  const bool probe_ok = reachable(s.host, s.port, s.connect_timeout_ms, &unreachable_reason);
  if (s.retry_at_start) {
    const int rc = probe_ok ? mosquitto_connect(mosq_, s.host.c_str(), s.port, keepalive) : MOSQ_ERR_NO_CONN;
    if (rc == MOSQ_ERR_SUCCESS) return start_network(error);
    // libmosquitto's thread only retries connections that once worked: the worker retries this one.
    {
      std::lock_guard<std::mutex> guard(lock_);
      in_outage_ = true;
      first_connect_pending_ = true;
    }
    const std::string reason = probe_ok ? library_error(rc) : unreachable_reason;
    notify_(Notice::Warning, "MQTT broker " + where() + " unreachable at start (" + reason + "); retrying, holding up to " +
                                 std::to_string(s.max_pending) + " messages");
    return true;
  }
  if (!probe_ok) {
    *error = "cannot connect to the MQTT broker " + where() + ": " + unreachable_reason;
    return false;
  }
  // The TCP connection (and TLS handshake) first, so their failure is reported at once.
  if (const int rc = mosquitto_connect(mosq_, s.host.c_str(), s.port, keepalive); rc != MOSQ_ERR_SUCCESS) {
    std::lock_guard<std::mutex> guard(lock_);
    *error = "cannot connect to the MQTT broker " + where() + ": " + library_error(rc) +
             (last_error_log_.empty() ? "" : " (" + last_error_log_ + ")");
    return false;
  }
  if (!start_network(error)) return false;
  std::unique_lock<std::mutex> lk(lock_);
  changed_.wait_for(lk, std::chrono::milliseconds(s.connect_timeout_ms),
                    [&] { return connack_ != -1 || failed_before_connack_; });
  if (connack_ == 0) return true;
  if (connack_ == -1 && failed_before_connack_) {  // e.g. the TLS handshake, finished on the network thread
    *error = "cannot connect to the MQTT broker " + where() + ": " + last_error_log_;
  } else if (connack_ > 0) {
    *error = "the MQTT broker " + where() + " refused the connection: " + mosquitto_connack_string(connack_) +
             (connack_ == 4 || connack_ == 5 ? " (check the user name and password of the credentials file)" : "");
  } else {
    *error = "no answer from the MQTT broker " + where() + " within " + std::to_string(s.connect_timeout_ms) +
             " ms" + (last_error_log_.empty() ? "" : " (" + last_error_log_ + ")") +
             (s.tls_ca.empty() ? "; if that port expects TLS, set tls-ca" : "");
  }
  return false;
}

bool MqttPublisher::start_network(std::string* error) {
  if (const int started = mosquitto_loop_start(mosq_); started != MOSQ_ERR_SUCCESS) {
    *error = "cannot start the MQTT network thread: " + library_error(started);
    return false;
  }
  loop_started_ = true;
  return true;
}

// Until the first connection works (retry_at_start): connect again after a doubling delay.
void MqttPublisher::retry_first_connect(std::unique_lock<std::mutex>& lk) {
  unsigned delay_s = kReconnectMinSeconds;
  while (first_connect_pending_) {
    if (changed_.wait_for(lk, std::chrono::seconds(delay_s), [&] { return stopping_; })) return;
    delay_s = std::min(2 * delay_s, kReconnectMaxSeconds);
    lk.unlock();
    std::string reason;
    const bool connected = reachable(settings_.host, settings_.port, settings_.connect_timeout_ms, &reason) &&
                           mosquitto_connect(mosq_, settings_.host.c_str(), settings_.port,
                                             static_cast<int>(settings_.keepalive_seconds)) == MOSQ_ERR_SUCCESS;
    std::string error;
    const bool started = connected && start_network(&error);
    if (connected && !started) notify_(Notice::Warning, error);
    lk.lock();
    if (started) first_connect_pending_ = false;  // on_connect follows from the network thread
  }
}

MqttPublisher::~MqttPublisher() {
  {
    std::lock_guard<std::mutex> guard(lock_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (worker_.joinable()) worker_.join();
  if (mosq_) {
    if (loop_started_) {
      mosquitto_disconnect(mosq_);
      mosquitto_loop_stop(mosq_, false);
    }
    mosquitto_destroy(mosq_);
  }
  // Everything still pending is lost now.
  counters_->dropped += queue_.size() + in_library_;
}

void MqttPublisher::publish(std::string topic, std::string payload) {
  {
    std::lock_guard<std::mutex> guard(lock_);
    if (queue_.size() + in_library_ >= settings_.max_pending) {
      ++counters_->dropped;
      if (queue_.empty()) return;  // everything pending is with libmosquitto: the new one goes
      queue_.pop_front();          // the oldest waiting message makes room for the newest
    }
    queue_.push_back({std::move(topic), std::move(payload)});
  }
  changed_.notify_all();
}

void MqttPublisher::drain(unsigned timeout_ms) {
  std::unique_lock<std::mutex> lk(lock_);
  changed_.wait_for(lk, std::chrono::milliseconds(timeout_ms),
                    [&] { return !connected_ || (queue_.empty() && in_library_ == 0); });
}

void MqttPublisher::run_worker() {
  std::unique_lock<std::mutex> lk(lock_);
  retry_first_connect(lk);
  while (true) {
    changed_.wait(lk, [&] { return stopping_ || (connected_ && !queue_.empty()); });
    if (stopping_) return;
    Message message = std::move(queue_.front());
    queue_.pop_front();
    ++in_library_;
    const std::uint64_t connection = disconnects_;
    lk.unlock();
    const int rc = mosquitto_publish(mosq_, nullptr, message.topic.c_str(), static_cast<int>(message.payload.size()),
                                     message.payload.data(), settings_.qos, false);
    lk.lock();
    if (rc == MOSQ_ERR_SUCCESS) continue;
    if (disconnects_ != connection && settings_.qos == 0) {
      --counters_->dropped;  // on_disconnect counted this message among the lost ones: it is not
    } else if (in_library_ > 0) {
      --in_library_;
    }
    if (rc == MOSQ_ERR_NO_CONN) {
      // The connection just went; on_disconnect follows. Keep the message for the next one.
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
    if (self->connack_ == -1) self->connack_ = rc;
    if (rc == 0) {
      self->connected_ = true;
      self->ever_connected_ = true;
      if (self->in_outage_) {
        self->in_outage_ = false;
        back = "reconnected to the MQTT broker " + self->where() + "; " +
               std::to_string(self->counters_->dropped - self->dropped_at_outage_) +
               " messages dropped during the outage";
      }
    }
  }
  self->changed_.notify_all();
  if (!back.empty()) self->notify_(Notice::Info, back);
}

void MqttPublisher::on_disconnect(mosquitto* /*mosq*/, void* data, int rc) {
  auto* self = static_cast<MqttPublisher*>(data);
  std::string lost;
  {
    std::lock_guard<std::mutex> guard(self->lock_);
    self->connected_ = false;
    ++self->disconnects_;
    if (self->settings_.qos == 0) {  // libmosquitto discards unsent QoS 0 messages with the connection
      self->counters_->dropped += self->in_library_;
      self->in_library_ = 0;
    }
    if (rc != 0 && !self->stopping_ && !self->in_outage_ && self->ever_connected_) {
      self->in_outage_ = true;
      self->dropped_at_outage_ = self->counters_->dropped;
      lost = "lost the connection to the MQTT broker " + self->where() + " (" + mosquitto_strerror(rc) +
             "); reconnecting, holding up to " + std::to_string(self->settings_.max_pending) + " messages";
    }
  }
  self->changed_.notify_all();
  if (!lost.empty()) self->notify_(Notice::Warning, lost);
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
  if (!(level & (MOSQ_LOG_ERR | MOSQ_LOG_WARNING)) || !text) return;
  auto* self = static_cast<MqttPublisher*>(data);
  {
    std::lock_guard<std::mutex> guard(self->lock_);
    self->last_error_log_ = text;
    if ((level & MOSQ_LOG_ERR) && self->connack_ == -1) self->failed_before_connack_ = true;
  }
  self->changed_.notify_all();
}

}  // namespace taconite::gst
