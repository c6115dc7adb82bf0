// A tiny program linked against the public library with run path $ORIGIN/lib, packaged by
// package_portable_test.sh and run from the portable directory.
#include <cstdio>

#include "taconite/embedder.hpp"

int main() {
  for (const std::string& name : taconite::compiled_backends()) std::printf("%s\n", name.c_str());
  return 0;
}
