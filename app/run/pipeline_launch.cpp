#include "pipeline_launch.hpp"

#include <sstream>

namespace taconite::app {

namespace {

// Numbers as gst-launch reads them back: no locale, enough digits.
std::string number(double value) {
  std::ostringstream out;
  out.imbue(std::locale::classic());
  out.precision(17);
  out << value;
  return out.str();
}

std::string shell_quoted(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                              "_-=./:,+!@%") == std::string::npos)
    return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

std::vector<std::string> pipeline_words(const Config& config, const CameraConfig& camera) {
  // A recording: every frame analysed, in order, each embedding on its own frame (results that do not
  // depend on timing); a live camera keeps the freshest frame and never waits for the engine.
  const bool recording = camera.uri.starts_with("file://");
  std::vector<std::string> w = {"taconitecamera", "name=camera"};
  if (!camera.uri.empty()) w.push_back("uri=" + camera.uri);
  if (!camera.device.empty()) w.push_back("device=" + camera.device);
  w.push_back("stream=" + camera.name);
  w.push_back("latency=" + std::to_string(camera.latency));
  w.push_back("protocols=" + camera.protocols);
  w.push_back("timeout=" + number(camera.timeout));
  w.push_back("retry-interval=" + number(camera.retry_interval));
  if (camera.decoder_threads) w.push_back("decoder-threads=" + std::to_string(camera.decoder_threads));
  if (camera.max_rate > 0) w.push_back("max-rate=" + number(camera.max_rate));
  if (!camera.credentials_file.empty()) w.push_back("credentials-file=" + camera.credentials_file);
  if (recording) w.push_back("drop=none");
  w.insert(w.end(), {"!", "videoconvert", "!", "taconitedetect", "model=" + config.detector,
                     "interval=" + std::to_string(camera.detect_interval), "!", "taconitetrack", "!",
                     "taconiteadaface", "model=" + config.model});
  if (!config.model_proc.empty()) w.push_back("model-proc=" + config.model_proc);
  // Live: the freshest frame (max-queued=1), no embeddings nothing reads (untracked=never), one new face a frame
  // at most so a crowd arriving never holds the stream (docs/cameras.md, under load).
  w.insert(w.end(), {"backend=" + config.backend, "precision=" + config.precision, "reinfer-mode=best", "max-queued=1", "untracked=never",
                     "max-embeddings=1"});
  if (!recording) w.push_back("async-tracks=true");  // the tracks' embeddings reach their next frames
  if (!config.gallery.empty()) {
    w.insert(w.end(), {"!", "taconiteidentify", "gallery=" + config.gallery, "model=" + config.model});
    if (!config.model_proc.empty()) w.push_back("model-proc=" + config.model_proc);
    w.push_back("stream=" + camera.name);
    if (config.threshold) w.push_back("threshold=" + number(*config.threshold));
    if (config.keep_unknowns) w.push_back("keep-unknowns=true");
  }
  w.insert(w.end(), {"!", "taconitepublish", std::string("name=") + kPublishElementName, "method=bus",
                     "messages=tracks", "stream=" + camera.name, "!", "fakesink", "sync=false"});
  return w;
}

std::string gst_launch_line(const std::vector<std::string>& words) {
  std::string line = "gst-launch-1.0 -e";
  for (const std::string& word : words) line += " " + shell_quoted(word);
  return line;
}

}  // namespace taconite::app
