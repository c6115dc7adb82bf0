#include "config_keys.hpp"

#include <string>

namespace taconite::app {

namespace {

using K = KeyType;

const std::vector<ConfigKey> kKeys = {
    {"model", K::Path, "(required)", 0, 0, "IRON bundle directory or ONNX face embedder"},
    {"model_proc", K::Path, "beside the model", 0, 0, "the ONNX embedder's description (taconite-embedder/1)"},
    {"backend", K::String, "auto", 0, 0, "auto, cpu, cpu-reference, npu-direct, npu-xrt or opencv-dnn"},
    {"precision", K::String, "auto", 0, 0, "the cpu backend's numerics: auto, f32, bf16 or int8 (faster, ~0.997 of f32)"},
    {"detector", K::Path, "(required)", 0, 0, "the YuNet face detector (face_detection_yunet_2023mar.onnx)"},
    {"gallery", K::Path, "none", 0, 0, "SQLite gallery file or postgresql:// location; none: faces are not named"},
    {"threshold", K::Number, "the model's", -1, 1, "similarity at which a face is a gallery identity"},
    {"keep_unknowns", K::Boolean, "true", 0, 0, "each track that ends unknown keeps its best face in the gallery for review"},
    {"mqtt", K::Section, "none", 0, 0, "Home Assistant over MQTT; absent: no MQTT"},
    {"mqtt.host", K::String, "127.0.0.1", 0, 0, "the broker"},
    {"mqtt.port", K::Integer, "1883", 1, 65535, "the broker's port"},
    {"mqtt.credentials_file", K::Path, "none", 0, 0, "user name line, password line (chmod 600)"},
    {"mqtt.tls", K::Section, "none", 0, 0, "TLS to the broker"},
    {"mqtt.tls.ca_file", K::Path, "none", 0, 0, "PEM CA that signed the broker's certificate"},
    {"mqtt.tls.cert_file", K::Path, "none", 0, 0, "PEM client certificate"},
    {"mqtt.tls.key_file", K::Path, "none", 0, 0, "PEM key of cert_file"},
    {"mqtt.topic_prefix", K::String, "taconite", 0, 0, "first level of every topic"},
    {"mqtt.discovery_prefix", K::String, "homeassistant", 0, 0, "Home Assistant's discovery prefix"},
    {"mqtt.client_id", K::String, "taconite-run-HOSTNAME", 0, 0, "the MQTT client id"},
    {"http", K::Section, "none", 0, 0, "the web page; absent: none"},
    {"http.listen", K::String, "127.0.0.1:8765", 0, 0, "HOST:PORT ([V6]:PORT) the page is served on"},
    {"http.credentials_file", K::Path, "none", 0, 0, "user name line, password line; required beyond loopback"},
    {"storage", K::Section, "none", 0, 0, "what is kept on disk"},
    {"storage.snapshots", K::Section, "none", 0, 0, "full-frame JPEGs of the tracks"},
    {"storage.snapshots.dir", K::Path, "none", 0, 0, "where snapshots go; none: no snapshots"},
    {"storage.snapshots.max_count", K::Integer, "1000", 1, 10000000, "snapshots kept at most"},
    {"storage.snapshots.max_bytes", K::Integer, "1073741824", 1, 1e13, "bytes of snapshots kept at most"},
    {"storage.snapshots.max_age_days", K::Integer, "30", 0, 3650, "older snapshots are deleted; 0: no limit"},
    {"storage.snapshots.jpeg_quality", K::Integer, "85", 1, 100, "JPEG quality"},
    {"storage.snapshots.max_width", K::Integer, "1280", 64, 7680, "wider frames are scaled down"},
    {"storage.events", K::Boolean, "false", 0, 0, "every track event into the gallery's database (needs gallery)"},
    {"storage.events_file", K::Path, "none", 0, 0, "every track event appended as a JSON line"},
    {"defaults", K::Section, "none", 0, 0, "camera keys every camera inherits (not uri, device)"},
    {"cameras", K::CameraMap, "(required)", 0, 0, "NAME: {camera keys}; at most 64 cameras"},
    {"cameras.<name>.uri", K::String, "none", 0, 0, "rtsp://, rtsps://, http(s)://, v4l2:///dev/videoN, file:///path"},
    {"cameras.<name>.device", K::Path, "none", 0, 0, "a V4L2 device, instead of uri"},
    {"cameras.<name>.enabled", K::Boolean, "true", 0, 0, "false: the camera is not run"},
    {"cameras.<name>.detect_interval", K::Integer, "3", 1, 1000, "the detector runs on one frame in N"},
    {"cameras.<name>.latency", K::Integer, "200", 0, 60000, "RTSP jitter buffer, ms"},
    {"cameras.<name>.protocols", K::String, "tcp", 0, 0, "RTSP transport: tcp, udp or auto"},
    {"cameras.<name>.timeout", K::Number, "5", 0.5, 3600, "seconds without a frame before a restart"},
    {"cameras.<name>.retry_interval", K::Number, "2", 0.1, 3600, "longest wait between attempts, s"},
    {"cameras.<name>.credentials_file", K::Path, "none", 0, 0, "user name line, password line (chmod 600)"},
    {"cameras.<name>.decoder_threads", K::Integer, "0", 0, 64, "libav decoder threads; 0: one per core"},
    {"cameras.<name>.max_rate", K::Number, "0", 0, 1000,
     "frames a second analysed at most (the rest skipped); 0: every frame"},
};

constexpr std::string_view kCameraPrefix = "cameras.<name>.";

}  // namespace

const std::vector<ConfigKey>& config_keys() { return kKeys; }

const ConfigKey* find_config_key(std::string_view path) {
  std::string wanted(path);
  if (path.starts_with("defaults.")) {
    const std::string_view key = path.substr(std::string_view("defaults.").size());
    if (key == "uri" || key == "device") return nullptr;
    wanted = std::string(kCameraPrefix) + std::string(key);
  } else if (path.starts_with("cameras.")) {  // cameras.NAME.KEY: NAME is any camera's
    const std::size_t dot = path.find('.', std::string_view("cameras.").size());
    if (dot == std::string_view::npos) return nullptr;
    wanted = std::string(kCameraPrefix) + std::string(path.substr(dot + 1));
  }
  for (const ConfigKey& key : kKeys)
    if (key.path == wanted) return &key;
  return nullptr;
}

std::string_view key_type_name(KeyType type) {
  switch (type) {
    case KeyType::String: return "string";
    case KeyType::Path: return "path";
    case KeyType::Boolean: return "boolean";
    case KeyType::Integer: return "integer";
    case KeyType::Number: return "number";
    case KeyType::Section: return "section";
    case KeyType::CameraMap: return "map of cameras";
  }
  return "?";
}

}  // namespace taconite::app
