#include "config_parse.hpp"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "config_keys.hpp"
#include "config_scalars.hpp"

namespace taconite::app {

bool CameraConfig::operator==(const CameraConfig& o) const {
  return name == o.name && uri == o.uri && device == o.device && enabled == o.enabled &&
         detect_interval == o.detect_interval && latency == o.latency && protocols == o.protocols &&
         timeout == o.timeout && retry_interval == o.retry_interval && credentials_file == o.credentials_file &&
         decoder_threads == o.decoder_threads && max_rate == o.max_rate;
}

bool same_pipeline_settings(const Config& a, const Config& b) {
  return a.model == b.model && a.model_proc == b.model_proc && a.backend == b.backend && a.precision == b.precision &&
         a.detector == b.detector &&
         a.gallery == b.gallery && a.threshold == b.threshold && a.keep_unknowns == b.keep_unknowns;
}

bool valid_camera_name(const std::string& name) {
  if (name.empty() || name.size() > kMaxCameraName) return false;
  return name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") == std::string::npos;
}

namespace {

const std::set<std::string> kBackends = {"auto", "cpu", "cpu-reference", "npu-direct", "npu-xrt", "opencv-dnn"};
const std::set<std::string> kPrecisions = {"auto", "f32", "bf16", "int8"};
const std::set<std::string> kProtocols = {"tcp", "udp", "auto"};
const std::vector<std::string> kUriSchemes = {"rtsp://", "rtsps://", "http://", "https://", "v4l2://", "file://"};

int line_of(const YAML::Node& node) { return node.Mark().line >= 0 ? node.Mark().line + 1 : 0; }

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Scalar: return "'" + node.Scalar().substr(0, 64) + "'";
    default: return "an undefined value";
  }
}

class Parser {
 public:
  Parser(std::string file, std::string base_dir) : file_(std::move(file)), base_(std::move(base_dir)) {}

  ConfigLoad parse(const std::string& text) {
    config_.file = file_;
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::Exception& e) {  // malformed YAML, also nesting beyond yaml-cpp's depth guard
      errors_.push_back(file_ + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
      return result();
    }
    if (!root.IsMap()) {
      add(root, "", "the config must be a mapping of keys (model, detector, cameras, ...), not " + describe(root));
      return result();
    }
    read_map(root, "", [this](const std::string& key, const YAML::Node& value, const ConfigKey& info) {
      read_top(key, value, info);
    });
    finish();
    return result();
  }

 private:
  using KeyReader = std::function<void(const std::string& path, const YAML::Node& value, const ConfigKey& info)>;

  ConfigLoad result() {
    ConfigLoad load;
    if (errors_.size() > kMaxErrors) {
      const std::size_t more = errors_.size() - kMaxErrors;
      errors_.resize(kMaxErrors);
      errors_.push_back(file_ + ": " + std::to_string(more) + " more errors not shown");
    }
    load.errors = std::move(errors_);
    if (load.errors.empty()) load.config = std::move(config_);
    load.missing_files = std::move(missing_);
    return load;
  }

  void add(const YAML::Node& node, const std::string& key, const std::string& message) {
    if (errors_.size() > kMaxErrors) return;  // one more than shown: result() says how many were left out
    add_at(line_of(node), key, message);
  }
  void add_at(int line, const std::string& key, const std::string& message) {
    if (errors_.size() > kMaxErrors) return;
    errors_.push_back(file_ + ":" + std::to_string(line) + ": " + (key.empty() ? "" : key + ": ") + message);
  }

  // Every key of `node` (a mapping) is looked up under `prefix`; unknown and repeated keys are errors.
  void read_map(const YAML::Node& node, const std::string& prefix, const KeyReader& reader) {
    if (!node.IsMap()) {
      add(node, prefix, "expected a mapping of keys, got " + describe(node));
      return;
    }
    std::set<std::string> seen;
    for (const auto& entry : node) {
      const YAML::Node& key_node = entry.first;
      if (!key_node.IsScalar()) {
        add(key_node, prefix, "a key must be a plain name, got " + describe(key_node));
        continue;
      }
      const std::string key = key_node.Scalar();
      const std::string path = prefix.empty() ? key : prefix + "." + key;
      // A dotted key ("mqtt.host: x") is no key: sections are written as mappings.
      const ConfigKey* info = key.find('.') == std::string::npos ? find_config_key(path) : nullptr;
      if (!info) {
        unknown_key(key_node, prefix, key);
        continue;
      }
      if (!seen.insert(key).second) {
        add(key_node, path, "given twice");
        continue;
      }
      reader(path, entry.second, *info);
    }
  }

