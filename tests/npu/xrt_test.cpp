// npu-xrt's XRT feature detection: built against an XRT without xrt::hw_context (Debian 12's 2.13)
// it compiles, links, and refuses to open with the message docs/npu.md gives; with it, it does not.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/failure.hpp"
#include "npu/xrt/npu_xrt_device.hpp"
#include "npu/xrt/xrt_headers.hpp"  // the same headers the runtime compiled against (-isystem XRT root)
#include "taconite/embedder.hpp"

namespace taconite {
namespace {

// What the runtime's feature detection decided: the NPU path exists only with xrt::hw_context.
constexpr bool kBuiltWithHwContext = TACONITE_XRT_HAS_HW_CONTEXT != 0;

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
  if (kBuiltWithHwContext) GTEST_SKIP() << "built against XRT " << npu::built_xrt_version();
  const plan::Plan empty;
  try {
    npu::make_npu_xrt_device(empty, npu::NpuSettings{});
    FAIL() << "opened";
  } catch (const Failure& failure) {
    EXPECT_EQ(failure.error().kind, ErrorKind::Device);
    EXPECT_EQ(failure.error().message, "XRT " + npu::built_xrt_version() +
                                           " found; running on an NPU needs XRT >= 2.15 (xrt::hw_context)");
  }
}

// The two detections (xrt_hw_context.h present; XRT_VERSION_CODE) and what the library reports agree
// with the headers this build compiled against, whichever XRT that is.
TEST(NpuXrt, FeatureDetectionAgreesWithTheXrtHeadersBuiltAgainst) {
  ASSERT_GT(npu::kXrtMajor, 0) << "no XRT version header found next to xrt_device.h";
  EXPECT_EQ(npu::built_xrt_version(), std::to_string(npu::kXrtMajor) + "." + std::to_string(npu::kXrtMinor))
      << "the runtime was compiled against other XRT headers than this test";
  const bool version_has_hw_context = npu::kXrtMajor > 2 || (npu::kXrtMajor == 2 && npu::kXrtMinor >= 15);
  EXPECT_EQ(kBuiltWithHwContext, version_has_hw_context)
      << "xrt_hw_context.h " << (kBuiltWithHwContext ? "present" : "absent") << " but XRT_VERSION_CODE says "
      << npu::built_xrt_version() << " (the refusal message names 2.15 as the first with xrt::hw_context)";
}

TEST(NpuXrt, OpeningFailsWithTheOldXrtMessageExactlyWhenBuiltWithoutHwContext) {
  const plan::Plan empty;
  std::string message;
  try {
    npu::make_npu_xrt_device(empty, npu::NpuSettings{});
  } catch (const Failure& failure) {
    message = failure.error().message;
  }
  const bool refused_as_old = message.find("needs XRT >= 2.15") != std::string::npos;
  EXPECT_EQ(refused_as_old, !kBuiltWithHwContext) << "message: \"" << message << "\"";
}

}  // namespace
}  // namespace taconite
