// taconite-mkbundle's command line: exit 2 on usage errors, 1 with one line on stderr on
// errors, 0 and a one-line summary on success.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "test_bundles.hpp"

namespace taconite::mkbundle {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int status;
  std::string out, err;
};

CliRun run(const std::string& args) {
  const char* exe = std::getenv("MKBUNDLE_EXE");
  if (exe == nullptr) return {-1, "", ""};
  const fs::path out = testing::scratch_dir("cli-stdout"), err = testing::scratch_dir("cli-stderr");
  const std::string command = std::string(exe) + " " + args + " >" + out.string() + " 2>" + err.string();
  const int raw = std::system(command.c_str());
  auto slurp = [](const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -2, slurp(out), slurp(err)};
}

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

class MkbundleCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::getenv("MKBUNDLE_EXE") == nullptr) GTEST_SKIP() << "MKBUNDLE_EXE is not set (run through meson test)";
  }
};

TEST_F(MkbundleCli, UsageErrorsExitTwo) {
  EXPECT_EQ(run("").status, 2);
  EXPECT_EQ(run("--model ir-tiny").status, 2);
  EXPECT_EQ(run("--out /tmp/x").status, 2);
  const CliRun bad_model = run("--model ir99 --out /tmp/x");
  EXPECT_EQ(bad_model.status, 2);
  EXPECT_NE(bad_model.err.find("ir99"), std::string::npos);
  EXPECT_EQ(run("--model ir-tiny --out /tmp/x --grouping diagonal").status, 2);
  EXPECT_EQ(run("--model ir-tiny --out /tmp/x --seed -3").status, 2);
  EXPECT_EQ(run("--model ir-tiny --out /tmp/x --calib-batch 0").status, 2);
  EXPECT_EQ(run("--model ir-tiny --out /tmp/x --gain abc").status, 2);
  EXPECT_EQ(run("--model ir-tiny --out /tmp/x --bogus").status, 2);
  EXPECT_EQ(run("--help").status, 0);
}

TEST_F(MkbundleCli, ErrorsExitOneWithOneLine) {
  const fs::path file = testing::scratch_dir("plain-file");
  std::ofstream(file) << "x";
  const CliRun not_dir = run("--model ir-tiny --out " + file.string());
  EXPECT_EQ(not_dir.status, 1);
  EXPECT_EQ(lines(not_dir.err), 1) << not_dir.err;
  EXPECT_NE(not_dir.err.find(file.string()), std::string::npos);

  const fs::path full = testing::scratch_dir("non-empty");
  fs::create_directories(full);
  std::ofstream(full / "keep.txt") << "mine";
  const CliRun not_empty = run("--model ir-tiny --out " + full.string());
  EXPECT_EQ(not_empty.status, 1);
  EXPECT_EQ(lines(not_empty.err), 1) << not_empty.err;
  EXPECT_TRUE(fs::exists(full / "keep.txt"));
}

TEST_F(MkbundleCli, WritesABundleAndPrintsOneSummaryLine) {
  const fs::path dir = testing::scratch_dir("cli-bundle");
  const CliRun ok = run("--model ir-tiny --out " + dir.string() + " --seed 3 --grouping whole --calib-batch 1 --gain 0.25");
  ASSERT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(lines(ok.out), 1) << ok.out;
  EXPECT_NE(ok.out.find("IR-tiny"), std::string::npos);
  EXPECT_NE(ok.out.find("bit-identical"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "manifest.txt"));
  EXPECT_TRUE(fs::exists(dir / "tensors.bin"));
  // --force replaces the bundle in place.
  EXPECT_EQ(run("--model ir-tiny --out " + dir.string() + " --grouping whole --calib-batch 1 --force").status, 0);
}

}  // namespace
}  // namespace taconite::mkbundle
