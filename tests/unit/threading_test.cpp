// Thread counts are checked in one place (resolve_thread_count, common/settings.cpp): LoadOptions::threads and
// TACONITE_THREADS outside 1..max(hardware threads, kMaxThreads) are Input errors, never a crash
// or an OpenMP team of 100000 threads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "../npu/scoped_env.hpp"
#include "bundle_fixture.hpp"
#include "common/failure.hpp"
#include "common/settings.hpp"
#include "common/threading.hpp"
#include "taconite/embedder.hpp"

namespace taconite::testing {
namespace {

using ::testing::HasSubstr;
using npu_test::ScopedEnv;

std::string input_error(int requested) {
  try {
    (void)resolve_thread_count(requested);
  } catch (const Failure& failure) {
    EXPECT_EQ(failure.error().kind, ErrorKind::Input);
    return failure.error().message;
  }
  ADD_FAILURE() << "thread count accepted: " << requested;
  return "";
}

int all_cores() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

TEST(ThreadCount, ExplicitCountsInRangeAreKept) {
  ScopedEnv env("TACONITE_THREADS", "");
  EXPECT_EQ(resolve_thread_count(1), 1);
  EXPECT_EQ(resolve_thread_count(kMaxThreads), kMaxThreads);
  EXPECT_EQ(resolve_thread_count(0), all_cores());
  EXPECT_EQ(max_thread_count(), std::max(kMaxThreads, all_cores()));
}

TEST(ThreadCount, OutOfRangeRequestIsAnInputErrorNamingValueAndRange) {
  const std::string range = "1.." + std::to_string(max_thread_count());
  for (int bad : {max_thread_count() + 1, 100000, 2147483647, -1}) {
    const std::string message = input_error(bad);
    EXPECT_THAT(message, HasSubstr("threads " + std::to_string(bad)));
    EXPECT_THAT(message, HasSubstr(range));
  }
}

TEST(ThreadCount, EnvironmentValueIsCheckedToo) {
  {
    ScopedEnv env("TACONITE_THREADS", "3");
    EXPECT_EQ(resolve_thread_count(0), 3);
    EXPECT_EQ(resolve_thread_count(2), 2);  // an explicit count wins over the environment
  }
  for (const char* bad : {"100000", "2147483647", "99999999999", "-2", "four", "2x"}) {
    ScopedEnv env("TACONITE_THREADS", bad);
    const std::string message = input_error(0);
    EXPECT_THAT(message, HasSubstr(std::string("TACONITE_THREADS='") + bad + "'"));
    EXPECT_THAT(message, HasSubstr("1.." + std::to_string(max_thread_count())));
  }
}

TEST(ThreadCount, LoadRefusesAnAbsurdCountBeforeStartingThreads) {
  const BundleFixture fixture;
  LoadOptions options;
  options.backend = "cpu-reference";
  options.threads = 100000;
  auto loaded = IrEmbedder::load(fixture.dir(), options);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().kind, ErrorKind::Input);
  EXPECT_THAT(loaded.error().message, HasSubstr("threads 100000"));

  ScopedEnv env("TACONITE_THREADS", "100000");
  options.threads = 0;
  auto from_env = IrEmbedder::load(fixture.dir(), options);
  ASSERT_FALSE(from_env.ok());
  EXPECT_EQ(from_env.error().kind, ErrorKind::Input);
  EXPECT_THAT(from_env.error().message, HasSubstr("TACONITE_THREADS='100000'"));
}

}  // namespace
}  // namespace taconite::testing
