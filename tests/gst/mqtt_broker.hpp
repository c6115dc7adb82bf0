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
    int port = 0;                  // 0: a free port; else this one (e.g. another broker's, stopped)
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

// A broker that never answers: a loopback listener that accepts no connection, its one-entry
// backlog filled at construction, so the kernel drops every further SYN and a client's connect
// stays pending (SYN_SENT) until the client gives up.
class BlackholeListener {
 public:
  explicit BlackholeListener(int port = 0);  // 0: a free port
  ~BlackholeListener();
  BlackholeListener(const BlackholeListener&) = delete;
  BlackholeListener& operator=(const BlackholeListener&) = delete;
  bool ready() const { return filler_ >= 0; }
  int port() const { return port_; }

 private:
  int listener_ = -1, filler_ = -1, port_ = 0;
};

// Whether a TCP connection to 127.0.0.1:`port` is being attempted (SYN_SENT, /proc/net/tcp).
bool connect_attempt_pending(int port);

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
