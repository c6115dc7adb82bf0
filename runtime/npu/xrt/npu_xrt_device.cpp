#include "npu/xrt/npu_xrt_device.hpp"

#include "common/failure.hpp"
#include "npu/kernel_files.hpp"
#include "npu/xrt/xrt_headers.hpp"

#if TACONITE_XRT_HAS_HW_CONTEXT
#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <unordered_map>
#include <vector>

#include "npu/context_cache.hpp"
#include "npu/npu_settings.hpp"
#include "npu/npu_stats.hpp"
#endif

namespace taconite::npu {

std::string built_xrt_version() { return std::to_string(kXrtMajor) + "." + std::to_string(kXrtMinor); }

#if TACONITE_XRT_HAS_HW_CONTEXT

namespace {

using numerics::bf16_t;
constexpr std::uint64_t kOpcode = 3;                 // MLIR_AIE: run the instruction stream
constexpr std::size_t kKernelBuffers = 3;            // slice, weights, output (bundle.md §5.1)
constexpr std::size_t kAlignment = 64;
constexpr xrt::memory_group kHostGroup = 0;          // what IRON Python and taconite pass for data BOs

// Runs one XRT call sequence; any exception becomes Failure(Device) naming the step.
template <typename F>
auto guarded(const std::string& step, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const Failure&) {
    throw;
  } catch (const std::exception& e) {
    fail(ErrorKind::Device, "npu-xrt: " + step + ": " + e.what());
  } catch (...) {
    fail(ErrorKind::Device, "npu-xrt: " + step + ": unknown exception");
  }
}

// One resident context: registered xclbin, hardware context, kernel, instruction BO. Members are
// declared so that destruction releases instruction BO and kernel before the context (§5).
class XrtContext final : public ResidentContext {
 public:
  XrtContext(xrt::device& device, const plan::KernelContext& context, const NpuSettings& settings) {
    const std::vector<std::byte> insts = read_instruction_stream(context.insts);
    const std::string where = "loading " + context.xclbin.string();
    xrt::xclbin xclbin = guarded(where + " (xrt::xclbin)", [&] { return xrt::xclbin(context.xclbin.string()); });
    std::string name = context.kernel_name;
    guarded(where + " (kernel table)", [&] {
      const auto kernels = xclbin.get_kernels();
      if (kernels.empty()) fail(ErrorKind::Device, "npu-xrt: " + where + ": the xclbin has no kernel");
      auto match = std::find_if(kernels.begin(), kernels.end(), [&](const auto& k) { return k.get_name() == name; });
      if (name.empty()) match = kernels.begin();
      if (match == kernels.end()) fail(ErrorKind::Device, "npu-xrt: " + where + ": no kernel named '" + name + "'");
      name = match->get_name();
      // Passing more buffers than the xclbin declares crashes inside XRT (§1): check first.
      if (match->get_num_args() < 3 + kKernelBuffers)
        fail(ErrorKind::Device, "npu-xrt: " + where + ": kernel '" + name + "' takes " +
                                    std::to_string(match->get_num_args() - 3) + " buffers, a conv dispatch needs 3");
      return 0;
    });
    const xrt::uuid uuid = guarded(where + " (register_xclbin)", [&] { return device.register_xclbin(xclbin); });
    try {
      context_ = xrt::hw_context(device, uuid);
    } catch (const std::exception& e) {  // slots exhausted (MGMT_ERT_NOAVAIL) or similar: may retry
      throw ContextRefused(ErrorKind::Device, "npu-xrt: " + where + " (xrt::hw_context): " + e.what() +
                                                  "; NPU context refused (16-context cap shared by all processes?)");
    }
    guarded(where + " (kernel and instruction BO)", [&] {
      kernel_ = xrt::kernel(context_, name);
      instructions_ = xrt::bo(device, insts.size(), xrt::bo::flags::cacheable, kernel_.group_id(1));
      std::memcpy(instructions_.map<void*>(), insts.data(), insts.size());
      instructions_.sync(XCL_BO_SYNC_BO_TO_DEVICE);
      return 0;
    });
    ninstr_ = ninstr_value(insts.size(), settings.ninstr_unit);
  }

  xrt::kernel& kernel() { return kernel_; }
  const xrt::bo& instructions() const { return instructions_; }
  std::uint32_t ninstr() const { return ninstr_; }

