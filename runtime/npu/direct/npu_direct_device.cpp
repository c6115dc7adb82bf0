#include "npu/direct/npu_direct_device.hpp"

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "common/failure.hpp"
#include "npu/context_cache.hpp"
#include "npu/direct/amdxdna_device.hpp"
#include "npu/direct/cache_maintenance.hpp"
#include "npu/direct/direct_context.hpp"
#include "npu/direct/driver_error.hpp"
#include "npu/direct/start_cu_packet.hpp"
#include "npu/kernel_files.hpp"
#include "npu/npu_settings.hpp"
#include "npu/npu_stats.hpp"

namespace taconite::npu {

namespace {

using numerics::bf16_t;
constexpr std::size_t kAlignment = 64;  // cache line: flushes of one tensor never touch another

std::size_t align_up(std::size_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

std::int64_t monotonic_now_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return std::int64_t{now.tv_sec} * 1000000000 + now.tv_nsec;
}

const char* state_name(std::uint32_t state) {
  switch (state) {
    case 1: return "NEW (never reached the firmware)";
    case 2: return "QUEUED";
    case 3: return "RUNNING";
    case 5: return "ERROR";
    case 6: return "ABORT";
    case 8: return "TIMEOUT";
    case 9: return "NORESPONSE";
    default: return "unknown";
  }
}

std::size_t elements_bytes(std::size_t elements) { return elements * sizeof(bf16_t); }

class NpuDirectDevice final : public replay::ConvDevice {
 public:
  NpuDirectDevice(const plan::Plan& plan, const NpuSettings& settings)
      : timing_("npu-direct", settings.timing),
        settings_(settings),
        device_(make_driver_seam(settings.driver), settings.device_path),
        cache_(settings.context_cache_capacity, timing_.stats()) {
    for (const plan::KernelContext& context : plan.contexts) check_context_files(context);
    input_ = std::make_unique<DeviceBo>(device_, uapi::kBoShare, align_up(elements_bytes(std::max<std::size_t>(plan.max_slice_elements, 1))));
    for (auto& output : outputs_)
      output = std::make_unique<DeviceBo>(device_, uapi::kBoShare, align_up(elements_bytes(std::max<std::size_t>(plan.max_dispatch_elements, 1))));
    // Weights never change: each conv's packed weights go into their own SHARE BO once, so a
    // forward copies only activations and each command lists (and pins) only its own weights.
    for (const plan::Step& step : plan.steps) {
      const auto* conv = std::get_if<plan::ConvStep>(&step);
      if (conv == nullptr || weights_.count(conv->weights.data()) != 0) continue;
      const std::size_t bytes = elements_bytes(conv->weights.size());
      auto bo = std::make_unique<DeviceBo>(device_, uapi::kBoShare, std::max(bytes, kAlignment));
      std::memcpy(bo->host(), conv->weights.data(), bytes);
      flush_cache_range(bo->host(), bo->size());
      weights_.emplace(conv->weights.data(), std::move(bo));
    }
    // Flushed once now so no dirty line can later be written back over what the NPU wrote (§7.3).
    for (const DeviceBo* bo : {input_.get(), outputs_[0].get(), outputs_[1].get()}) flush_cache_range(bo->host(), bo->size());
  }

  ~NpuDirectDevice() override { cache_.clear(); }  // contexts before the argument buffers and the device

  std::string name() const override { return "npu-direct"; }

  // The SHARE argument buffers are host-mapped: lend them so the replay slices and reads in place.
  std::span<numerics::bf16_t> staging_input(std::size_t elements) override { return lend(*input_, elements); }
  std::span<numerics::bf16_t> staging_output(std::size_t elements, int which) override {
    return which == 0 || which == 1 ? lend(*outputs_[which], elements) : std::span<numerics::bf16_t>{};
  }

