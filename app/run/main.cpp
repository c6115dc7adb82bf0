// taconite-run CONFIG: every camera of a YAML config through the elements, in one process
// (docs/app.md). --check validates, --print shows the pipelines, --once ends with the recordings.
#include <glib-unix.h>
#include <gst/gst.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "components.hpp"
#include "config_parse.hpp"
#include "pipeline_launch.hpp"
#include "run_log.hpp"
#include "runner.hpp"

namespace {

using namespace taconite::app;

constexpr const char* kUsage =
    "usage: taconite-run [--check | --print | --once] CONFIG\n"
    "  Runs every enabled camera of the YAML config CONFIG (docs/app.md) until SIGTERM or SIGINT;\n"
    "  SIGHUP re-reads CONFIG and restarts only the cameras whose config changed.\n"
    "  --check  validate CONFIG only: exit 0, or 2 with every error (FILE:LINE: KEY: message)\n"
    "  --print  print each enabled camera's pipeline as a gst-launch-1.0 line, run nothing\n"
    "  --once   exit when every camera has ended (file:// recordings), 1 if one failed\n";

struct Args {
  enum class Mode { Run, Check, Print } mode = Mode::Run;
  bool once = false;
  std::string config;
};

bool parse_args(int argc, char** argv, Args& args) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--check") args.mode = Args::Mode::Check;
    else if (arg == "--print") args.mode = Args::Mode::Print;
    else if (arg == "--once") args.once = true;
    else if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (!arg.starts_with("-") && args.config.empty()) args.config = arg;
    else return false;
  }
  return !args.config.empty();
}

// Run from the build tree (build/app/run/taconite-run), the plugin built beside it is used.
void use_build_tree_plugin() {
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return;
  const std::filesystem::path plugin_dir = exe.parent_path().parent_path().parent_path() / "gst" / "plugin";
  if (!std::filesystem::exists(plugin_dir / "libgsttaconite.so", error)) return;
  const char* old = std::getenv("GST_PLUGIN_PATH");
  const std::string path = plugin_dir.string() + (old && *old ? std::string(":") + old : "");
  setenv("GST_PLUGIN_PATH", path.c_str(), 1);
}

struct SignalContext {
  Runner* runner;
  std::string config_path;
};

gboolean on_stop_signal(gpointer data) {
  auto* context = static_cast<SignalContext*>(data);
  if (!context->runner) return G_SOURCE_CONTINUE;
  log_line("taconite-run: stopping (signal)");
  context->runner->stop();
  return G_SOURCE_CONTINUE;
}

gboolean on_reload_signal(gpointer data) {
  auto* context = static_cast<SignalContext*>(data);
  if (!context->runner) return G_SOURCE_CONTINUE;
  log_line("taconite-run: SIGHUP: reading " + context->config_path);
  ConfigLoad load = load_config(context->config_path);
  std::vector<std::string> problems = load.errors;
  problems.insert(problems.end(), load.missing_files.begin(), load.missing_files.end());
  if (!problems.empty()) {
    for (const std::string& problem : problems) log_line(problem);
    log_line("reload: the new config is not valid: ignored, the cameras keep running on the old one");
    return G_SOURCE_CONTINUE;
  }
  context->runner->reload(std::move(*load.config));
  return G_SOURCE_CONTINUE;
}

int run_cameras(const Args& args, Config config, SignalContext& context);

int run(const Args& args, Config config) {
  // The signals are caught from here on (glib holds one until the loop runs and dispatches it), so
  // a SIGTERM during the start still stops cleanly.
  SignalContext context{nullptr, args.config};
  const guint term = g_unix_signal_add(SIGTERM, on_stop_signal, &context);
  const guint interrupt = g_unix_signal_add(SIGINT, on_stop_signal, &context);
  const guint hangup = g_unix_signal_add(SIGHUP, on_reload_signal, &context);
  const int status = run_cameras(args, std::move(config), context);
  g_source_remove(term);
  g_source_remove(interrupt);
  g_source_remove(hangup);
  return status;
}

int run_cameras(const Args& args, Config config, SignalContext& context) {
  use_build_tree_plugin();
  gst_init(nullptr, nullptr);
  for (const char* element : {"taconitecamera", "taconitedetect", "taconiteadaface", "taconitepublish"}) {
    if (GstElementFactory* factory = gst_element_factory_find(element)) {
      gst_object_unref(factory);
      continue;
    }
    log_line(std::string("taconite-run: the GStreamer element ") + element +
             " is not installed (the taconite plugin: docs/install.md; GST_PLUGIN_PATH)");
    return 1;
  }
  taconite::Result<std::vector<std::unique_ptr<PipelineObserver>>> components = make_components(config);
  if (!components) {
    log_line("taconite-run: " + components.error().message);
    return 1;
  }
  GMainLoop* loop = g_main_loop_new(nullptr, FALSE);
  int status = 0;
  {
    Runner runner(std::move(config), std::move(components.value()), RunnerOptions{args.once}, loop);
    context.runner = &runner;
    runner.start();
    if (args.once && runner.running_cameras() == 0) {
      runner.stop();
    } else {
      g_main_loop_run(loop);
    }
    runner.stop();
    context.runner = nullptr;
    status = runner.exit_code();
  }
  g_main_loop_unref(loop);
  return args.once ? status : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse_args(argc, argv, args)) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  ConfigLoad load = load_config(args.config);
  if (!load.config) {
    for (const std::string& error : load.errors) log_line(error);
    return 2;
  }
  Config& config = *load.config;
  if (args.mode == Args::Mode::Check) {
    for (const std::string& missing : load.missing_files) log_line("warning: " + missing);
    std::size_t enabled = 0;
    for (const CameraConfig& camera : config.cameras) enabled += camera.enabled ? 1 : 0;
    std::printf("%s: valid (%zu cameras, %zu enabled)\n", args.config.c_str(), config.cameras.size(), enabled);
    return 0;
  }
  if (args.mode == Args::Mode::Print) {
    for (const CameraConfig& camera : config.cameras) {
      if (!camera.enabled) {
        std::printf("# %s: disabled\n", camera.name.c_str());
        continue;
      }
      std::printf("# %s\n%s\n", camera.name.c_str(), gst_launch_line(pipeline_words(config, camera)).c_str());
    }
    return 0;
  }
  if (!load.missing_files.empty()) {
    for (const std::string& missing : load.missing_files) log_line(missing);
    return 2;
  }
  try {
    return run(args, std::move(config));
  } catch (const std::exception& e) {
    log_line(std::string("taconite-run: ") + e.what());
    return 1;
  }
}
