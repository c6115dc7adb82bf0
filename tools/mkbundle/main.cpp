// taconite-mkbundle: writes an AdaFace IR test bundle with seeded, calibrated synthetic weights.
// Exit 0 on success, 1 on error (one line on stderr), 2 on usage errors.
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

#include "make_bundle.hpp"

namespace {

using namespace taconite::mkbundle;

constexpr const char* kUsage =
    "usage: taconite-mkbundle --model ir18|ir101|ir-tiny --out DIR [--seed N] [--grouping tile|whole|fixed64|uneven]\n"
    "                         [--calib-batch N] [--gain X] [--force]\n"
    "       taconite-mkbundle --network DIR --out DIR [--force]   (taconite-import's second half)\n"
    "  --network DIR    write the trained network extracted by taconite-import (network.txt/.bin) instead\n"
    "  --seed N         weights and images are a function of N (default 1)\n"
    "  --grouping G     input-channel grouping of wide convs (default tile: fit a 64 KiB compute tile)\n"
    "  --calib-batch N  random faces used to calibrate the BatchNorm statistics (default 4)\n"
    "  --gain X         gamma of every residual branch's last BatchNorm (default 0.2)\n"
    "  --force          replace the bundle files in a non-empty DIR\n";

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "taconite-mkbundle: %s\n%s", message.c_str(), kUsage);
  std::exit(2);
}

template <typename T>
T parse_number(std::string_view option, std::string_view text) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    usage_error(std::string(option) + ": '" + std::string(text) + "' is not a valid number");
  return value;
}

struct Args {
  MakeOptions make;
  std::string network_dir;  // --network: import instead of make
};

Args parse_args(int argc, char** argv) {
  Args args;
  MakeOptions& options = args.make;
  bool have_model = false, have_out = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (arg == "--force") {
      options.force = true;
      continue;
    }
    const bool takes_value = arg == "--model" || arg == "--out" || arg == "--seed" || arg == "--grouping" ||
                             arg == "--calib-batch" || arg == "--gain" || arg == "--network";
    if (!takes_value) usage_error("unknown argument '" + std::string(arg) + "'");
    if (i + 1 >= argc) usage_error("missing value for " + std::string(arg));
    const std::string_view value = argv[++i];
    if (arg == "--model") {
      const std::optional<ModelKind> model = parse_model(value);
      if (!model) usage_error("--model: unknown model '" + std::string(value) + "' (ir18, ir101, ir-tiny)");
      options.model = *model;
      have_model = true;
    } else if (arg == "--network") {
      args.network_dir = std::string(value);
      if (value.empty()) usage_error("--network needs a directory");
    } else if (arg == "--out") {
      options.out = std::string(value);
      have_out = !value.empty();
    } else if (arg == "--seed") {
      options.seed = parse_number<std::uint64_t>(arg, value);
    } else if (arg == "--grouping") {
      const std::optional<Grouping> grouping = parse_grouping(value);
      if (!grouping) usage_error("--grouping: unknown grouping '" + std::string(value) + "' (" + grouping_names() + ")");
      options.grouping = *grouping;
    } else if (arg == "--calib-batch") {
      options.calib_batch = parse_number<int>(arg, value);
      if (options.calib_batch < 1 || options.calib_batch > 256) usage_error("--calib-batch must be 1..256");
    } else if (arg == "--gain") {
      options.gain = parse_number<float>(arg, value);
      if (!(options.gain > 0.0f && options.gain <= 4.0f)) usage_error("--gain must be in (0, 4]");
    }
  }
  if (have_model == !args.network_dir.empty()) usage_error("give exactly one of --model and --network");
  if (!have_out) usage_error("--out is required");
  return args;
}

int import_main(const Args& args) {
  try {
    const ImportReport r = import_bundle(args.network_dir, args.make.out, args.make.force);
    std::printf(
        "%s: %d steps, %d conv records (%d convs), %.1f MB tensors; cosine extracted/original fp32 %.6f, "
        "bf16 replay/original fp32 %.6f, embed()/replay %.6f%s; check %.2fs, write %.2fs, replay %.2fs -> %s\n",
        r.model.c_str(), r.steps, r.conv_records, r.convs, static_cast<double>(r.tensor_bytes) / 1e6, r.cos_extraction,
        r.cos_cpu_reference, r.cos_embed_api, r.embed_api_bit_identical ? " (bit-identical)" : " (NOT bit-identical)",
        r.seconds_calibrate, r.seconds_write, r.seconds_replay, args.make.out.c_str());
    for (const std::string& d : r.diagnostics) std::fprintf(stderr, "taconite-mkbundle: warning: %s\n", d.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "taconite-mkbundle: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  if (!args.network_dir.empty()) return import_main(args);
  const MakeOptions& options = args.make;
  try {
    const MakeReport r = make_bundle(options);
    std::printf(
        "%s: %d steps, %d conv records (%d convs), %d distinct ctx, %.1f MB tensors; cosine replay/recorder %.6f, "
        "embed()/replay %.6f%s, replay/fp32 %.6f; calibrate %.2fs, write %.2fs, replay %.2fs, total %.2fs -> %s\n",
        r.model.c_str(), r.steps, r.conv_records, r.convs, r.contexts, static_cast<double>(r.tensor_bytes) / 1e6,
        r.cos_recorder, r.cos_embed_api, r.embed_api_bit_identical ? " (bit-identical)" : " (NOT bit-identical)",
        r.cos_cpu_reference, r.seconds_calibrate, r.seconds_write, r.seconds_replay, r.seconds_total,
        options.out.c_str());
    for (const std::string& d : r.diagnostics) std::fprintf(stderr, "taconite-mkbundle: warning: %s\n", d.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "taconite-mkbundle: error: %s\n", e.what());
    return 1;
  }
}