 private:
  xrt::hw_context context_;
  xrt::kernel kernel_;
  xrt::bo instructions_;
  std::uint32_t ninstr_ = 0;
};

class NpuXrtDevice final : public replay::ConvDevice {
 public:
  NpuXrtDevice(const plan::Plan& plan, const NpuSettings& settings)
      : timing_("npu-xrt", settings.timing), settings_(settings), cache_(settings.context_cache_capacity, timing_.stats()) {
    device_ = guarded("xrt::device(0)", [] { return xrt::device(0u); });
    guarded("allocating host_only argument BOs", [&] {
      input_ = host_buffer(std::max<std::size_t>(plan.max_slice_elements, 1) * sizeof(bf16_t));
      output_ = host_buffer(std::max<std::size_t>(plan.max_dispatch_elements, 1) * sizeof(bf16_t));
      // Weights never change: one BO per conv weights tensor, filled and synced once.
      for (const plan::Step& step : plan.steps) {
        const auto* conv = std::get_if<plan::ConvStep>(&step);
        if (conv == nullptr || weights_.count(conv->weights.data()) != 0) continue;
        const std::size_t bytes = conv->weights.size() * sizeof(bf16_t);
        xrt::bo bo = host_buffer(std::max(bytes, kAlignment));
        std::memcpy(bo.map<void*>(), conv->weights.data(), bytes);
        bo.sync(XCL_BO_SYNC_BO_TO_DEVICE);
        weights_.emplace(conv->weights.data(), std::move(bo));
      }
      return 0;
    });
  }

  ~NpuXrtDevice() override { cache_.clear(); }

  std::string name() const override { return "npu-xrt"; }

  void run(const replay::ConvDispatch& d) override {
    const auto start = std::chrono::steady_clock::now();
    auto& context = static_cast<XrtContext&>(cache_.acquire(
        d.step.context, [&] { return std::make_unique<XrtContext>(device_, d.context, settings_); }));
    const std::string where = "run of context '" + d.context.key + "' (manifest.txt:" + std::to_string(d.step.line) + ")";
    const std::size_t in_bytes = d.input.size() * sizeof(bf16_t), out_bytes = d.output.size() * sizeof(bf16_t);
    const auto state = guarded(where, [&] {
      std::memcpy(input_.map<void*>(), d.input.data(), in_bytes);
      input_.sync(XCL_BO_SYNC_BO_TO_DEVICE, in_bytes, 0);
      xrt::run run(context.kernel());
      run.set_arg(0, kOpcode);
      run.set_arg(1, context.instructions());
      run.set_arg(2, context.ninstr());
      run.set_arg(3, input_);
      run.set_arg(4, weights_.at(d.weights.data()));
      run.set_arg(5, output_);
      run.start();
      const auto wait_start = std::chrono::steady_clock::now();
      const ert_cmd_state result = run.wait(settings_.run_timeout);
      timing_.stats().wait_seconds += seconds_since(wait_start);
      if (result == ERT_CMD_STATE_TIMEOUT) run.abort();
      return result;
    });
    if (state != ERT_CMD_STATE_COMPLETED) {
      cache_.evict(d.step.context);
      fail(ErrorKind::Device, "npu-xrt: " + where + " finished in state " + std::to_string(static_cast<int>(state)) +
                                  (state == ERT_CMD_STATE_TIMEOUT ? " (TIMEOUT after " + std::to_string(settings_.run_timeout.count()) + " ms)" : "") +
                                  " instead of 4 (COMPLETED); check dmesg for amdxdna firmware errors");
    }
    guarded(where + " (reading the output)", [&] {
      output_.sync(XCL_BO_SYNC_BO_FROM_DEVICE, out_bytes, 0);
      std::memcpy(d.output.data(), output_.map<void*>(), out_bytes);
      return 0;
    });
    ++timing_.stats().runs;
    timing_.stats().run_seconds += seconds_since(start);
  }

 private:
  xrt::bo host_buffer(std::size_t bytes) {
    xrt::bo bo(device_, bytes, xrt::bo::flags::host_only, kHostGroup);
    std::memset(bo.map<void*>(), 0, bytes);  // zero and sync at allocation, as IRON and taconite do
    bo.sync(XCL_BO_SYNC_BO_TO_DEVICE);
    return bo;
  }

  TimingReport timing_;
  NpuSettings settings_;
  xrt::device device_;
  xrt::bo input_, output_;
  std::unordered_map<const bf16_t*, xrt::bo> weights_;  // per conv weights tensor
  ContextCache cache_;  // last: contexts go before the buffers and the device
};

}  // namespace

std::unique_ptr<replay::ConvDevice> make_npu_xrt_device(const plan::Plan& plan, const NpuSettings& settings) {
  require_npu_kernels(plan);
  return std::make_unique<NpuXrtDevice>(plan, settings);
}

#else  // XRT without xrt::hw_context (Debian 12's 2.13): compiles and links, cannot run an NPU.

std::unique_ptr<replay::ConvDevice> make_npu_xrt_device(const plan::Plan& plan, const NpuSettings&) {
  require_npu_kernels(plan);
  fail(ErrorKind::Device, "XRT " + built_xrt_version() + " found; running on an NPU needs XRT >= 2.15 (xrt::hw_context)");
}

#endif

}  // namespace taconite::npu
