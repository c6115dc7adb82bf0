#include "mqtt_broker.hpp"

#include <arpa/inet.h>
#include <glib/gstdio.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

namespace gsttest {

namespace {

// 127.0.0.1:port (0: any port).
sockaddr_in loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  return address;
}

// A port nothing listens on now (the kernel's pick for an ephemeral bind on loopback).
int free_loopback_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = loopback(0);
  socklen_t length = sizeof(address);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
    port = ntohs(address.sin_port);
  close(fd);
  return port;
}

bool accepts_connections(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  const sockaddr_in address = loopback(port);
  const bool ok = connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return ok;
}

void stop_process(GPid& pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  g_spawn_close_pid(pid);
  pid = 0;
}

bool spawn(const std::vector<std::string>& args, GPid* pid, std::string* error) {
  std::vector<gchar*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<gchar*>(a.c_str()));
  argv.push_back(nullptr);
  GError* gerror = nullptr;
  if (!g_spawn_async(nullptr, argv.data(), nullptr, G_SPAWN_DO_NOT_REAP_CHILD, nullptr, nullptr, pid, &gerror)) {
    *error = gerror->message;
    g_error_free(gerror);
    return false;
  }
  return true;
}

std::string program(const char* name, const char* fallback) {
  gchar* found = g_find_program_in_path(name);
  std::string path = found ? found : (g_file_test(fallback, G_FILE_TEST_IS_EXECUTABLE) ? fallback : "");
  g_free(found);
  return path;
}

}  // namespace

std::string mosquitto_program() { return program("mosquitto", "/usr/sbin/mosquitto"); }

bool write_test_certificates(const std::string& dir, const std::string& name) {
  const std::string p = dir + "/" + name;
  const std::string script =
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=" + name + "-ca -keyout '" + p + "-ca.key' -out '" +
      p + "-ca.pem' && openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=127.0.0.1 -keyout '" + p +
      "-server.key' -out '" + p + "-server.csr' && printf 'subjectAltName=IP:127.0.0.1\\n' > '" + p +
      "-ext' && openssl x509 -req -days 2 -in '" + p + "-server.csr' -CA '" + p + "-ca.pem' -CAkey '" + p +
      "-ca.key' -CAcreateserial -extfile '" + p + "-ext' -out '" + p + "-server.pem'";
  const gchar* argv[] = {"/bin/sh", "-c", script.c_str(), nullptr};
  gint status = -1;
  return g_spawn_sync(nullptr, const_cast<gchar**>(argv), nullptr, G_SPAWN_STDERR_TO_DEV_NULL, nullptr, nullptr,
                      nullptr, nullptr, &status, nullptr) &&
         g_spawn_check_wait_status(status, nullptr);
}

MosquittoBroker::MosquittoBroker(Options options) : options_(std::move(options)) {
  gchar* dir = g_dir_make_tmp("taconite-mosquitto-XXXXXX", nullptr);
  dir_ = dir ? dir : "";
  g_free(dir);
  port_ = options_.port ? options_.port : free_loopback_port();
  std::ofstream conf(dir_ + "/mosquitto.conf");
  conf << "listener " << port_ << " 127.0.0.1\n";  // loopback only
  conf << "user " << g_get_user_name() << "\n";     // as root, do not switch to the mosquitto user
  conf << "log_dest file " << dir_ << "/mosquitto.log\n";
  if (options_.persistence) conf << "persistence true\npersistence_location " << dir_ << "/\n";
  if (!options_.tls_ca.empty())
    conf << "cafile " << options_.tls_ca << "\ncertfile " << options_.tls_cert << "\nkeyfile " << options_.tls_key << "\n";
  if (options_.user.empty()) {
    conf << "allow_anonymous true\n";
  } else {
    conf << "allow_anonymous false\npassword_file " << dir_ << "/passwords\n";
    const std::string command = "mosquitto_passwd -c -b '" + dir_ + "/passwords' '" + options_.user + "' '" +
                                options_.password + "'";
    gint status = -1;
    g_spawn_command_line_sync(command.c_str(), nullptr, nullptr, &status, nullptr);
  }
}

MosquittoBroker::~MosquittoBroker() {
  stop();
  if (GDir* d = g_dir_open(dir_.c_str(), 0, nullptr)) {
    while (const gchar* name = g_dir_read_name(d)) g_remove((dir_ + "/" + name).c_str());
    g_dir_close(d);
  }
  g_rmdir(dir_.c_str());
}

