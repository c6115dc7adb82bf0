#include "bundle_cache.hpp"

#include <cstdlib>
#include <map>

#include <gtest/gtest.h>
#include <unistd.h>

namespace taconite::cpu_test {

namespace {

class TempRoot {
 public:
  TempRoot() {
    std::string pattern = (std::filesystem::temp_directory_path() / "taconite-cpu-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempRoot() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

TempRoot& root() {
  static TempRoot instance;
  return instance;
}

}  // namespace

std::filesystem::path scratch_dir(const std::string& name) {
  const std::filesystem::path dir = root().path() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// --calib-batch 2 (default 4) halves the writer's calibration time; the bundles stay calibrated.
std::filesystem::path test_bundle(const std::string& model, const std::string& grouping, int seed) {
  static std::map<std::string, std::filesystem::path> made;
  const std::string key = model + "-" + grouping + "-" + std::to_string(seed);
  if (auto it = made.find(key); it != made.end()) return it->second;
  const char* mkbundle = std::getenv("TACONITE_MKBUNDLE");
  EXPECT_NE(mkbundle, nullptr) << "TACONITE_MKBUNDLE must name the taconite-mkbundle executable";
  if (mkbundle == nullptr || root().path().empty()) return {};
  const std::filesystem::path out = root().path() / key;
  const std::string command = std::string(mkbundle) + " --model " + model + " --grouping " + grouping + " --seed " +
                              std::to_string(seed) + " --calib-batch 2 --out " + out.string() + " > " + (out.string() + ".log") + " 2>&1";
  const int status = std::system(command.c_str());
  EXPECT_EQ(status, 0) << command;
  if (status != 0) return {};
  made[key] = out;
  return out;
}

}  // namespace taconite::cpu_test