  void unknown_key(const YAML::Node& node, const std::string& prefix, const std::string& key) {
    std::vector<std::string> siblings;
    const std::string parent = prefix.starts_with("defaults") ? std::string("cameras.<name>")
                               : prefix.starts_with("cameras.") ? std::string("cameras.<name>")
                                                                : prefix;
    for (const ConfigKey& k : config_keys()) {
      const std::string path(k.path);
      const std::size_t dot = path.rfind('.');
      const std::string k_parent = dot == std::string::npos ? "" : path.substr(0, dot);
      if (k_parent != parent) continue;
      const std::string name = path.substr(dot == std::string::npos ? 0 : dot + 1);
      if (prefix == "defaults" && (name == "uri" || name == "device")) continue;
      siblings.push_back(name);
    }
    const std::string shown = key.size() > 64 ? key.substr(0, 64) + "..." : key;
    const std::string path = prefix.empty() ? shown : prefix + "." + shown;
    const std::string suggestion = closest_name(key, siblings);
    std::string message = "unknown key";
    if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
    if (key.find('.') != std::string::npos && find_config_key(path))
      message = "unknown key (a section is a mapping: write '" + key.substr(0, key.find('.')) + ": {" +
                key.substr(key.find('.') + 1) + ": ...}')";
    if (prefix == "defaults" && (key == "uri" || key == "device")) message = "a camera's own key, not a default";
    add(node, path, message);
  }

  std::optional<std::string> string_value(const YAML::Node& value, const std::string& path) {
    if (!value.IsScalar()) {
      add(value, path, "expected a string, got " + describe(value));
      return std::nullopt;
    }
    const std::string& text = value.Scalar();
    if (text.empty()) {
      add(value, path, "must not be empty");
      return std::nullopt;
    }
    if (text.size() > kMaxStringBytes) {
      add(value, path, std::to_string(text.size()) + " bytes long, at most " + std::to_string(kMaxStringBytes));
      return std::nullopt;
    }
    if (text.find('\0') != std::string::npos || text.find('\n') != std::string::npos) {
      add(value, path, "must be one line without NUL characters");
      return std::nullopt;
    }
    return text;
  }

  std::optional<std::string> path_value(const YAML::Node& value, const std::string& path) {
    std::optional<std::string> text = string_value(value, path);
    if (!text) return std::nullopt;
    return resolve_path(*text, base_);
  }

  std::optional<double> bounded_number(const YAML::Node& value, const std::string& path, const ConfigKey& info) {
    const bool integer = info.type == KeyType::Integer;
    std::optional<double> number;
    if (value.IsScalar()) {
      if (integer) {
        if (const std::optional<long long> i = parse_integer(value.Scalar())) number = static_cast<double>(*i);
      } else {
        number = parse_number(value.Scalar());
      }
    }
    if (!number) {
      add(value, path, std::string("expected ") + (integer ? "an integer" : "a number") + ", got " + describe(value));
      return std::nullopt;
    }
    if (*number < info.min || *number > info.max) {
      std::ostringstream bounds;
      bounds << info.min << ".." << info.max;
      add(value, path, value.Scalar() + " is out of bounds " + bounds.str());
      return std::nullopt;
    }
    return number;
  }

  std::optional<bool> boolean_value(const YAML::Node& value, const std::string& path) {
    std::optional<bool> b = value.IsScalar() ? parse_boolean(value.Scalar()) : std::nullopt;
    if (!b) add(value, path, "expected true or false, got " + describe(value));
    return b;
  }

  template <typename T>
  void set_number(T& field, const YAML::Node& value, const std::string& path, const ConfigKey& info) {
    if (std::optional<double> n = bounded_number(value, path, info)) field = static_cast<T>(*n);
  }
  void set_string(std::string& field, const YAML::Node& value, const std::string& path) {
    if (std::optional<std::string> s = string_value(value, path)) field = std::move(*s);
  }
  void set_path(std::string& field, const YAML::Node& value, const std::string& path) {
    if (std::optional<std::string> s = path_value(value, path)) field = std::move(*s);
  }

