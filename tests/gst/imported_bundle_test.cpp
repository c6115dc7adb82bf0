// taconiteadaface with a bundle taconite-import wrote from an AdaFace IR-18 checkpoint (trained on
// BGR input, param input_channel_order BGR): channel-order=auto, the default, follows the bundle, and
// the element's embedding of the bundle's own reference face matches the original PyTorch forward.
#include <cmath>
#include <string>

#include "gst_test_support.hpp"
#include "taconite/embedder.hpp"
#include "taconite/inspect.hpp"

namespace {

using namespace gsttest;

std::string imported_bundle() {
  const char* dir = g_getenv("TACONITE_TEST_IMPORTED_BUNDLE");
  return dir ? dir : "";
}

class ImportedBundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (imported_bundle().empty())
      GTEST_SKIP() << "TACONITE_TEST_IMPORTED_BUNDLE not set (meson sets it when python3-torch is installed)";
    taconite::LoadOptions options;
    options.backend = "cpu";
    auto loaded = taconite::IrEmbedder::load(imported_bundle(), options);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    ASSERT_EQ(taconite::inspect::param(loaded.value(), "input_channel_order"), "BGR");
    face_bgr_ = taconite::inspect::reference_f32(loaded.value(), "ref.input_chw");
    original_ = taconite::inspect::reference_f32(loaded.value(), "ref.cpu_embedding");
    ASSERT_EQ(face_bgr_.size(), 3u * 112 * 112);
    ASSERT_EQ(original_.size(), 512u);
  }

  // The RGB pixels of the reference face: ref.input_chw holds ((p/255)-0.5)/0.5 in B,G,R planes.
  std::array<std::uint8_t, 3> pixel(int x, int y) const {
    std::array<std::uint8_t, 3> rgb{};
    for (int c = 0; c < 3; ++c) {
      const float v = face_bgr_[(static_cast<std::size_t>(2 - c) * 112 + y) * 112 + x];
      rgb[static_cast<std::size_t>(c)] = static_cast<std::uint8_t>(std::lround((v * 0.5f + 0.5f) * 255.0f));
    }
    return rgb;
  }

  // The element's embedding of the reference face; order "" leaves channel-order at its default.
  // precision=f32: each load of `auto` races its candidates afresh and may pick other numerics
  // (bf16 and f32-winograd are close enough on AVX-512 that a busy machine flips the choice), which
  // differ in the last digits.
  std::vector<float> element_embedding(const std::string& order) {
    std::vector<std::pair<std::string, std::string>> props{
        {"bundle", imported_bundle()}, {"backend", "cpu"}, {"precision", "f32"}, {"input-mode", "crops"}};
    if (!order.empty()) props.emplace_back("channel-order", order);
    GstHarness* h = adaface_harness(props);
    gst_harness_set_src_caps_str(h, "video/x-raw,format=RGB,width=112,height=112,framerate=30/1");
    GstBuffer* out = gst_harness_push_and_pull(h, rgb_buffer(112, 112, [this](int x, int y) { return pixel(x, y); }));
    std::vector<float> e;
    if (GstTaconiteEmbeddingMeta* meta = out ? gst_buffer_get_taconite_embedding_meta(out) : nullptr)
      e.assign(meta->embedding, meta->embedding + meta->dim);
    if (out) gst_buffer_unref(out);
    gst_harness_teardown(h);
    return e;
  }

  std::vector<float> face_bgr_, original_;
};

TEST_F(ImportedBundleTest, DefaultChannelOrderFollowsTheBundleAndMatchesTheOriginalForward) {
  const std::vector<float> by_default = element_embedding("");
  ASSERT_EQ(by_default.size(), 512u);
  EXPECT_GE(taconite::cosine(by_default, original_), 0.999);
  EXPECT_EQ(by_default, element_embedding("bgr")) << "auto must resolve to the bundle's BGR";
}

TEST_F(ImportedBundleTest, ExplicitRgbOverridesTheBundle) {
  const std::vector<float> rgb = element_embedding("rgb");
  ASSERT_EQ(rgb.size(), 512u);
  EXPECT_LT(taconite::cosine(rgb, original_), 0.999) << "swapped planes must change the embedding";
}

}  // namespace