  void run(const replay::ConvDispatch& d) override {
    const auto start = std::chrono::steady_clock::now();
    const plan::ConvStep& step = d.step;
    auto& context = static_cast<DirectContext&>(cache_.acquire(
        step.context, [&] { return std::make_unique<DirectContext>(device_, d.context, settings_); }));

    const auto weights = weights_.find(d.weights.data());
    if (weights == weights_.end())
      fail(ErrorKind::Device, "npu-direct: manifest.txt:" + std::to_string(step.line) +
                                  ": weights are not among the plan's uploaded conv weights");
    const std::size_t in_bytes = elements_bytes(d.input.size()), out_bytes = elements_bytes(d.output.size());
    // The output goes to the lent buffer it points into, else to the first (and is copied out).
    DeviceBo& output = d.output.data() == lent(*outputs_[1]) ? *outputs_[1] : *outputs_[0];
    if (in_bytes > input_->size() || out_bytes > output.size())
      fail(ErrorKind::Device, "npu-direct: manifest.txt:" + std::to_string(step.line) +
                                  ": dispatch larger than the plan's argument buffers");
    // An input inside the lent buffer is passed as a sub-buffer (parent address + offset, §7.2);
    // anything else is copied to the buffer's start.
    std::size_t in_offset = 0;
    if (const auto lent_at = lent_offset(*input_, d.input.data(), in_bytes)) in_offset = *lent_at;
    else std::memcpy(input_->host(), d.input.data(), in_bytes);
    std::byte* const in_host = input_->host() + in_offset;
    flush_cache_range(in_host, in_bytes);

    const DeviceBo& weights_bo = *weights->second;
    const std::uint64_t addresses[3] = {input_->device_address() + in_offset, weights_bo.device_address(),
                                        output.device_address()};
    const StartCuPacket packet = build_start_cu_packet(context.instructions().device_address(), context.ninstr(), addresses);
    std::memcpy(context.command().host(), packet.data(), sizeof packet);  // CMD BO: copied by the driver, no flush

    std::uint32_t handles[4] = {context.instructions().handle(), input_->handle(), weights_bo.handle(), output.handle()};
    uapi::ExecCmd exec{};
    exec.hwctx = context.hwctx();
    exec.type = uapi::kCmdSubmitExecBuf;
    exec.cmd_handles = context.command().handle();
    exec.args = reinterpret_cast<std::uintptr_t>(handles);
    exec.cmd_count = 1;
    exec.arg_count = 4;
    if (const int error = device_.ioctl_status(uapi::kIoctlExecCmd, &exec); error != 0)
      fail_driver_call("EXEC_CMD", error, where(d));

    wait(context, exec.seq, d);
    const std::uint32_t state =
        *static_cast<volatile const std::uint32_t*>(static_cast<void*>(context.command().host())) & 0xF;
    if (state != uapi::kErtStateCompleted) {
      cache_.evict(step.context);  // the context may be unusable; a later run reloads it
      fail(ErrorKind::Device, "npu-direct: EXEC_CMD run of " + where(d) + " finished in state " +
                                  std::to_string(state) + " " + state_name(state) +
                                  " instead of 4 (COMPLETED); check dmesg for amdxdna firmware errors");
    }
    flush_cache_range(output.host(), out_bytes);  // drop stale lines before reading the NPU's output
    if (d.output.data() != lent(output)) std::memcpy(d.output.data(), output.host(), out_bytes);
    ++timing_.stats().runs;
    timing_.stats().run_seconds += seconds_since(start);
  }

 private:
  static numerics::bf16_t* lent(const DeviceBo& bo) { return reinterpret_cast<numerics::bf16_t*>(bo.host()); }
  // Where [data, data + bytes) starts inside `bo`'s lent mapping, if it lies wholly inside it.
  static std::optional<std::size_t> lent_offset(const DeviceBo& bo, const void* data, std::size_t bytes) {
    const auto begin = reinterpret_cast<std::uintptr_t>(bo.host()), at = reinterpret_cast<std::uintptr_t>(data);
    if (at < begin || at - begin > bo.size() || bytes > bo.size() - (at - begin)) return std::nullopt;
    return at - begin;
  }
  static std::span<numerics::bf16_t> lend(const DeviceBo& bo, std::size_t elements) {
    if (elements_bytes(elements) > bo.size()) return {};
    return {lent(bo), elements};
  }

  static std::string where(const replay::ConvDispatch& d) {
    return "context '" + d.context.key + "' (manifest.txt:" + std::to_string(d.step.line) + ")";
  }

  void wait(DirectContext& context, std::uint64_t seq, const replay::ConvDispatch& d) {
    const auto start = std::chrono::steady_clock::now();
    std::uint32_t syncobj = context.syncobj();
    std::uint64_t point = seq;
    uapi::SyncobjTimelineWait request{};
    request.handles = reinterpret_cast<std::uintptr_t>(&syncobj);
    request.points = reinterpret_cast<std::uintptr_t>(&point);
    // ABSOLUTE CLOCK_MONOTONIC deadline (spec §3.8): a relative value is already in the past.
    request.timeout_nsec = monotonic_now_ns() + std::chrono::nanoseconds(settings_.run_timeout).count();
    request.count_handles = 1;
    const int error = device_.ioctl_status(uapi::kIoctlSyncobjTimelineWait, &request);
    timing_.stats().wait_seconds += seconds_since(start);
    if (error == 0) return;
    if (error == ETIME) context.abandon_in_flight_run();  // never free buffers the firmware may own
    cache_.evict(d.step.context);
    fail_driver_call("SYNCOBJ_TIMELINE_WAIT", error,
                     "run of " + where(d) + (error == ETIME ? " not finished within " +
                                                                  std::to_string(settings_.run_timeout.count()) + " ms"
                                                            : std::string()));
  }

  TimingReport timing_;  // first member: prints after everything else is released
  NpuSettings settings_;
  AmdxdnaDevice device_;
  std::unique_ptr<DeviceBo> input_, outputs_[2];
  std::unordered_map<const bf16_t*, std::unique_ptr<DeviceBo>> weights_;  // per conv weights tensor
  ContextCache cache_;
};

}  // namespace

std::unique_ptr<replay::ConvDevice> make_npu_direct_device(const plan::Plan& plan, const NpuSettings& settings) {
  require_npu_kernels(plan);
  return std::make_unique<NpuDirectDevice>(plan, settings);
}

}  // namespace taconite::npu