  void read_top(const std::string& key, const YAML::Node& value, const ConfigKey& info) {
    Config& c = config_;
    top_.insert(key);
    if (key == "model") {
      set_path(c.model, value, key);
      if (!c.model.empty()) file_lines_.emplace_back(key, line_of(value), c.model);
    } else if (key == "model_proc") {
      set_path(c.model_proc, value, key);
      if (!c.model_proc.empty()) file_lines_.emplace_back(key, line_of(value), c.model_proc);
    } else if (key == "backend") {
      set_string(c.backend, value, key);
      if (!kBackends.contains(c.backend)) {
        add(value, key, "'" + c.backend + "' is not a backend (auto, cpu, cpu-reference, npu-direct, npu-xrt, "
                                          "opencv-dnn)");
      }
    } else if (key == "precision") {
      set_string(c.precision, value, key);
      if (!kPrecisions.contains(c.precision))
        add(value, key, "'" + c.precision + "' is not a precision (auto, f32, bf16, int8)");
    } else if (key == "detector") {
      set_path(c.detector, value, key);
      if (!c.detector.empty()) file_lines_.emplace_back(key, line_of(value), c.detector);
    } else if (key == "gallery") {
      std::optional<std::string> text = string_value(value, key);
      if (!text) return;
      c.gallery = is_postgres_location(*text) ? *text : resolve_path(*text, base_);
      if (!is_postgres_location(*text)) {  // an SQLite file may be created, its directory must be there
        file_lines_.emplace_back(key, line_of(value), std::filesystem::path(c.gallery).parent_path().string());
      }
    } else if (key == "threshold") {
      if (std::optional<double> n = bounded_number(value, key, info)) c.threshold = *n;
    } else if (key == "keep_unknowns") {
      if (std::optional<bool> b = boolean_value(value, key)) c.keep_unknowns = *b;
    } else if (key == "mqtt") {
      c.mqtt.enabled = true;
      if (!value.IsNull()) read_map(value, key, [this](auto& p, auto& v, auto& i) { read_mqtt(p, v, i); });
    } else if (key == "http") {
      c.http.enabled = true;
      if (!value.IsNull()) read_map(value, key, [this](auto& p, auto& v, auto& i) { read_http(p, v, i); });
      http_line_ = line_of(value);
    } else if (key == "storage") {
      if (!value.IsNull()) read_map(value, key, [this](auto& p, auto& v, auto& i) { read_storage(p, v, i); });
    } else if (key == "defaults") {
      if (!value.IsNull()) {
        read_map(value, key, [this](auto& p, auto& v, auto& i) { read_camera_key(config_.defaults, p, v, i); });
      }
    } else if (key == "cameras") {
      cameras_node_.emplace(value);
    }
  }

  void read_mqtt(const std::string& path, const YAML::Node& value, const ConfigKey& info) {
    MqttConfig& m = config_.mqtt;
    if (path == "mqtt.host") set_string(m.host, value, path);
    else if (path == "mqtt.port") set_number(m.port, value, path, info);
    else if (path == "mqtt.credentials_file") set_file(m.credentials_file, value, path);
    else if (path == "mqtt.topic_prefix") set_topic(m.topic_prefix, value, path);
    else if (path == "mqtt.discovery_prefix") set_topic(m.discovery_prefix, value, path);
    else if (path == "mqtt.client_id") set_string(m.client_id, value, path);
    else if (path == "mqtt.tls" && !value.IsNull())
      read_map(value, path, [this](const std::string& p, const YAML::Node& v, const ConfigKey&) {
        MqttTlsConfig& tls = config_.mqtt.tls;
        set_file(p == "mqtt.tls.ca_file" ? tls.ca_file : p == "mqtt.tls.cert_file" ? tls.cert_file : tls.key_file, v,
                 p);
      });
    if (path == "mqtt.client_id" && m.client_id.size() > 256) add(value, path, "at most 256 characters");
  }

  void set_file(std::string& field, const YAML::Node& value, const std::string& path) {
    set_path(field, value, path);
    if (!field.empty()) file_lines_.emplace_back(path, line_of(value), field);
  }

  // One or more MQTT topic levels: no wildcards, no empty level.
  void set_topic(std::string& field, const YAML::Node& value, const std::string& path) {
    std::optional<std::string> text = string_value(value, path);
    if (!text) return;
    if (text->find_first_of("+#") != std::string::npos || text->front() == '/' || text->back() == '/' ||
        text->find("//") != std::string::npos || text->size() > 256) {
      add(value, path, "'" + *text + "' is not a topic prefix (levels separated by '/', no empty level, no + or #, "
                                     "at most 256 characters)");
      return;
    }
    field = *text;
  }

