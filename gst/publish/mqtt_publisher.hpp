// taconitepublish method=mqtt: documents to an MQTT broker through libmosquitto, never blocking
// the caller.
//
// publish() only appends to a bounded queue. A worker thread hands queued messages to
// libmosquitto while connected; a network thread of ours drives libmosquitto (mosquitto_loop with
// a short timeout, non-blocking connects), so no call waits on the network for long: stopping
// takes at most about kLoopWakeMs (plus a host name lookup in progress). Every connection attempt
// that fails, and every connection that ends, is retried by that thread after a growing delay
// (kReconnectMinSeconds doubling up to kReconnectMaxSeconds): an unreachable broker, one that
// gives no answer within connect_timeout_ms, refuses the CONNECT (e.g. not authorised) or fails
// the TLS handshake alike.
// Messages queued or handed over but not yet sent (QoS 0) or acknowledged (QoS 1) are pending:
// at most `max_pending` of them exist; a message arriving at the bound evicts the oldest queued
// one (the newest when all pending ones are with libmosquitto), counted as dropped. QoS 0
// messages handed over when the connection drops are lost with it (counted dropped); QoS 1 ones
// are sent again after reconnecting. What is still pending at stop is counted dropped, so
// published + dropped = messages given to publish() once stopped. The queue is also bounded in
// bytes (max_pending_bytes, topics and payloads of the messages not yet handed over): a message
// that would pass it evicts the oldest queued ones, and one bigger than the bound alone is dropped.
//
// For an application (taconite-run's Home Assistant link): retained publishes, a last will the
// broker publishes when the connection dies without a goodbye, and an on-connected hook, called
// after every accepted connection, that re-publishes what a restarted broker may have lost.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "taconite/error.hpp"

struct mosquitto;

namespace taconite::gst {

inline constexpr unsigned kReconnectMinSeconds = 1;
inline constexpr unsigned kReconnectMaxSeconds = 16;
// The network thread's longest wait inside libmosquitto: how long a stop waits for it at most.
inline constexpr int kLoopWakeMs = 100;

// What the broker publishes for us when our connection ends without a DISCONNECT (killed, network lost).
struct MqttWill {
  std::string topic, payload;
  bool retain = true;
};

struct MqttSettings {
  std::string host = "localhost";
  int port = 1883;
  std::string client_id;  // empty: the broker's generated id
  int qos = 0;            // 0 or 1
  std::string username, password;  // empty username: anonymous
  std::string tls_ca, tls_cert, tls_key;  // tls_ca (a CA file) enables TLS; cert and key: client certificate
  std::size_t max_pending = 1000;
  // Topics + payloads queued, not yet handed to libmosquitto. The element bounds by count only
  // (max-pending); taconite-run's Home Assistant link, whose snapshots vary in size, by bytes too.
  std::size_t max_pending_bytes = std::numeric_limits<std::size_t>::max();
  std::optional<MqttWill> will;
  bool retry_at_start = false;  // false: a broker that cannot be connected to at start is an error
  unsigned connect_timeout_ms = 10000;  // one connection attempt (TCP, TLS, CONNACK) takes at most this long
  unsigned keepalive_seconds = 30;
};

// Counters shared with the element, which reports them after the publisher is gone.
struct PublishCounters {
  std::atomic<std::uint64_t> published{0};
  std::atomic<std::uint64_t> dropped{0};
  std::atomic<std::uint64_t> tracks_evicted{0};      // messages=tracks|both: ended early by max-tracks
  std::atomic<std::uint64_t> best_faces_dropped{0};  // best faces not written (queue full, write failed)
  std::atomic<std::uint64_t> strings_repaired{0};    // strings written with U+FFFD for bytes that are not UTF-8
};

class MqttPublisher {
 public:
  enum class Notice { Warning, Info };
  // Called from the network thread: a warning when an outage starts (a lost connection, or with
  // retry_at_start a first attempt that failed) and for each new refusal or TLS failure during
  // it; an info message when the connection is back.
  using Notify = std::function<void(Notice, const std::string&)>;
  // Called from the network thread after each connection the broker accepted (the first and every
  // reconnection); it may call publish() (what it queues goes out after what waited for the
  // connection, so the state it re-publishes is the newest). It must not destroy the publisher.
  using Connected = std::function<void()>;

