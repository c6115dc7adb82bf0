// An opened bundle directory: its manifest records and tensor store. Container rules only
// (spec §1–§3); step semantics live in plan/.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "bundle/manifest.hpp"
#include "bundle/tensor_store.hpp"

namespace taconite::bundle {

class Bundle {
 public:
  // Throws Failure(Io|Bundle). An old plan.txt-only bundle gets the re-export message. Io errors
  // say what is wrong with the path (does not exist, permission denied, not a directory, ...).
  static Bundle open(const std::filesystem::path& dir);

  const std::filesystem::path& dir() const { return dir_; }
  const Manifest& manifest() const { return manifest_; }
  const TensorStore& tensors() const { return tensors_; }
  TensorStore& tensors() { return tensors_; }

  // Resolves a file named by `record` (relative to the bundle) and checks that it stays inside
  // the bundle after normalisation and symlink resolution. Throws Failure(Bundle) naming the
  // record's line. With must_exist, a path that is not a regular file is an error too (saying
  // whether it does not exist, is a directory, cannot be accessed, ...).
  std::filesystem::path resolve_inside(std::string_view relative, int line, std::string_view line_text,
                                       bool must_exist) const;

 private:
  std::filesystem::path dir_;  // canonical
  Manifest manifest_;
  TensorStore tensors_;
};

}  // namespace taconite::bundle