  void read_http(const std::string& path, const YAML::Node& value, const ConfigKey&) {
    HttpConfig& h = config_.http;
    if (path == "http.credentials_file") {
      set_file(h.credentials_file, value, path);
      return;
    }
    std::optional<std::string> text = string_value(value, path);
    if (!text) return;
    h.listen = *text;
    const std::size_t colon = text->rfind(':');
    std::string host = colon == std::string::npos ? "" : text->substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    const std::optional<long long> port = colon == std::string::npos ? std::nullopt
                                                                    : parse_integer(text->substr(colon + 1));
    if (host.empty() || !port || *port < 1 || *port > 65535 ||
        (host.find(':') != std::string::npos && text->front() != '[')) {
      add(value, path, "'" + *text + "' is not HOST:PORT (an IPv6 address in brackets: [::1]:8765; port 1..65535)");
      return;
    }
    h.host = host;
    h.port = static_cast<unsigned>(*port);
  }

  void read_storage(const std::string& path, const YAML::Node& value, const ConfigKey& info) {
    StorageConfig& s = config_.storage;
    if (path == "storage.events") {
      if (std::optional<bool> b = boolean_value(value, path)) s.events = *b;
      events_line_ = line_of(value);
    } else if (path == "storage.events_file") {
      set_path(s.events_file, value, path);
      if (!s.events_file.empty())
        file_lines_.emplace_back(path, line_of(value), std::filesystem::path(s.events_file).parent_path().string());
    } else if (path == "storage.snapshots" && !value.IsNull()) {
      read_map(value, path, [this](const std::string& p, const YAML::Node& v, const ConfigKey& i) {
        SnapshotsConfig& n = config_.storage.snapshots;
        if (p == "storage.snapshots.dir") set_path(n.dir, v, p);
        else if (p == "storage.snapshots.max_count") set_number(n.max_count, v, p, i);
        else if (p == "storage.snapshots.max_bytes") set_number(n.max_bytes, v, p, i);
        else if (p == "storage.snapshots.max_age_days") set_number(n.max_age_days, v, p, i);
        else if (p == "storage.snapshots.jpeg_quality") set_number(n.jpeg_quality, v, p, i);
        else if (p == "storage.snapshots.max_width") set_number(n.max_width, v, p, i);
      });
    }
    (void)info;
  }

  void read_camera_key(CameraConfig& camera, const std::string& path, const YAML::Node& value,
                       const ConfigKey& info) {
    const std::string key = path.substr(path.rfind('.') + 1);
    if (key == "uri") {
      set_string(camera.uri, value, path);
      check_uri(camera, value, path);
    } else if (key == "device") {
      set_path(camera.device, value, path);
      if (!camera.device.empty() && !camera.device.starts_with("/dev/"))
        add(value, path, "'" + camera.device + "' is not a device under /dev/");
    } else if (key == "enabled") {
      if (std::optional<bool> b = boolean_value(value, path)) camera.enabled = *b;
    } else if (key == "detect_interval") {
      set_number(camera.detect_interval, value, path, info);
    } else if (key == "latency") {
      set_number(camera.latency, value, path, info);
    } else if (key == "protocols") {
      set_string(camera.protocols, value, path);
      if (!kProtocols.contains(camera.protocols))
        add(value, path, "'" + camera.protocols + "' is not tcp, udp or auto");
    } else if (key == "timeout") {
      set_number(camera.timeout, value, path, info);
    } else if (key == "retry_interval") {
      set_number(camera.retry_interval, value, path, info);
    } else if (key == "credentials_file") {
      set_file(camera.credentials_file, value, path);
    } else if (key == "decoder_threads") {
      set_number(camera.decoder_threads, value, path, info);
    } else if (key == "max_rate") {
      set_number(camera.max_rate, value, path, info);
    }
  }

  void check_uri(CameraConfig& camera, const YAML::Node& value, const std::string& path) {
    const std::string& uri = camera.uri;
    if (uri.empty()) return;
    bool known = false;
    for (const std::string& scheme : kUriSchemes) known = known || uri.starts_with(scheme);
    if (!known) {
      add(value, path, "'" + uri.substr(0, 64) + "' is not a camera uri (rtsp://, rtsps://, http://, https://, "
                                                   "v4l2:///dev/videoN or file:///path)");
      return;
    }
    const std::size_t authority = uri.find("://") + 3;
    const std::size_t end = uri.find('/', authority);
    if (uri.substr(authority, end == std::string::npos ? std::string::npos : end - authority).find('@') !=
        std::string::npos) {
      add(value, path, "a user or password in the uri would show in logs: put them in credentials_file");
      camera.uri.clear();
      return;
    }
    if (uri.starts_with("file://")) {
      if (!uri.starts_with("file:///")) {
        add(value, path, "a file uri needs an absolute path: file:///path");
        return;
      }
      file_lines_.emplace_back(path, line_of(value), uri.substr(7));
    }
  }

