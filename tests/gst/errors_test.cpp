// Loading failures are element errors that say which file, which line and what to do; never crashes.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "gst_test_support.hpp"

namespace {

namespace fs = std::filesystem;

using LoadFailure = gsttest::StartFailure;

LoadFailure start_with_bundle(const char* bundle) {
  GstElement* element = gst_element_factory_make("taconiteadaface", nullptr);
  if (bundle) g_object_set(element, "bundle", bundle, "backend", gsttest::test_backend() == "cpu" ? 1 : 2, nullptr);
  return gsttest::start_paused(element);
}

fs::path scratch_dir(const char* name) {
  fs::path dir = fs::temp_directory_path() / (std::string("taconite-gst-") + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(LoadErrors, NoBundleSet) {
  const LoadFailure f = start_with_bundle(nullptr);
  EXPECT_EQ(f.state_change, GST_STATE_CHANGE_FAILURE);
  EXPECT_EQ(f.domain, GST_RESOURCE_ERROR);
  EXPECT_NE(f.message.find("No face-embedding model"), std::string::npos) << f.message;
  EXPECT_NE(f.debug.find("'model' property"), std::string::npos) << f.debug;
}

TEST(LoadErrors, MissingBundleDirectory) {
  const LoadFailure f = start_with_bundle("/nonexistent/taconite/bundle");
  EXPECT_EQ(f.state_change, GST_STATE_CHANGE_FAILURE);
  EXPECT_EQ(f.domain, GST_RESOURCE_ERROR);
  EXPECT_NE(f.message.find("/nonexistent/taconite/bundle"), std::string::npos) << f.message;
  EXPECT_NE(f.debug.find("Set the 'model' property"), std::string::npos) << "what to do: " << f.debug;
}

TEST(LoadErrors, MalformedManifestNamesFileAndLine) {
  const fs::path dir = scratch_dir("malformed");
  {
    std::ofstream manifest(dir / "manifest.txt");
    manifest << "version 1\nparam model X\nthis-is-not-a-step a b c\n";
    std::ofstream tensors(dir / "tensors.txt");
    std::ofstream bin(dir / "tensors.bin");
  }
  const LoadFailure f = start_with_bundle(dir.c_str());
  EXPECT_EQ(f.state_change, GST_STATE_CHANGE_FAILURE);
  EXPECT_EQ(f.domain, GST_RESOURCE_ERROR);
  EXPECT_EQ(f.code, GST_RESOURCE_ERROR_SETTINGS);
  EXPECT_NE(f.debug.find("manifest.txt:3"), std::string::npos) << "which file and line: " << f.debug;
  EXPECT_NE(f.debug.find("re-export"), std::string::npos) << "what to do: " << f.debug;
  fs::remove_all(dir);
}

// A user's own environment variable out of range: the error names the variable, its value and
// its range, and says what to do (not "report a bug").
TEST(LoadErrors, OutOfRangeTaconiteThreadsNamesTheVariableValueAndRange) {
  if (gsttest::test_bundle().empty()) GTEST_SKIP() << "TACONITE_TEST_BUNDLE not set (meson test sets it)";
  g_setenv("TACONITE_THREADS", "100000", TRUE);
  const LoadFailure f = start_with_bundle(gsttest::test_bundle().c_str());
  g_unsetenv("TACONITE_THREADS");
  EXPECT_EQ(f.state_change, GST_STATE_CHANGE_FAILURE);
  EXPECT_EQ(f.domain, GST_RESOURCE_ERROR);
  EXPECT_NE(f.debug.find("environment variable TACONITE_THREADS='100000'"), std::string::npos) << f.debug;
  EXPECT_NE(f.debug.find("allowed 1.."), std::string::npos) << "the range: " << f.debug;
  EXPECT_NE(f.debug.find("TACONITE_* environment variables"), std::string::npos) << "what to do: " << f.debug;
  EXPECT_EQ(f.debug.find("bug"), std::string::npos) << f.debug;
}

TEST(LoadErrors, ElementRecoversAfterAFailedLoad) {
  // A failed READY->PAUSED leaves the element usable: the same instance can be fixed and retried.
  GstElement* element = gst_element_factory_make("taconiteadaface", nullptr);
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(element, bus);
  EXPECT_EQ(gst_element_set_state(element, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
  auto engine = gsttest::install_fake_engine();
  g_object_set(element, "bundle", "fake", nullptr);
  EXPECT_NE(gst_element_set_state(element, GST_STATE_PAUSED), GST_STATE_CHANGE_FAILURE);
  gst_element_set_state(element, GST_STATE_NULL);
  gsttest::uninstall_fake_engine();
  gst_element_set_bus(element, nullptr);
  gst_object_unref(bus);
  gst_object_unref(element);
}

}  // namespace
