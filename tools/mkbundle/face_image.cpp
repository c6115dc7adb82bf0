#include "face_image.hpp"

#include <algorithm>
#include <cmath>

#include "rng.hpp"

namespace taconite::mkbundle {

Tensor4 random_faces(int n, int height, int width, std::uint64_t seed) {
  Tensor4 images(n, 3, height, width);
  for (int i = 0; i < n; ++i) {
    Rng rng = Rng(seed).fork(1000 + static_cast<std::uint64_t>(i));
    // A bright oval in the middle (the face) over a darker background, shaded by a few
    // low-frequency waves per channel, plus a little pixel noise.
    const double cx = width * rng.uniform(0.45, 0.55), cy = height * rng.uniform(0.45, 0.55);
    const double rx = width * rng.uniform(0.28, 0.36), ry = height * rng.uniform(0.36, 0.44);
    for (int c = 0; c < 3; ++c) {
      double fx[4], fy[4], phase[4], amp[4];
      for (int k = 0; k < 4; ++k) {
        fx[k] = rng.uniform(-0.15, 0.15);
        fy[k] = rng.uniform(-0.15, 0.15);
        phase[k] = rng.uniform(0.0, 6.283185307179586);
        amp[k] = rng.uniform(0.05, 0.25);
      }
      const double skin = rng.uniform(0.1, 0.6), background = rng.uniform(-0.9, -0.2);
      float* plane = images.image(i) + static_cast<std::size_t>(c) * images.plane();
      for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
          const double dx = (x - cx) / rx, dy = (y - cy) / ry;
          const double inside = 1.0 / (1.0 + std::exp(8.0 * (dx * dx + dy * dy - 1.0)));
          double v = background + (skin - background) * inside;
          for (int k = 0; k < 4; ++k) v += amp[k] * std::cos(fx[k] * x + fy[k] * y + phase[k]);
          v += 0.05 * rng.normal();
          plane[static_cast<std::size_t>(y) * width + x] = static_cast<float>(std::clamp(v, -1.0, 1.0));
        }
    }
  }
  return images;
}

}  // namespace taconite::mkbundle
