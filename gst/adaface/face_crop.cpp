#include "face_crop.hpp"

#include "face_preprocess.hpp"

namespace taconite::gst {

void face_to_chw(const vision::ImageView& frame, const FaceJob& face, double margin, int width, int height,
                 const vision::PixelNormalisation& norm, std::vector<float>& chw) {
  const vision::Region region = face.whole_buffer ? vision::Region{0, 0, frame.width, frame.height}
                                                  : vision::square_with_margin(face.box, margin);
  vision::region_to_chw(frame, region, width, height, norm, chw);
}

}  // namespace taconite::gst