bool MosquittoBroker::start(std::string* error) {
  const std::string mosquitto = mosquitto_program();
  if (mosquitto.empty() || dir_.empty() || port_ == 0) {
    *error = "mosquitto, a temporary directory or a free port is missing";
    return false;
  }
  if (!spawn({mosquitto, "-c", dir_ + "/mosquitto.conf"}, &pid_, error)) return false;
  for (int i = 0; i < 1000; ++i) {  // hang guard: 20 s
    if (accepts_connections(port_)) return true;
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = 0;
      *error = "mosquitto exited at start (see " + dir_ + "/mosquitto.log)";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  *error = "mosquitto did not listen on port " + std::to_string(port_) + " within 20 s";
  return false;
}

void MosquittoBroker::stop() { stop_process(pid_); }

BlackholeListener::BlackholeListener(int port) {
  listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int on = 1;
  setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));  // a stopped broker's port
  sockaddr_in address = loopback(port);
  socklen_t length = sizeof(address);
  if (bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 || listen(listener_, 0) != 0 ||
      getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    return;
  port_ = ntohs(address.sin_port);
  // Backlog 0 holds one connection: this one, never accepted. Later SYNs find the queue full.
  const int filler = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_in target = loopback(port_);
  if (connect(filler, reinterpret_cast<const sockaddr*>(&target), sizeof(target)) == 0)
    filler_ = filler;
  else
    close(filler);
}

BlackholeListener::~BlackholeListener() {
  if (filler_ >= 0) close(filler_);
  if (listener_ >= 0) close(listener_);
}

bool connect_attempt_pending(int port) {
  std::ifstream tcp("/proc/net/tcp");
  std::string line;
  std::getline(tcp, line);  // the header
  char remote[64] = {}, state[8] = {};
  while (std::getline(tcp, line)) {
    // "  sl  local_address rem_address   st ...": rem_address is HEXIP:HEXPORT, st 02 is SYN_SENT.
    if (std::sscanf(line.c_str(), "%*s %*s %63s %7s", remote, state) != 2) continue;
    const char* colon = std::strchr(remote, ':');
    if (colon && std::strtol(colon + 1, nullptr, 16) == port && std::string(state) == "02") return true;
  }
  return false;
}

MqttSubscriber::MqttSubscriber(const MosquittoBroker& broker, const std::string& topic, const std::string& probe_topic,
                               const std::string& client_id)
    : file_(broker.dir() + "/received-" + client_id + ".txt"), probe_topic_(probe_topic) {
  const std::string port = std::to_string(broker.port());
  const std::string sub = program("mosquitto_sub", "/usr/bin/mosquitto_sub");
  const std::string pub = program("mosquitto_pub", "/usr/bin/mosquitto_pub");
  std::string error;
  if (sub.empty() || pub.empty()) return;
  // -c -i: a persistent session, so messages published while it reconnects are kept for it.
  if (!spawn({"/bin/sh", "-c",
              "exec \"$0\" -h 127.0.0.1 -p \"$1\" -t \"$2\" -q 1 -c -i \"$3\" -v > \"$4\"", sub, port, topic,
              client_id, file_},
             &pid_, &error))
    return;
  for (int i = 0; i < 100 && !ready_; ++i) {  // hang guard: 20 s
    const std::string command = pub + " -h 127.0.0.1 -p " + port + " -q 1 -t " + probe_topic + " -m probe";
    g_spawn_command_line_sync(command.c_str(), nullptr, nullptr, nullptr, nullptr);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::ifstream in(file_);
    for (std::string line; std::getline(in, line);)
      if (line.rfind(probe_topic + " ", 0) == 0) ready_ = true;
  }
}

MqttSubscriber::~MqttSubscriber() { stop_process(pid_); }

std::vector<std::pair<std::string, std::string>> MqttSubscriber::messages() const {
  std::vector<std::pair<std::string, std::string>> received;
  gchar* contents = nullptr;
  if (!g_file_get_contents(file_.c_str(), &contents, nullptr, nullptr)) return received;
  std::string text(contents);
  g_free(contents);
  // Whole lines only: the subscriber may be writing the last one.
  for (std::size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string line = text.substr(start, end - start);
    const std::size_t space = line.find(' ');
    if (space == std::string::npos || line.compare(0, space, probe_topic_) == 0) continue;
    received.emplace_back(line.substr(0, space), line.substr(space + 1));
  }
  return received;
}

std::size_t MqttSubscriber::wait_for(std::size_t n, int timeout_s) const {
  std::size_t count = 0;
  for (int i = 0; i < timeout_s * 50 && (count = messages().size()) < n; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return count;
}

}  // namespace gsttest