  // Without retry_at_start: connects, waiting at most about connect_timeout_ms (plus the host
  // name lookup); an Io error naming what failed (the TLS handshake, the broker's refusal, e.g.
  // "not authorised", no answer). With retry_at_start: returns at once and connects in the
  // background. An error also for settings that cannot work: Input for credentials or TLS
  // settings libmosquitto refuses, Io for TLS files it cannot read, Device when it cannot make a client.
  static Result<std::unique_ptr<MqttPublisher>> start(const MqttSettings& settings,
                                                      std::shared_ptr<PublishCounters> counters, Notify notify,
                                                      Connected on_connected = {});
  // Whether `topic` is one a message may be published to (no wildcards; libmosquitto's check).
  static bool valid_topic(const std::string& topic);
  ~MqttPublisher();  // disconnects; pending messages are counted dropped
  MqttPublisher(const MqttPublisher&) = delete;
  MqttPublisher& operator=(const MqttPublisher&) = delete;

  // Queues `payload` for `topic` (retained: the broker keeps it for later subscribers); never waits
  // for the network.
  void publish(std::string topic, std::string payload, bool retain = false);
  // Whether the broker accepted the current connection.
  bool connected();

  // Waits up to `timeout_ms` until nothing is pending, unless the broker is away (then at once).
  // For end of stream: what was queued before goes out while the connection lasts.
  void drain(unsigned timeout_ms);

 private:
  struct Message {
    std::string topic, payload;
    bool retain = false;
    std::size_t bytes() const { return topic.size() + payload.size(); }
  };

  MqttPublisher(const MqttSettings& settings, std::shared_ptr<PublishCounters> counters, Notify notify,
                Connected on_connected);
  void evict_oldest_locked();
  Status configure();
  Status wait_for_first_connection();
  void run_network();
  std::string run_connection(bool first);
  std::string failure_reason_locked(int rc, int err) const;
  std::string connection_ended_locked(const std::string& reason, bool repeatable);
  void run_worker();
  static void on_connect(mosquitto* mosq, void* self, int rc);
  static void on_publish(mosquitto* mosq, void* self, int mid);
  static void on_log(mosquitto* mosq, void* self, int level, const char* text);
  std::string where() const;

  MqttSettings settings_;
  std::shared_ptr<PublishCounters> counters_;
  Notify notify_;
  Connected on_connected_;
  mosquitto* mosq_ = nullptr;
  std::thread network_, worker_;

  std::mutex lock_;
  std::condition_variable changed_;
  std::deque<Message> queue_;     // not yet handed to libmosquitto
  std::size_t queue_bytes_ = 0;   // their topics and payloads
  std::size_t in_library_ = 0;    // handed to libmosquitto, not yet sent (QoS 0) or acknowledged (QoS 1)
  bool connected_ = false;        // the broker accepted the current connection
  bool ever_connected_ = false;
  std::uint64_t disconnects_ = 0;  // connections lost so far
  int connack_ = -1;              // the broker's answer to the current attempt's CONNECT (-1: none yet)
  std::string last_error_log_;    // libmosquitto's last error log line of the current attempt (TLS details)
  std::uint64_t failures_ = 0;    // connection attempts that failed
  std::string last_failure_;      // why the last one failed
  bool started_ = false;          // start() returned the publisher: failures are notified from now on
  bool in_outage_ = false;        // a warning was posted for the current outage
  std::string warned_reason_;     // the reason last warned about in this outage
  std::uint64_t dropped_at_outage_ = 0;
  bool stopping_ = false;
};

}  // namespace taconite::gst
