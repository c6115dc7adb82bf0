// The simulated device rejects what the driver rejects; the direct path's building blocks use it
// correctly (heap alignment, teardown order, absolute deadlines, in-flight limit).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>

#include <cerrno>
#include <cstring>

#include "common/failure.hpp"
#include "npu/direct/amdxdna_device.hpp"
#include "npu/direct/uapi.hpp"
#include "sim_amdxdna.hpp"

namespace taconite {
namespace {

namespace u = npu::uapi;

class SimProtocolTest : public ::testing::Test {
 protected:
  int open_device() {
    const int fd = sim_->open("/dev/accel/accel0", O_RDWR);
    EXPECT_GE(fd, 0);
    return fd;
  }
  std::uint32_t create_bo(int fd, std::uint32_t type, std::uint64_t size) {
    u::CreateBo r{};
    r.size = size;
    r.type = type;
    EXPECT_EQ(sim_->ioctl(fd, u::kIoctlCreateBo, &r), 0) << errno;
    return r.handle;
  }
  int error_of(int fd, unsigned long request, void* arg) {
    errno = 0;
    return sim_->ioctl(fd, request, arg) == 0 ? 0 : errno;
  }
  std::shared_ptr<sim::SimAmdxdna> sim_ = std::make_shared<sim::SimAmdxdna>();
};

TEST_F(SimProtocolTest, WrongSizeOrTypeOrMbzIsRejected) {
  const int fd = open_device();
  u::CreateBo bo{};
  bo.size = 4096;
  bo.type = u::kBoShare;
  EXPECT_EQ(error_of(fd, u::drm_ioc(3, 0x43, 24), &bo), EINVAL);  // wrong size in the request
  EXPECT_EQ(error_of(fd, 0xC0204143, &bo), ENOTTY);               // not DRM's 'd'
  bo.flags = 1;
  EXPECT_EQ(error_of(fd, u::kIoctlCreateBo, &bo), EINVAL);  // MBZ
  bo.flags = 0;
  bo.type = 9;
  EXPECT_EQ(error_of(fd, u::kIoctlCreateBo, &bo), EINVAL);
  u::GemClose close{12345, 0};
  EXPECT_EQ(error_of(fd, u::kIoctlGemClose, &close), EINVAL);  // unknown handle
  EXPECT_EQ(sim_->violations().size(), 5u);
  EXPECT_EQ(sim_->close(fd), 0);
}

TEST_F(SimProtocolTest, DevBoAndContextNeedTheHeapMappedAndAligned) {
  const int fd = open_device();
  u::CreateBo dev{};
  dev.size = 4096;
  dev.type = u::kBoDev;
  EXPECT_EQ(error_of(fd, u::kIoctlCreateBo, &dev), EINVAL);  // no heap yet
  u::QosInfo qos{};
  u::CreateHwctx ctx{};
  ctx.qos_p = reinterpret_cast<std::uintptr_t>(&qos);
  ctx.max_opc = 2048;
  ctx.num_tiles = 16;
  EXPECT_EQ(error_of(fd, u::kIoctlCreateHwctx, &ctx), ENOENT);  // no heap

  const std::uint32_t heap = create_bo(fd, u::kBoDevHeap, u::kHeapSize);
  u::GetBoInfo info{};
  info.handle = heap;
  ASSERT_EQ(error_of(fd, u::kIoctlGetBoInfo, &info), 0);
  EXPECT_EQ(info.xdna_addr, u::kDevmBase);
  // Map it deliberately misaligned (64 MiB + 4 KiB into a reservation).
  void* reserve = ::mmap(nullptr, 3 * u::kHeapSize, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(reserve, MAP_FAILED);
  auto aligned = (reinterpret_cast<std::uintptr_t>(reserve) + u::kHeapAlignment - 1) & ~(u::kHeapAlignment - 1);
  void* misaligned = reinterpret_cast<void*>(aligned + 4096);
  void* heap_map = sim_->mmap(misaligned, u::kHeapSize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
                              static_cast<off_t>(info.map_offset));
  ASSERT_EQ(heap_map, misaligned);
  EXPECT_EQ(error_of(fd, u::kIoctlCreateHwctx, &ctx), EINVAL);
  qos = {};
  ctx.qos_p = 0;
  EXPECT_EQ(error_of(fd, u::kIoctlCreateHwctx, &ctx), EFAULT);
  EXPECT_EQ(sim_->munmap(heap_map, u::kHeapSize), 0);
  ::munmap(reserve, 3 * u::kHeapSize);
  u::GemClose close{heap, 0};
  EXPECT_EQ(error_of(fd, u::kIoctlGemClose, &close), 0);
  EXPECT_EQ(sim_->close(fd), 0);
  EXPECT_EQ(sim_->counters().mappings, 0);
  EXPECT_EQ(sim_->counters().bos, 0);
}

TEST_F(SimProtocolTest, DeviceOpenMapsTheHeapAlignedBeforeAnythingElse) {
  {
    npu::AmdxdnaDevice device(sim_, "/dev/accel/accel0");
    EXPECT_EQ(device.aie_metadata().cols, 8);
    EXPECT_EQ(device.aie_metadata().core.row_count, 4);
    ASSERT_TRUE(device.firmware_version().has_value());
    EXPECT_EQ(device.firmware_version()->major, 1u);
    const auto counters = sim_->counters();
    EXPECT_EQ(counters.bos, 1);       // the heap
    EXPECT_EQ(counters.mappings, 1);  // mapped
    // A DEV BO now succeeds and lies inside the heap mapping.
    npu::DeviceBo bo(device, u::kBoDev, 100);
    EXPECT_EQ(bo.device_address() % (32 * 1024), 0u);
    EXPECT_GE(bo.device_address(), u::kDevmBase);
    npu::DeviceBo share(device, u::kBoShare, 8192);
    EXPECT_EQ(share.device_address(), reinterpret_cast<std::uintptr_t>(share.host()));  // PASID: the VA
  }
  EXPECT_TRUE(sim_->violations().empty());
  EXPECT_EQ(sim_->counters().open_files, 0);
  EXPECT_EQ(sim_->counters().mappings, 0);
  EXPECT_EQ(sim_->counters().bos, 0);
}

TEST_F(SimProtocolTest, SeventeenthContextIsRefusedWithEinval) {
  npu::AmdxdnaDevice device(sim_, "/dev/accel/accel0");
  u::QosInfo qos{};
  std::vector<u::CreateHwctx> made;
  for (int i = 0; i < 17; ++i) {
    u::CreateHwctx ctx{};
    ctx.qos_p = reinterpret_cast<std::uintptr_t>(&qos);
    ctx.max_opc = 2048;
    ctx.num_tiles = 4;
    const int error = device.ioctl_status(u::kIoctlCreateHwctx, &ctx);
    if (i < 16) {
      EXPECT_EQ(error, 0) << i;
      made.push_back(ctx);
    } else {
      EXPECT_EQ(error, EINVAL);
    }
  }
  EXPECT_EQ(sim_->counters().contexts, 16);
  for (const u::CreateHwctx& ctx : made) {
    u::DestroyHwctx destroy{ctx.handle, 0};
    EXPECT_EQ(device.ioctl_status(u::kIoctlDestroyHwctx, &destroy), 0);
    u::SyncobjDestroy sync{ctx.syncobj_handle, 0};
    EXPECT_EQ(device.ioctl_status(u::kIoctlSyncobjDestroy, &sync), 0);
  }
  EXPECT_EQ(sim_->counters().contexts, 0);
  EXPECT_TRUE(sim_->violations().empty());
}

TEST_F(SimProtocolTest, RelativeDeadlineAndFifthCommandInFlightAreCaught) {
  npu::AmdxdnaDevice device(sim_, "/dev/accel/accel0");
  u::QosInfo qos{};
  u::CreateHwctx ctx{};
  ctx.qos_p = reinterpret_cast<std::uintptr_t>(&qos);
  ctx.max_opc = 2048;
  ctx.num_tiles = 4;
  ASSERT_EQ(device.ioctl_status(u::kIoctlCreateHwctx, &ctx), 0);
  {
    npu::DeviceBo pdi(device, u::kBoDev, 64);
    u::CuConfigBlob cu{};
    cu.num_cus = 1;
    cu.cu_bo = pdi.handle();
    u::ConfigHwctx config{ctx.handle, u::kConfigCu, reinterpret_cast<std::uintptr_t>(&cu), sizeof cu, 0};
    ASSERT_EQ(device.ioctl_status(u::kIoctlConfigHwctx, &config), 0);
    EXPECT_EQ(device.ioctl_status(u::kIoctlConfigHwctx, &config), EINVAL);  // configured twice
    npu::DeviceBo insts(device, u::kBoDev, 64);
    std::vector<std::unique_ptr<npu::DeviceBo>> cmds;
    std::uint32_t args[1] = {insts.handle()};
    std::uint64_t last_seq = 0;
    for (int i = 0; i < 5; ++i) {
      cmds.push_back(std::make_unique<npu::DeviceBo>(device, u::kBoCmd, 4096));
      u::ExecCmd exec{};
      exec.hwctx = ctx.handle;
      exec.cmd_handles = cmds.back()->handle();
      exec.args = reinterpret_cast<std::uintptr_t>(args);
      exec.cmd_count = 1;
      exec.arg_count = 1;
      const int error = device.ioctl_status(u::kIoctlExecCmd, &exec);
      if (i < 4) {
        EXPECT_EQ(error, 0);
        last_seq = exec.seq;
      } else {
        EXPECT_EQ(error, EDEADLK);  // the real driver would block here forever
      }
    }
    EXPECT_EQ(sim_->counters().max_in_flight, 4);
    std::uint32_t syncobj = ctx.syncobj_handle;
    u::SyncobjTimelineWait wait{};
    wait.handles = reinterpret_cast<std::uintptr_t>(&syncobj);
    wait.points = reinterpret_cast<std::uintptr_t>(&last_seq);
    wait.count_handles = 1;
    wait.timeout_nsec = 1000000000;  // "1 s" given as a relative duration: already past
    EXPECT_EQ(device.ioctl_status(u::kIoctlSyncobjTimelineWait, &wait), ETIME);
    const auto violations = sim_->violations();
    ASSERT_EQ(violations.size(), 3u);  // configured twice, 5th in flight, relative deadline
    EXPECT_NE(violations[0].find("configured twice"), std::string::npos) << violations[0];
    EXPECT_NE(violations[1].find("5th command"), std::string::npos) << violations[1];
    EXPECT_NE(violations[2].find("relative timeout"), std::string::npos) << violations[2];
    // The commands are not placeholder kernels: they end in ERROR once waited for properly.
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    wait.timeout_nsec = now.tv_sec * 1000000000LL + now.tv_nsec + 1000000000LL;
    EXPECT_EQ(device.ioctl_status(u::kIoctlSyncobjTimelineWait, &wait), 0);
    std::uint32_t header;
    std::memcpy(&header, cmds[0]->host(), 4);
    EXPECT_EQ(header & 0xF, u::kErtStateError);
    u::DestroyHwctx destroy{ctx.handle, 0};
    EXPECT_EQ(device.ioctl_status(u::kIoctlDestroyHwctx, &destroy), 0);
    u::SyncobjDestroy sync{ctx.syncobj_handle, 0};
    EXPECT_EQ(device.ioctl_status(u::kIoctlSyncobjDestroy, &sync), 0);
  }
  EXPECT_EQ(sim_->counters().bos, 1);  // only the heap remains
}

TEST_F(SimProtocolTest, ClosingTheFdReleasesContextsLikeTheDriver) {
  const int fd = open_device();
  sim_->close(fd);
  EXPECT_EQ(sim_->counters().open_files, 0);
  EXPECT_EQ(sim_->open("/dev/accel/accel1", O_RDWR), -1);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(sim_->open("/dev/accel/accel0", O_RDONLY), -1);
  EXPECT_EQ(errno, EINVAL);
}

}  // namespace
}  // namespace taconite
