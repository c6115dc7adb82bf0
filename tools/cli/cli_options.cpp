#include "cli_options.hpp"

#include <charconv>
#include <filesystem>

namespace taconite::cli {

namespace {

bool parse_positive(const std::string& text, int& value) {
  int parsed = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
  if (ec != std::errc{} || end != text.data() + text.size() || parsed < 1) return false;
  value = parsed;
  return true;
}

}  // namespace

std::string usage_text(const std::string& program) {
  return "usage: " + program +
         " [--backend B] [--json] [--image FILE | --input FILE.f32] [--channel-order O] [--output FILE.f32]"
         " [--threads N] [--model-proc FILE] <bundle_dir | model.onnx> [reps]\n"
         "  --backend B    auto (default), cpu, cpu-reference, npu-direct, npu-xrt, opencv-dnn (ONNX)\n"
         "  --json         print one JSON object instead of text\n"
         "  --image FILE   embed an aligned face image (resized to the model's input, normalised as it says)\n"
         "  --channel-order O  planes --image feeds: auto (default: the bundle's param input_channel_order,\n"
         "                 else RGB), rgb, bgr\n"
         "  --input FILE   embed a raw little-endian f32 CHW tensor\n"
         "  --output FILE  write the embedding as raw f32\n"
         "  --threads N    CPU threads (default: TACONITE_THREADS, else all cores)\n"
         "  --model-proc FILE  an ONNX model's description (default: the model's path with .json);\n"
         "                 an ONNX model has no recorded input: give --image or --input\n"
         "  reps           forwards to time (default: NREPS, else 3)\n"
         "exit: 0 ok, 1 error, 2 usage, 3 MISMATCH\n";
}

ParsedCli parse_cli(const std::vector<std::string>& args, const char* nreps_env) {
  ParsedCli parsed;
  CliOptions options;
  options.program = args.empty() ? "run_ir18" : std::filesystem::path(args[0]).filename().string();
  if (nreps_env != nullptr && *nreps_env != '\0' && !parse_positive(nreps_env, options.reps)) {
    parsed.usage_error = "NREPS must be a positive integer, got '" + std::string(nreps_env) + "'";
    return parsed;
  }
  std::vector<std::string> positional;
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= args.size()) {
        parsed.usage_error = arg + " needs a value";
        return false;
      }
      out = args[++i];
      return true;
    };
    if (arg == "-h" || arg == "--help") {
      parsed.help = true;
      return parsed;
    } else if (arg == "--json") {
      options.json = true;
    } else if (arg == "--backend") {
      if (!value(options.backend)) return parsed;
    } else if (arg == "--image") {
      if (!value(options.image_path)) return parsed;
    } else if (arg == "--channel-order") {
      if (!value(options.channel_order)) return parsed;
      if (options.channel_order != "auto" && options.channel_order != "rgb" && options.channel_order != "bgr") {
        parsed.usage_error = "--channel-order must be auto, rgb or bgr, got '" + options.channel_order + "'";
        return parsed;
      }
    } else if (arg == "--model-proc") {
      if (!value(options.model_proc)) return parsed;
    } else if (arg == "--input") {
      if (!value(options.input_path)) return parsed;
    } else if (arg == "--output") {
      if (!value(options.output_path)) return parsed;
    } else if (arg == "--threads") {
      std::string text;
      if (!value(text)) return parsed;
      if (!parse_positive(text, options.threads)) {
        parsed.usage_error = "--threads must be a positive integer, got '" + text + "'";
        return parsed;
      }
    } else if (arg.size() > 1 && arg[0] == '-') {
      parsed.usage_error = "unknown option " + arg;
      return parsed;
    } else {
      positional.push_back(arg);
    }
  }
  if (!options.image_path.empty() && !options.input_path.empty()) {
    parsed.usage_error = "--image and --input are exclusive";
    return parsed;
  }
  if (positional.empty() || positional.size() > 2) {
    parsed.usage_error = positional.empty() ? "missing <bundle_dir>" : "too many arguments";
    return parsed;
  }
  options.bundle_dir = positional[0];
  if (positional.size() == 2 && !parse_positive(positional[1], options.reps)) {
    parsed.usage_error = "reps must be a positive integer, got '" + positional[1] + "'";
    return parsed;
  }
  parsed.options = options;
  return parsed;
}

}  // namespace taconite::cli
