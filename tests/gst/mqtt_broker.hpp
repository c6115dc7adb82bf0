// A real mosquitto broker for the taconitepublish tests, listening on 127.0.0.1 only, on a free
// port, with its config, password file and persistence in a private temporary directory; and a
// mosquitto_sub subscriber writing what it receives to a file.
#pragma once

#include <glib.h>

#include <string>
#include <vector>

namespace gsttest {

class MosquittoBroker {
 public:
  struct Options {
    bool persistence = false;      // sessions survive a restart (SIGTERM saves them)
    std::string user, password;    // non-empty: anonymous clients are refused
    std::string tls_ca, tls_cert, tls_key;  // non-empty: a TLS listener with this CA, certificate and key
  };
  explicit MosquittoBroker(Options options);
  ~MosquittoBroker();  // stops it and removes its directory
  MosquittoBroker(const MosquittoBroker&) = delete;
  MosquittoBroker& operator=(const MosquittoBroker&) = delete;

  // Starts the broker and waits (hang guard 20 s) until it accepts connections; false with `error`.
  bool start(std::string* error);
  // SIGTERM and wait: with persistence, sessions and queued messages are saved.
  void stop();
  int port() const { return port_; }
  const std::string& dir() const { return dir_; }

 private:
  Options options_;
  std::string dir_;
  int port_ = 0;
  GPid pid_ = 0;
};

// Where mosquitto lives (Debian puts it in /usr/sbin); empty when not installed.
std::string mosquitto_program();

// Writes, with the openssl command, a CA (DIR/NAME-ca.pem, key NAME-ca.key) and a certificate for
// 127.0.0.1 it signed (DIR/NAME-server.pem, key NAME-server.key). False when openssl failed.
bool write_test_certificates(const std::string& dir, const std::string& name);

class MqttSubscriber {
 public:
  // mosquitto_sub on `topic` at QoS 1 with a persistent session (client id `client_id`), printing
  // "topic payload" lines into a file of the broker's directory. Waits (hang guard 20 s) until a
  // probe message published on `probe_topic` (under `topic`) arrived, so nothing later is missed.
  MqttSubscriber(const MosquittoBroker& broker, const std::string& topic, const std::string& probe_topic,
                 const std::string& client_id);
  ~MqttSubscriber();
  bool ready() const { return ready_; }
  // The payloads received on topics other than the probe's, with their topics.
  std::vector<std::pair<std::string, std::string>> messages() const;
  // Waits (hang guard `timeout_s`) until at least `n` such messages arrived; returns the count.
  std::size_t wait_for(std::size_t n, int timeout_s) const;

 private:
  std::string file_, probe_topic_;
  GPid pid_ = 0;
  bool ready_ = false;
};

}  // namespace gsttest
