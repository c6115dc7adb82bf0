// Command line of run_ir18 / run_ir101 (one program, two names, as IRON ships them).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace taconite::cli {

struct CliOptions {
  std::string program;        // basename of argv[0]
  std::string backend = "auto";
  bool json = false;
  std::string image_path;     // --image: an aligned face image (any OpenCV-readable format)
  std::string input_path;     // --input: raw little-endian f32 CHW
  std::string channel_order = "auto";  // --channel-order for --image: auto (the bundle's), rgb, bgr
  std::string output_path;    // --output: the embedding as raw f32
  int threads = 0;
  std::string bundle_dir;     // a bundle directory or an ONNX file
  std::string model_proc;     // --model-proc: an ONNX model's description (default beside it)
  int reps = 3;
};

// Returns the options, or an error message for a usage error (exit 2).
struct ParsedCli {
  std::optional<CliOptions> options;
  std::string usage_error;
  bool help = false;
};

ParsedCli parse_cli(const std::vector<std::string>& args, const char* nreps_env);
std::string usage_text(const std::string& program);

}  // namespace taconite::cli
