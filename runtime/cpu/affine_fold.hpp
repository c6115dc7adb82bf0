// Folding a per-input-channel affine (x*s + t, applied before the conv's zero padding) into the
// conv that reads it, exactly. With V[o][ky][kx] = sum_i W[o][i][ky][kx] * t[i]:
//   conv_W(pad0(s*x + t)) = conv_{W*s}(pad0(x)) + sum of V over the taps that fall inside the input
// because the padding is zeros, not t. So: weights W*s; bias b + (sum of V over all taps), exact
// wherever every tap is inside; and on the output border, where some taps read padding, a
// correction of -(sum of V over those taps). Pure arithmetic (no oneDNN), so it is testable alone.
#pragma once

#include <span>
#include <vector>

namespace taconite::cpu {

struct ConvGeometry {
  int oc = 0, ic = 0, kernel = 0, stride = 1, in_h = 0, in_w = 0;  // padding kernel/2 on every side
  int pad() const { return kernel / 2; }
  int out_h() const { return (in_h + 2 * pad() - kernel) / stride + 1; }
  int out_w() const { return (in_w + 2 * pad() - kernel) / stride + 1; }
};

// What to add to the output pixels some of whose taps read padding: pixel (y, x) gets
// corrections[table * oc + o] added to channel o. Few distinct tables (corners and edges).
struct BorderCorrection {
  struct Pixel {
    int y = 0, x = 0, table = 0;
  };
  struct Taps {
    unsigned rows = 0, cols = 0;  // bit k: kernel row / column k reads padding
  };
  int oc = 0;
  std::vector<Pixel> pixels;
  std::vector<Taps> outside;       // per table
  std::vector<float> corrections;  // outside.size() * oc values
};

// The border pixels of a conv and the taps each reads from padding, with zero corrections.
BorderCorrection border_pixels(const ConvGeometry& g);

struct AffineFold {
  std::vector<float> bias;  // oc values: the conv's own bias (or 0) plus the sum of V over all taps
  BorderCorrection border;
};

// Scales `oihw` (oc x ic x k x k) in place by scale[i] on input channel i and returns the bias and
// the border correction. `bias` is the conv's own bias (oc values) or empty.
AffineFold fold_input_affine(const ConvGeometry& g, std::span<float> oihw, std::span<const float> scale,
                             std::span<const float> shift, std::span<const float> bias);

}  // namespace taconite::cpu
