// taconite-run's configuration: plain values, parsed and validated as a whole by load_config()
// (config_parse.hpp) before anything starts. Paths are absolute (relative ones were resolved
// against the config file's directory). Every key, its type, default and bounds: config_keys.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace taconite::app {

// One camera: the `defaults` section's values overridden by the camera's own keys.
struct CameraConfig {
  std::string name;             // [a-z0-9_-], 1..64 characters: it becomes MQTT topics and file names
  std::string uri;              // taconitecamera's uri (rtsp://, rtsps://, http(s)://, v4l2://, file://)
  std::string device;           // or a V4L2 device (/dev/videoN)
  bool enabled = true;
  unsigned detect_interval = 3;  // taconitedetect runs on one frame in N
  unsigned latency = 200;        // ms, RTSP jitter buffer
  std::string protocols = "tcp";
  double timeout = 5;            // s without a frame: a stall
  double retry_interval = 2;     // s, the longest backoff
  std::string credentials_file;
  unsigned decoder_threads = 0;
  double max_rate = 0;           // frames a second analysed at most; 0: every frame
  int line = 0;                  // where the camera is named in the file (1-based; 0: not from a file)

  bool operator==(const CameraConfig& other) const;  // every key but `line`
};

struct MqttTlsConfig {
  std::string ca_file, cert_file, key_file;
  bool operator==(const MqttTlsConfig&) const = default;
};

struct MqttConfig {
  bool enabled = false;  // the section is present
  std::string host = "127.0.0.1";
  unsigned port = 1883;
  std::string credentials_file;
  MqttTlsConfig tls;
  std::string topic_prefix = "taconite";
  std::string discovery_prefix = "homeassistant";
  std::string client_id;  // empty: "taconite-run-<hostname>" chosen by the MQTT component
  bool operator==(const MqttConfig&) const = default;
};

struct HttpConfig {
  bool enabled = false;  // the section is present
  std::string listen = "127.0.0.1:8765";
  std::string host = "127.0.0.1";  // listen split: host (IPv6 without brackets) and port
  unsigned port = 8765;
  std::string credentials_file;    // required when host is not a loopback address
  bool operator==(const HttpConfig&) const = default;
};

struct SnapshotsConfig {
  std::string dir;  // empty: no snapshots
  unsigned max_count = 1000;
  std::uint64_t max_bytes = 1ull << 30;
  unsigned max_age_days = 30;  // 0: no age limit
  unsigned jpeg_quality = 85;
  unsigned max_width = 1280;
  bool operator==(const SnapshotsConfig&) const = default;
};

struct StorageConfig {
  SnapshotsConfig snapshots;
  bool events = false;      // every track event into the gallery's database (needs `gallery`)
  std::string events_file;  // every track event appended as a JSON line; empty: none
  bool operator==(const StorageConfig&) const = default;
};

struct Config {
  std::string file;        // the config file as given
  std::string model;       // bundle directory or ONNX embedder
  std::string model_proc;  // the ONNX embedder's description; empty: beside the model
  std::string backend = "auto";
  std::string precision = "auto";  // the cpu backend's numerics: auto, f32, bf16 or int8
  std::string detector;    // YuNet ONNX
  std::string gallery;     // SQLite file or postgresql:// location; empty: no identities
  std::optional<double> threshold;  // unset: the model's
  bool keep_unknowns = true;        // taconiteidentify keep-unknowns: the web page's unknown faces
  MqttConfig mqtt;
  HttpConfig http;
  StorageConfig storage;
  CameraConfig defaults;
  std::vector<CameraConfig> cameras;  // in file order, defaults applied
};

// True when `a` and `b` build the same pipelines for the same camera config (model, backend,
// precision, detector, gallery, threshold): a change of one of these restarts every camera on SIGHUP.
bool same_pipeline_settings(const Config& a, const Config& b);

}  // namespace taconite::app
