// A simulated amdxdna device behind the npu-direct DriverSeam, for tests without an NPU.
// It validates every request the way the driver does (ioctl numbers and sizes, MBZ fields, handle
// lifetimes, heap mapped and 64 MiB-aligned before DEV BOs and contexts, absolute deadlines, the
// 4-commands-in-flight limit, the device-wide 16-context cap of NPU2 firmware -> EINVAL) and runs
// each command by computing the conv its placeholder instruction stream describes
// (tools/mkbundle/placeholder_kernel.hpp) on the CPU, with the cpu-reference math.
// Misuse that the real driver would reject (or that would hang/corrupt on hardware) is also
// recorded in violations(), so tests can assert a clean protocol. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "npu/direct/driver_seam.hpp"
#include "npu/npu_settings.hpp"

namespace taconite::sim {

struct SimConfig {
  std::string device_path = "/dev/accel/accel0";
  bool instant = false;                 // complete commands without computing (host-overhead bench)
  std::uint32_t context_limit = 16;     // hardware contexts of the whole device (NPU2 firmware)
  npu::NinstrUnit ninstr_unit = npu::NinstrUnit::Bytes;  // what the simulated firmware expects
};

// One-shot faults, consumed as they fire.
struct SimFaults {
  bool missing_device = false;  // open() -> ENOENT
  int refuse_contexts = 0;      // next N CREATE_HWCTX -> EINVAL (as a full device does)
  int error_commands = 0;       // next N commands end in state ERROR (5)
  int hang_commands = 0;        // next N commands never complete: the wait returns ETIME at its deadline
  int eintr = 0;                // next N ioctls fail with EINTR before doing anything
};

struct SimCounters {
  int open_files = 0;
  int mappings = 0;      // live mappings of BOs
  int bos = 0;           // live GEM handles
  int contexts = 0;      // live hardware contexts
  int syncobjs = 0;      // live syncobj handles
  std::uint64_t commands = 0, completed = 0, computed = 0, refused_contexts = 0, eintr_injected = 0;
  int max_in_flight = 0;
  std::uint64_t ioctls = 0;
  std::int64_t last_wait_budget_ns = 0;  // deadline minus now at the last SYNCOBJ_TIMELINE_WAIT

  // The live resources, e.g. "bos=2 contexts=1"; empty when everything was released.
  std::string leaks() const {
    std::string out;
    const std::pair<const char*, int> live[] = {
        {"open_files", open_files}, {"mappings", mappings}, {"bos", bos}, {"contexts", contexts}, {"syncobjs", syncobjs}};
    for (const auto& [name, count] : live)
      if (count != 0) out += (out.empty() ? "" : " ") + std::string(name) + "=" + std::to_string(count);
    return out;
  }
};

class SimAmdxdna final : public npu::DriverSeam {
 public:
  explicit SimAmdxdna(SimConfig config = {});
  ~SimAmdxdna() override;

  int open(const char* path, int flags) override;
  int ioctl(int fd, unsigned long request, void* arg) override;
  void* mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) override;
  int munmap(void* addr, std::size_t length) override;
  int close(int fd) override;

  void set_faults(const SimFaults& faults);
  SimFaults faults() const;
  SimCounters counters() const;
  std::vector<std::string> violations() const;
  void clear_violations();
  void set_instant(bool instant);

  struct State;  // implementation (sim_amdxdna.cpp)

 private:
  std::unique_ptr<State> state_;
};

// A LoadOptions::npu_driver that gives npu-direct `sim`.
NpuDriverFactory driver_factory(std::shared_ptr<SimAmdxdna> sim);

}  // namespace taconite::sim
