// File errors say what is wrong (not just "missing"), and reading a file that shrinks after it
// was opened is an Io error, not a short or out-of-bounds read.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>

#include "bundle/regular_file.hpp"
#include "bundle_fixture.hpp"
#include "common/failure.hpp"

namespace taconite::bundle {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// The tests run as root, which bypasses file modes: EACCES is checked on the wording alone.
TEST(FileProblem, NamesTheErrno) {
  const fs::path nowhere = "/nonexistent/file";
  EXPECT_EQ(file_problem(nowhere, EACCES), "permission denied");
  EXPECT_EQ(file_problem(nowhere, EPERM), "permission denied");
  EXPECT_EQ(file_problem(nowhere, ENOENT), "does not exist");
  EXPECT_EQ(file_problem(nowhere, EISDIR), "is a directory, not a regular file");
}

TEST(FileProblem, TellsKindsOfNonRegularFilesApart) {
  const testing::BundleFixture fixture;  // a scratch directory with real files
  const fs::path dir = fixture.outside();
  fs::create_directories(dir);
  EXPECT_EQ(regular_file_problem(fixture.dir() / "manifest.txt"), "");
  EXPECT_EQ(regular_file_problem(dir), "is a directory, not a regular file");
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(regular_file_problem(dir / "fifo"), "is a FIFO, not a regular file");
  fs::create_symlink("no-such-target", dir / "dangling");
  EXPECT_THAT(regular_file_problem(dir / "dangling"), HasSubstr("is a dangling symlink"));
  EXPECT_EQ(regular_file_problem(dir / "absent"), "does not exist");
  try {
    (void)RegularFile::open(dir / "fifo");  // O_NONBLOCK: must not hang
    ADD_FAILURE() << "a FIFO opened as a regular file";
  } catch (const Failure& failure) {
    EXPECT_EQ(failure.error().kind, ErrorKind::Io);
    EXPECT_THAT(failure.error().message, HasSubstr("fifo: is a FIFO, not a regular file"));
  }
}

TEST(RegularFile, ReadingAFileThatShrankIsAnIoError) {
  const testing::BundleFixture fixture;
  const fs::path path = fixture.outside() / "shrinks.bin";
  fs::create_directories(fixture.outside());
  std::ofstream(path) << std::string(4096, 'x');
  const RegularFile file = RegularFile::open(path);
  ASSERT_EQ(file.size(), 4096u);
  ASSERT_EQ(::truncate(path.c_str(), 100), 0);
  std::string bytes(4096, '\0');
  try {
    file.read_all(bytes.data());
    ADD_FAILURE() << "a shrunk file read as whole";
  } catch (const Failure& failure) {
    EXPECT_EQ(failure.error().kind, ErrorKind::Io);
    EXPECT_THAT(failure.error().message, HasSubstr("shrank while it was read (100 of 4096 bytes)"));
  }
}

}  // namespace
}  // namespace taconite::bundle
