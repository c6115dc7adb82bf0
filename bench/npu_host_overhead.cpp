// Host overhead of npu-direct per forward: the simulated amdxdna device in "instant" mode
// completes every command without computing, so what is measured is the host's work alone:
// slicing, accumulation and host glue (the replay executor) plus npu-direct's own share per
// dispatch (argument copy, cache maintenance, packet, EXEC_CMD + SYNCOBJ_TIMELINE_WAIT round trips,
// output read-back). The NPU itself needs ~0.2 s (IR-18) / ~0.5 s (IR-101) per forward
// (npu-xrt.md §6, UNVERIFIED). Targets: <= 5 ms (IR-18), <= 15 ms (IR-101).
// usage: npu-host-overhead <bundle_dir> [forwards=20] [threads=0]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bundle/bundle.hpp"
#include "common/failure.hpp"
#include "common/settings.hpp"
#include "npu/direct/npu_direct_device.hpp"
#include "plan/plan.hpp"
#include "replay/replay_executor.hpp"
#include "sim_amdxdna.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// Wraps a ConvDevice and adds up the time spent inside it.
class TimedDevice final : public taconite::replay::ConvDevice {
 public:
  TimedDevice(std::unique_ptr<ConvDevice> inner, double& seconds) : inner_(std::move(inner)), seconds_(seconds) {}
  std::string name() const override { return inner_->name(); }
  void run(const taconite::replay::ConvDispatch& d) override {
    const auto start = Clock::now();
    inner_->run(d);
    seconds_ += std::chrono::duration<double>(Clock::now() - start).count();
  }
  // Forwarded so the replay slices into and reads from npu-direct's argument buffers as it does
  // without the wrapper.
  std::span<taconite::numerics::bf16_t> staging_input(std::size_t elements) override {
    return inner_->staging_input(elements);
  }
  std::span<taconite::numerics::bf16_t> staging_output(std::size_t elements, int which) override {
    return inner_->staging_output(elements, which);
  }

 private:
  std::unique_ptr<ConvDevice> inner_;
  double& seconds_;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <bundle_dir> [forwards=20] [threads=0]\n", argv[0]);
    return 2;
  }
  const int forwards = argc > 2 ? std::max(1, std::atoi(argv[2])) : 20;
  auto sim = std::make_shared<taconite::sim::SimAmdxdna>(taconite::sim::SimConfig{.instant = true});
  taconite::LoadOptions options;
  options.threads = argc > 3 ? std::atoi(argv[3]) : 0;
  options.npu_driver = taconite::sim::driver_factory(sim);
  const taconite::Settings settings = taconite::resolve_settings(options);
  const int threads = settings.threads;

  const auto bundle = taconite::bundle::Bundle::open(argv[1]);
  const taconite::plan::Plan plan = taconite::plan::build_plan(bundle);
  double device_seconds = 0;
  const auto load_start = Clock::now();
  auto executor = taconite::replay::make_replay_executor(
      plan, std::make_unique<TimedDevice>(taconite::npu::make_npu_direct_device(plan, settings.npu), device_seconds),
      threads);
  const double load_s = std::chrono::duration<double>(Clock::now() - load_start).count();
  const auto input = plan.input_step().recorded;

  std::vector<double> total_ms, device_ms;
  for (int i = 0; i <= forwards; ++i) {  // forward 0 loads the hardware contexts: not counted
    device_seconds = 0;
    const auto start = Clock::now();
    executor->forward(input);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (i == 0) {
      std::printf("first forward (loads %d contexts): %.2f ms\n", sim->counters().contexts, ms);
      continue;
    }
    total_ms.push_back(ms);
    device_ms.push_back(device_seconds * 1000);
  }
  std::printf("%s: %d conv dispatches, %d threads, load %.2f s; warm host time per forward (median of %d): "
              "%.2f ms total = %.2f ms npu-direct (copies, cache maintenance, packets, ioctls) + %.2f ms replay "
              "glue (slicing, accumulation, host ops, head); min total %.2f ms\n",
              plan.model.empty() ? argv[1] : plan.model.c_str(), plan.conv_dispatches, threads, load_s, forwards,
              median(total_ms), median(device_ms), median(total_ms) - median(device_ms),
              *std::min_element(total_ms.begin(), total_ms.end()));
  return 0;
} catch (const taconite::Failure& failure) {
  std::fprintf(stderr, "npu-host-overhead: %s\n", failure.error().message.c_str());
  return 1;
}
