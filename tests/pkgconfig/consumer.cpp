// A minimal application of the installed library, built only with `pkg-config --cflags --libs`.
#include <taconite/taconite.hpp>

#include <cstdio>

int main() {
  const float values[] = {1.0f, 0.0f};
  const double same = taconite::cosine(values, values);
  std::printf("backends %zu, cosine %.1f\n", taconite::compiled_backends().size(), same);
  return same > 0.99 && !taconite::compiled_backends().empty() ? 0 : 1;
}
