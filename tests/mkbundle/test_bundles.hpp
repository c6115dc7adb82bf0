// Bundles written once per (model, grouping) and shared by the tests of this binary; removed at exit.
#pragma once

#include <filesystem>

#include "grouping.hpp"
#include "ir_network.hpp"
#include "make_bundle.hpp"

namespace taconite::mkbundle::testing {

struct WrittenBundle {
  std::filesystem::path dir;
  MakeReport report;
};

const WrittenBundle& written_bundle(ModelKind model, Grouping grouping, int calib_batch = 2);

// A fresh empty directory under this process's scratch root.
std::filesystem::path scratch_dir(const std::string& name);

}  // namespace taconite::mkbundle::testing
