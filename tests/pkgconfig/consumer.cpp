// A minimal application of the installed library, built only with `pkg-config --cflags --libs`:
// every installed public header compiles, and a load of a missing bundle is a clean Io error.
#include <taconite/inspect.hpp>
#include <taconite/npu_driver.hpp>
#include <taconite/taconite.hpp>

#include <cstdio>

int main() {
  const float values[] = {1.0f, 0.0f};
  const double same = taconite::cosine(values, values);
  const auto missing = taconite::Model::load("/nonexistent/taconite-bundle");
  std::printf("backends %zu, cosine %.1f, missing bundle: %s\n", taconite::compiled_backends().size(), same,
              missing ? "loaded?!" : taconite::to_string(missing.error().kind));
  return same > 0.99 && !taconite::compiled_backends().empty() && !missing &&
                 missing.error().kind == taconite::ErrorKind::Io
             ? 0
             : 1;
}
