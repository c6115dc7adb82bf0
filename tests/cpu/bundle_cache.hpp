// Test bundles written once per test process by the real taconite-mkbundle (path in
// TACONITE_MKBUNDLE) into a temporary directory removed at exit.
#pragma once

#include <filesystem>
#include <string>

namespace taconite::cpu_test {

// --model `model` --grouping `grouping` --seed `seed`; fails the calling test if mkbundle fails.
std::filesystem::path test_bundle(const std::string& model, const std::string& grouping = "tile", int seed = 1);

// A fresh empty directory under the process's temporary root.
std::filesystem::path scratch_dir(const std::string& name);

}  // namespace taconite::cpu_test
