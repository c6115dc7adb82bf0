// taconite-run's config parser: the shapes it must accept and every kind of bad input it must
// refuse with FILE:LINE: KEY: message.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "config_keys.hpp"
#include "config_parse.hpp"

namespace taconite::app {
namespace {

ConfigLoad parse(const std::string& text) { return parse_config(text, "t.yaml", "/etc/taconite"); }

std::string joined(const std::vector<std::string>& errors) {
  std::string all;
  for (const std::string& e : errors) all += e + "\n";
  return all;
}

constexpr const char* kMinimal = "model: m\ndetector: d.onnx\ncameras:\n  door1: {uri: rtsp://cam/1}\n";

TEST(Config, TheIssuesShapeIsAcceptedAsIs) {
  const ConfigLoad load = parse(R"(model: /opt/taconite/ir18            # bundle directory or ONNX embedder
detector: /opt/taconite/face_detection_yunet_2023mar.onnx
gallery: /var/lib/taconite/faces.db  # or postgresql://...
mqtt: {host: 127.0.0.1, port: 1883, topic_prefix: taconite}
http: {listen: 127.0.0.1:8765}
cameras:
  door1: {uri: rtsp://cam-door1/stream}
  door2: {uri: rtsp://cam-door2/stream}
)");
  ASSERT_TRUE(load.config) << joined(load.errors);
  const Config& c = *load.config;
  EXPECT_EQ(c.model, "/opt/taconite/ir18");
  EXPECT_EQ(c.gallery, "/var/lib/taconite/faces.db");
  EXPECT_TRUE(c.mqtt.enabled);
  EXPECT_EQ(c.mqtt.port, 1883u);
  EXPECT_EQ(c.http.host, "127.0.0.1");
  EXPECT_EQ(c.http.port, 8765u);
  ASSERT_EQ(c.cameras.size(), 2u);
  EXPECT_EQ(c.cameras[1].name, "door2");
  EXPECT_EQ(c.cameras[1].uri, "rtsp://cam-door2/stream");
  EXPECT_EQ(c.cameras[1].line, 8);
}

TEST(Config, TheShippedExampleIsValid) {
  const ConfigLoad load = load_config(TACONITE_SOURCE_DIR "/app/example.yaml");
  ASSERT_TRUE(load.config) << joined(load.errors);
  EXPECT_EQ(load.config->cameras.size(), 3u);
  EXPECT_FALSE(load.config->cameras[2].enabled);
}

TEST(Config, MalformedYamlNamesTheLine) {
  const ConfigLoad load = parse("model: m\ndetector: d\ncameras:\n  door1: {uri: rtsp://x\n  door2: [\n");
  ASSERT_FALSE(load.config);
  ASSERT_EQ(load.errors.size(), 1u);
  EXPECT_TRUE(std::regex_search(load.errors[0], std::regex("^t\\.yaml:[4-6]: "))) << load.errors[0];
}

TEST(Config, UnknownKeysAreRefusedWithASuggestion) {
  const ConfigLoad load = parse(std::string(kMinimal) + "mqtt: {hots: broker}\n" +
                                "defaults: {detect_intervall: 2}\n");
  ASSERT_FALSE(load.config);
  const std::string all = joined(load.errors);
  EXPECT_NE(all.find("t.yaml:5: mqtt.hots: unknown key (did you mean 'host'?)"), std::string::npos) << all;
  EXPECT_NE(all.find("t.yaml:6: defaults.detect_intervall: unknown key (did you mean 'detect_interval'?)"),
            std::string::npos)
      << all;
  const ConfigLoad dotted = parse(std::string(kMinimal) + "mqtt.host: broker\n");
  ASSERT_EQ(dotted.errors.size(), 1u);
  EXPECT_EQ(dotted.errors[0], "t.yaml:5: mqtt.host: unknown key (a section is a mapping: write 'mqtt: {host: ...}')");
  const ConfigLoad far = parse(std::string(kMinimal) + "zzzzzzzz: 1\n");
  ASSERT_EQ(far.errors.size(), 1u);
  EXPECT_EQ(far.errors[0], "t.yaml:5: zzzzzzzz: unknown key");  // nothing close: no suggestion
}

TEST(Config, EveryNumberIsBounded) {
  const ConfigLoad load = parse(
      "model: m\ndetector: d\nthreshold: 2\nmqtt: {port: 70000}\n"
      "storage: {snapshots: {jpeg_quality: 0, max_count: -1}}\n"
      "cameras:\n  door1: {uri: rtsp://c/1, detect_interval: 0, latency: 1e9, timeout: nan, max_rate: -2}\n");
  ASSERT_FALSE(load.config);
  const std::string all = joined(load.errors);
  for (const char* key : {"t.yaml:3: threshold: 2 is out of bounds -1..1", "t.yaml:4: mqtt.port: 70000 is out",
                          "storage.snapshots.jpeg_quality: 0 is out", "storage.snapshots.max_count: -1 is out",
                          "t.yaml:7: cameras.door1.detect_interval: 0 is out",
                          "cameras.door1.latency: expected an integer, got '1e9'",
                          "cameras.door1.timeout: expected a number, got 'nan'",
                          "cameras.door1.max_rate: -2 is out of bounds 0..1000"})
    EXPECT_NE(all.find(key), std::string::npos) << key << "\n" << all;
}

TEST(Config, CameraNamesAreRestricted) {
  const std::vector<std::string> names = {"Door1", "door/1", "door 1", "../x", "d\xc3\xa9", std::string(65, 'a')};
  for (const std::string& bad : names) {
    const ConfigLoad load = parse("model: m\ndetector: d\ncameras:\n  \"" + bad + "\": {uri: rtsp://c/1}\n");
    ASSERT_FALSE(load.config) << bad;
    EXPECT_NE(joined(load.errors).find("t.yaml:4: cameras."), std::string::npos) << joined(load.errors);
    EXPECT_NE(joined(load.errors).find("a camera name is 1 to 64 characters"), std::string::npos);
  }
  EXPECT_TRUE(parse("model: m\ndetector: d\ncameras:\n  " + std::string(64, 'a') + ": {uri: rtsp://c/1}\n").config);
}

TEST(Config, RelativePathsAreRelativeToTheFile) {
  const ConfigLoad load = parse(std::string(kMinimal) + "gallery: ../var/g.db\nstorage: {events_file: ev.jsonl}\n" +
                                "model_proc: /abs/m.json\n");
  ASSERT_TRUE(load.config) << joined(load.errors);
  EXPECT_EQ(load.config->model, "/etc/taconite/m");
  EXPECT_EQ(load.config->detector, "/etc/taconite/d.onnx");
  EXPECT_EQ(load.config->gallery, "/etc/var/g.db");
  EXPECT_EQ(load.config->storage.events_file, "/etc/taconite/ev.jsonl");
  EXPECT_EQ(load.config->model_proc, "/abs/m.json");
  const ConfigLoad pg = parse(std::string(kMinimal) + "gallery: postgresql://db/faces\n");
  ASSERT_TRUE(pg.config);
  EXPECT_EQ(pg.config->gallery, "postgresql://db/faces");
}

TEST(Config, CamerasInheritDefaultsAndOverridePerKey) {
  const ConfigLoad load = parse(
      "model: m\ndetector: d\ndefaults: {detect_interval: 5, latency: 500, protocols: udp, max_rate: 5}\n"
      "cameras:\n  a: {uri: rtsp://c/1}\n  b: {uri: rtsp://c/2, latency: 100, max_rate: 2.5}\n"
      "  c: {device: /dev/video0, enabled: false}\n");
  ASSERT_TRUE(load.config) << joined(load.errors);
  const auto& cams = load.config->cameras;
  ASSERT_EQ(cams.size(), 3u);
  EXPECT_EQ(cams[0].detect_interval, 5u);
  EXPECT_EQ(cams[0].latency, 500u);
  EXPECT_EQ(cams[1].latency, 100u);
  EXPECT_EQ(cams[1].detect_interval, 5u);
  EXPECT_EQ(cams[1].protocols, "udp");
  EXPECT_EQ(cams[2].device, "/dev/video0");
  EXPECT_FALSE(cams[2].enabled);
  EXPECT_EQ(cams[0].retry_interval, 2.0);  // neither sets it: the built-in default
  EXPECT_EQ(cams[0].max_rate, 5.0);
  EXPECT_EQ(cams[1].max_rate, 2.5);
  const ConfigLoad uri_default = parse("model: m\ndetector: d\ndefaults: {uri: rtsp://c/1}\ncameras: {a: {}}\n");
  EXPECT_NE(joined(uri_default.errors).find("t.yaml:3: defaults.uri: a camera's own key"), std::string::npos)
      << joined(uri_default.errors);
}

TEST(Config, AThousandCamerasAreRefused) {
  std::string text = "model: m\ndetector: d\ncameras:\n";
  for (int i = 0; i < 1000; ++i) text += "  cam" + std::to_string(i) + ": {uri: rtsp://c/" + std::to_string(i) + "}\n";
  const ConfigLoad load = parse(text);
  ASSERT_FALSE(load.config);
  ASSERT_EQ(load.errors.size(), 1u);
  EXPECT_EQ(load.errors[0], "t.yaml:4: cameras: 1000 cameras, at most 64");
}

TEST(Config, CameraSourcesAreChecked) {
  const ConfigLoad load = parse(
      "model: m\ndetector: d\ncameras:\n  a: {uri: rtsp://user:pw@c/1}\n  b: {uri: ftp://c/1}\n  c: {}\n"
      "  d: {uri: rtsp://c/1, device: /dev/video0}\n  e: {device: /tmp/x}\n  e: {uri: rtsp://c/2}\n");
  ASSERT_FALSE(load.config);
  const std::string all = joined(load.errors);
  for (const char* expected : {"t.yaml:4: cameras.a.uri: a user or password", "t.yaml:5: cameras.b.uri: 'ftp://c/1' "
                               "is not a camera uri", "t.yaml:6: cameras.c: needs a uri or a device",
                               "t.yaml:7: cameras.d: has both", "t.yaml:8: cameras.e.device: '/tmp/x' is not",
                               "t.yaml:9: cameras.e: given twice"})
    EXPECT_NE(all.find(expected), std::string::npos) << expected << "\n" << all;
  EXPECT_EQ(all.find("pw"), std::string::npos) << "the password is never repeated";
}

TEST(Config, RequiredKeysAndCrossChecks) {
  const ConfigLoad load =
      parse("storage: {events: true}\nhttp: {listen: 0.0.0.0:8765}\nbackend: gpu\nprecision: fp16\n");
  const std::string all = joined(load.errors);
  for (const char* expected : {"cameras: required", "model: required", "detector: required",
                               "t.yaml:1: storage.events: true needs a gallery", "t.yaml:2: http.credentials_file: "
                               "required when", "t.yaml:2: http: needs a gallery",
                               "t.yaml:3: backend: 'gpu' is not a backend",
                               "t.yaml:4: precision: 'fp16' is not a precision (auto, f32, bf16, int8)"})
    EXPECT_NE(all.find(expected), std::string::npos) << expected << "\n" << all;
  const ConfigLoad int8 = parse(std::string(kMinimal) + "precision: int8\n");
  ASSERT_TRUE(int8.config) << joined(int8.errors);
  EXPECT_EQ(int8.config->precision, "int8");
  const ConfigLoad listen = parse(std::string(kMinimal) + "gallery: faces.db\nhttp: {listen: '[::1]:9000'}\n");
  ASSERT_TRUE(listen.config) << joined(listen.errors);
  EXPECT_EQ(listen.config->http.host, "::1");
  EXPECT_EQ(listen.config->http.port, 9000u);
  EXPECT_FALSE(parse(std::string(kMinimal) + "http: {listen: 8765}\n").config);
  EXPECT_FALSE(parse(std::string(kMinimal) + "mqtt: {topic_prefix: 'a/#'}\n").config);
}

TEST(Config, HostileFilesGetAnErrorNotACrash) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "taconite-config-test";
  std::filesystem::create_directories(dir);
  const std::filesystem::path big = dir / "big.yaml";
  std::ofstream(big) << std::string(kMaxConfigBytes + 1, '#');
  const ConfigLoad load = load_config(big.string());
  ASSERT_EQ(load.errors.size(), 1u);
  EXPECT_NE(load.errors[0].find("a config is at most 1048576"), std::string::npos) << load.errors[0];
  EXPECT_FALSE(load_config((dir / "absent.yaml").string()).config);
  // Deep nesting stops at yaml-cpp's depth guard with an error.
  EXPECT_FALSE(parse("model: " + std::string(100000, '[')).config);
  EXPECT_FALSE(parse("- 1\n- 2\n").config);
  EXPECT_FALSE(parse("model: m\nmodel: n\ndetector: d\ncameras: {a: {uri: rtsp://c/1}}\n").config);  // twice
  // Aliases nesting 10^10 strings (billion laughs) are refused without being expanded.
  std::string laughs = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i < 10; ++i) {
    laughs += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) laughs += (j ? ", *a" : "*a") + std::to_string(i - 1);
    laughs += "]\n";
  }
  const ConfigLoad bomb = parse(laughs + "model: *a9\ndetector: d\ncameras: {x: *a9}\n");
  ASSERT_FALSE(bomb.config);
  EXPECT_NE(joined(bomb.errors).find("model: expected a string, got a list"), std::string::npos);
  // Many errors: bounded, with the count of those left out.
  std::string text = "model: m\ndetector: d\ncameras:\n";
  for (int i = 0; i < 60; ++i) text += "  c" + std::to_string(i) + ": {uri: x}\n";
  const ConfigLoad many = parse(text);
  ASSERT_EQ(many.errors.size(), kMaxErrors + 1);
  EXPECT_NE(many.errors.back().find("more errors not shown"), std::string::npos);
}

TEST(Config, MissingFilesAreListedWithTheirKey) {
  const ConfigLoad load = parse_config(std::string(kMinimal) + "gallery: /nonexistent-dir/g.db\n", "t.yaml", "/tmp");
  ASSERT_TRUE(load.config);
  const std::string all = joined(load.missing_files);
  EXPECT_NE(all.find("t.yaml:1: model: /tmp/m does not exist"), std::string::npos) << all;
  EXPECT_NE(all.find("t.yaml:5: gallery: /nonexistent-dir does not exist"), std::string::npos) << all;
}

// docs/app.md's config reference lists exactly config_keys(): one table row per key, `key` first.
TEST(Config, TheDocsReferenceListsExactlyTheParsersKeys) {
  std::ifstream in(TACONITE_SOURCE_DIR "/docs/app.md");
  ASSERT_TRUE(in) << "docs/app.md is missing";
  std::string line;
  bool in_reference = false;
  std::set<std::string> documented;
  const std::regex row("^\\| `([^`]+)` \\|");
  while (std::getline(in, line)) {
    if (line.starts_with("## ")) in_reference = line == "## Configuration reference";
    std::smatch m;
    if (in_reference && std::regex_search(line, m, row)) {
      EXPECT_TRUE(documented.insert(m[1]).second) << m[1];
    }
  }
  std::set<std::string> parsed;
  for (const ConfigKey& key : config_keys()) parsed.insert(std::string(key.path));
  EXPECT_EQ(documented, parsed);
}

}  // namespace
}  // namespace taconite::app
