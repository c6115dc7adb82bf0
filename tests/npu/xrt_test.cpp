// npu-xrt built against an XRT without xrt::hw_context (Debian 12's 2.13) compiles, links, and
// refuses to open with the message the spec decides (npu-xrt.md Decisions 2).
#include <gtest/gtest.h>

#include <algorithm>

#include "common/failure.hpp"
#include "npu/xrt/npu_xrt_device.hpp"
#include "taconite/embedder.hpp"

namespace taconite {
namespace {

bool built_with_hw_context() {
  const std::string v = npu::built_xrt_version();
  const int major = std::stoi(v), minor = std::stoi(v.substr(v.find('.') + 1));
  return major > 2 || (major == 2 && minor >= 15);
}

TEST(NpuXrt, IsRegisteredAfterNpuDirectAndBeforeTheCpuBackends) {
  const std::vector<std::string> names = compiled_backends();
  const auto xrt = std::find(names.begin(), names.end(), "npu-xrt");
  ASSERT_NE(xrt, names.end());
  const auto direct = std::find(names.begin(), names.end(), "npu-direct");
  if (direct != names.end()) {
    EXPECT_LT(direct, xrt);
  }
  EXPECT_LT(xrt, std::find(names.begin(), names.end(), "cpu-reference"));
}

TEST(NpuXrt, OldXrtRefusesToOpenWithTheExactMessage) {
  if (built_with_hw_context()) GTEST_SKIP() << "built against XRT " << npu::built_xrt_version();
  const plan::Plan empty;
  try {
    npu::make_npu_xrt_device(empty);
    FAIL() << "opened";
  } catch (const Failure& failure) {
    EXPECT_EQ(failure.error().kind, ErrorKind::Device);
    EXPECT_EQ(failure.error().message, "XRT " + npu::built_xrt_version() +
                                           " found; running on an NPU needs XRT >= 2.15 (xrt::hw_context)");
  }
}

TEST(NpuXrt, DebianXrtIsVersion213) {
  if (built_with_hw_context()) GTEST_SKIP() << "built against XRT " << npu::built_xrt_version();
  EXPECT_EQ(npu::built_xrt_version(), "2.13");
  const plan::Plan empty;
  try {
    npu::make_npu_xrt_device(empty);
  } catch (const Failure& failure) {
    EXPECT_EQ(failure.error().message, "XRT 2.13 found; running on an NPU needs XRT >= 2.15 (xrt::hw_context)");
  }
}

}  // namespace
}  // namespace taconite
