// read_bounded_file refuses what is not a regular file (without blocking on a FIFO) and files over
// the limit, and reads the rest whole.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "bounded_file.hpp"

namespace {

namespace fs = std::filesystem;
using taconite::vision::read_bounded_file;

fs::path scratch_dir() {
  const fs::path dir = fs::temp_directory_path() / ("taconite-bounded-file-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

TEST(BoundedFile, ReadsARegularFileWhole) {
  const fs::path path = scratch_dir() / "five.bin";
  std::ofstream(path) << "12345";
  std::vector<unsigned char> bytes;
  EXPECT_EQ(read_bounded_file(path, 5, bytes), "");
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "12345");
  EXPECT_NE(read_bounded_file(path, 4, bytes).find("more than the limit of 4"), std::string::npos);
}

TEST(BoundedFile, RefusesFifosDirectoriesDevicesAndMissingFiles) {
  const fs::path fifo = scratch_dir() / "fifo";
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::vector<unsigned char> bytes;
  EXPECT_EQ(read_bounded_file(fifo, 1 << 20, bytes), "is a FIFO, not a regular file");  // no writer: must not block
  EXPECT_EQ(read_bounded_file(scratch_dir(), 1 << 20, bytes), "is a directory, not a regular file");
  EXPECT_EQ(read_bounded_file("/dev/zero", 1 << 20, bytes), "is a device, not a regular file");
  EXPECT_EQ(read_bounded_file(scratch_dir() / "missing", 1 << 20, bytes), "No such file or directory");
  fs::remove_all(scratch_dir());
}

}  // namespace
