// taconitepublish method=mqtt: documents to an MQTT broker through libmosquitto, never blocking
// the caller.
//
// publish() only appends to a bounded queue. A worker thread hands queued messages to
// libmosquitto while connected; libmosquitto's own network thread sends them and reconnects after
// a lost connection with a growing delay (kReconnectMinSeconds up to kReconnectMaxSeconds). A
// first connection that failed (retry_at_start) is retried by the worker, doubling its delay
// within the same bounds.
// Messages queued or handed over but not yet sent (QoS 0) or acknowledged (QoS 1) are pending:
// at most `max_pending` of them exist; a message arriving at the bound evicts the oldest queued
// one (the newest when all pending ones are with libmosquitto), counted as dropped. QoS 0
// messages handed over when the connection drops are lost with it (counted dropped); QoS 1 ones
// are sent again after reconnecting. What is still pending at stop is counted dropped, so
// published + dropped = messages given to publish() once stopped.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

struct mosquitto;

namespace taconite::gst {

inline constexpr unsigned kReconnectMinSeconds = 1;
inline constexpr unsigned kReconnectMaxSeconds = 16;

struct MqttSettings {
  std::string host = "localhost";
  int port = 1883;
  std::string client_id;  // empty: the broker's generated id
  int qos = 0;            // 0 or 1
  std::string username, password;  // empty username: anonymous
  std::string tls_ca, tls_cert, tls_key;  // tls_ca (a CA file) enables TLS; cert and key: client certificate
  std::size_t max_pending = 1000;
  bool retry_at_start = false;  // false: an unreachable broker at start is an error
  unsigned connect_timeout_ms = 10000;  // start: wait this long for the broker's answer
  unsigned keepalive_seconds = 30;
};

// Counters shared with the element, which reports them after the publisher is gone.
struct PublishCounters {
  std::atomic<std::uint64_t> published{0};
  std::atomic<std::uint64_t> dropped{0};
};

class MqttPublisher {
 public:
  enum class Notice { Warning, Info };
  // Called from libmosquitto's thread: once when a connection is lost (or at start with
  // retry_at_start, when the broker is unreachable), once when it is back.
  using Notify = std::function<void(Notice, const std::string&)>;

  // Connects (unless retry_at_start, which connects in the background). Null with `error` set
  // naming what failed: the TLS files, the broker's refusal (e.g. "not authorised"), no answer.
  static std::unique_ptr<MqttPublisher> start(const MqttSettings& settings, std::shared_ptr<PublishCounters> counters,
                                              Notify notify, std::string* error);
  ~MqttPublisher();  // disconnects; pending messages are counted dropped
  MqttPublisher(const MqttPublisher&) = delete;
  MqttPublisher& operator=(const MqttPublisher&) = delete;

  // Queues `payload` for `topic`; never waits for the network.
  void publish(std::string topic, std::string payload);

  // Waits up to `timeout_ms` until nothing is pending, unless the broker is away (then at once).
  // For end of stream: what was queued before goes out while the connection lasts.
  void drain(unsigned timeout_ms);

 private:
  struct Message {
    std::string topic, payload;
  };

  MqttPublisher(const MqttSettings& settings, std::shared_ptr<PublishCounters> counters, Notify notify);
  bool configure(std::string* error);
  bool connect_at_start(std::string* error);
  bool start_network(std::string* error);
  void retry_first_connect(std::unique_lock<std::mutex>& lk);
  void run_worker();
  static void on_connect(mosquitto* mosq, void* self, int rc);
  static void on_disconnect(mosquitto* mosq, void* self, int rc);
  static void on_publish(mosquitto* mosq, void* self, int mid);
  static void on_log(mosquitto* mosq, void* self, int level, const char* text);
  std::string where() const;

  MqttSettings settings_;
  std::shared_ptr<PublishCounters> counters_;
  Notify notify_;
  mosquitto* mosq_ = nullptr;
  bool loop_started_ = false;  // libmosquitto's network thread runs (written before the worker starts, or by it)
  std::thread worker_;

  std::mutex lock_;
  std::condition_variable changed_;
  std::deque<Message> queue_;     // not yet handed to libmosquitto
  std::size_t in_library_ = 0;    // handed to libmosquitto, not yet sent (QoS 0) or acknowledged (QoS 1)
  bool connected_ = false;
  std::uint64_t disconnects_ = 0;  // connections lost so far
  bool ever_connected_ = false;
  int connack_ = -1;              // the broker's answer to the first CONNECT (-1: none yet)
  bool failed_before_connack_ = false;  // libmosquitto logged an error before that answer
  bool in_outage_ = false;        // a warning was posted for the current outage
  std::uint64_t dropped_at_outage_ = 0;
  std::string last_error_log_;    // libmosquitto's last error log line (TLS details)
  bool stopping_ = false;
  bool first_connect_pending_ = false;  // retry_at_start and the broker never answered yet
};

}  // namespace taconite::gst
