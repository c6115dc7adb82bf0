#include "test_bundles.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <tuple>

namespace taconite::mkbundle::testing {

namespace {

namespace fs = std::filesystem;

fs::path& scratch_root() {
  static fs::path root = [] {
    const fs::path p = fs::temp_directory_path() / ("taconite-mkbundle-test-" + std::to_string(::getpid()));
    fs::remove_all(p);
    fs::create_directories(p);
    return p;
  }();
  return root;
}

class ScratchCleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(scratch_root(), ec);
  }
};
[[maybe_unused]] const auto* const kCleanup = ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

}  // namespace

std::filesystem::path scratch_dir(const std::string& name) {
  const fs::path p = scratch_root() / name;
  fs::remove_all(p);
  return p;
}

const WrittenBundle& written_bundle(ModelKind model, Grouping grouping, int calib_batch) {
  static std::map<std::tuple<ModelKind, Grouping, int>, WrittenBundle> cache;
  const auto key = std::make_tuple(model, grouping, calib_batch);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  MakeOptions options;
  options.model = model;
  options.grouping = grouping;
  options.calib_batch = calib_batch;
  options.seed = 11;
  options.out = scratch_dir(model_param_name(model) + "-" + to_string(grouping) + "-" + std::to_string(calib_batch));
  WrittenBundle written{options.out, make_bundle(options)};
  return cache.emplace(key, std::move(written)).first->second;
}

}  // namespace taconite::mkbundle::testing