  void read_cameras() {
    const YAML::Node& node = *cameras_node_;
    if (!node.IsMap()) {
      add(node, "cameras", "expected a mapping of camera names, got " + describe(node));
      return;
    }
    if (node.size() > kMaxCameras) {
      add(node, "cameras", std::to_string(node.size()) + " cameras, at most " + std::to_string(kMaxCameras));
      return;
    }
    std::set<std::string> seen;
    for (const auto& entry : node) {
      const YAML::Node& key = entry.first;
      const std::string name = key.IsScalar() ? key.Scalar() : std::string();
      const std::string shown = name.size() > 64 ? name.substr(0, 64) + "..." : name;
      if (!valid_camera_name(name)) {
        add(key, "cameras." + shown, "a camera name is 1 to 64 characters of a-z, 0-9, _ and - (it names MQTT "
                                     "topics and files)");
        continue;
      }
      if (!seen.insert(name).second) {
        add(key, "cameras." + name, "given twice");
        continue;
      }
      CameraConfig camera = config_.defaults;
      camera.name = name;
      camera.line = line_of(key);
      const std::string prefix = "cameras." + name;
      if (!entry.second.IsNull()) {
        read_map(entry.second, prefix,
                 [this, &camera](const std::string& path, const YAML::Node& value, const ConfigKey& info) {
                   read_camera_key(camera, path, value, info);
                 });
      }
      if (camera.uri.empty() == camera.device.empty()) {
        add(key, prefix, camera.uri.empty() ? "needs a uri or a device" : "has both uri and device: set one");
      }
      config_.cameras.push_back(std::move(camera));
    }
  }

  void finish() {
    if (!cameras_node_) {
      add_at(1, "cameras", "required: at least one camera");
    } else {
      read_cameras();
      if (cameras_node_->IsMap() && cameras_node_->size() == 0) add(*cameras_node_, "cameras", "no camera");
    }
    if (!top_.contains("model")) add_at(1, "model", "required: a bundle directory or ONNX embedder");
    if (!top_.contains("detector"))
      add_at(1, "detector", "required: the YuNet model (face_detection_yunet_2023mar.onnx)");
    if (config_.storage.events && config_.gallery.empty())
      add_at(events_line_, "storage.events", "true needs a gallery: the history is kept in the gallery's database");
    const HttpConfig& http = config_.http;
    if (http.enabled && config_.gallery.empty())
      add_at(http_line_, "http", "needs a gallery: the web page is the gallery's face library");
    if (http.enabled && !is_loopback_host(http.host) && http.credentials_file.empty()) {
      add_at(http_line_, "http.credentials_file",
          "required when http.listen (" + http.listen + ") is not a loopback address: the page changes the gallery");
    }
    for (const auto& [key, line, file] : file_lines_) {
      std::error_code error;
      if (!std::filesystem::exists(file, error))
        missing_.push_back(file_ + ":" + std::to_string(line) + ": " + key + ": " + file + " does not exist");
    }
  }

  std::string file_, base_;
  Config config_;
  std::vector<std::string> errors_;
  std::vector<std::string> missing_;
  std::vector<std::tuple<std::string, int, std::string>> file_lines_;  // key, line, a file that must exist
  std::optional<YAML::Node> cameras_node_;
  std::set<std::string> top_;  // the top-level keys given
  int events_line_ = 0, http_line_ = 0;
};

}  // namespace

ConfigLoad parse_config(const std::string& text, const std::string& file, const std::string& base_dir) {
  try {
    return Parser(file, base_dir).parse(text);
  } catch (const std::exception& e) {  // bad_alloc, or a yaml-cpp surprise: still an error, not a crash
    ConfigLoad load;
    load.errors.push_back(file + ": could not be read: " + e.what());
    return load;
  }
}

ConfigLoad load_config(const std::string& path) {
  ConfigLoad load;
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  if (error) {
    load.errors.push_back(path + ": cannot be read: " + error.message());
    return load;
  }
  if (size > kMaxConfigBytes) {
    load.errors.push_back(path + ": " + std::to_string(size) + " bytes, a config is at most " +
                          std::to_string(kMaxConfigBytes));
    return load;
  }
  std::ifstream in(path, std::ios::binary);
  std::string text(static_cast<std::size_t>(size), '\0');
  if (!in || !in.read(text.data(), static_cast<std::streamsize>(text.size()))) {
    load.errors.push_back(path + ": cannot be read");
    return load;
  }
  const std::string base = std::filesystem::absolute(std::filesystem::path(path), error).parent_path().string();
  return parse_config(text, path, base);
}

}  // namespace taconite::app
