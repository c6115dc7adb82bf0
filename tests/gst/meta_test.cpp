// gsttaconitemeta-1.0: registration, deep copies on COPY and SCALE, ROI params round trip.
#include <cmath>
#include <cstring>

#include "gst_test_support.hpp"

namespace {

using gsttest::embedding_metas;

std::vector<float> unit_vector(std::size_t n, float seed) {
  std::vector<float> v(n);
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = std::sin(seed + static_cast<float>(i));
    sum += static_cast<double>(v[i]) * v[i];
  }
  for (float& x : v) x = static_cast<float>(x / std::sqrt(sum));
  return v;
}

GstBuffer* buffer_with_meta(gint roi_id, const std::vector<float>& e) {
  GstBuffer* buffer = gst_buffer_new_allocate(nullptr, 64, nullptr);
  EXPECT_NE(gst_buffer_add_taconite_embedding_meta(buffer, roi_id, e.data(), static_cast<guint>(e.size()), 12.5, "IR-18",
                                                   "cpu", FALSE),
            nullptr);
  gst_buffer_get_taconite_embedding_meta(buffer)->precision = g_strdup("f32");
  return buffer;
}

void expect_same_meta(const GstTaconiteEmbeddingMeta* a, const GstTaconiteEmbeddingMeta* b) {
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  EXPECT_NE(a->embedding, b->embedding) << "a transform must deep-copy the embedding";
  EXPECT_EQ(a->roi_id, b->roi_id);
  ASSERT_EQ(a->dim, b->dim);
  EXPECT_EQ(0, std::memcmp(a->embedding, b->embedding, a->dim * sizeof(float)));
  EXPECT_EQ(a->norm, b->norm);
  EXPECT_STREQ(a->model, b->model);
  EXPECT_STREQ(a->backend, b->backend);
  EXPECT_NE(a->precision, b->precision) << "a transform must deep-copy the precision";
  EXPECT_STREQ(a->precision, b->precision);
  EXPECT_EQ(a->aligned, b->aligned);
  EXPECT_EQ(a->status, b->status);
}

TEST(EmbeddingMeta, AddAndLookUpByRoi) {
  const auto e1 = unit_vector(512, 1.0f), e2 = unit_vector(512, 2.0f);
  GstBuffer* buffer = buffer_with_meta(3, e1);
  gst_buffer_add_taconite_embedding_meta(buffer, -1, e2.data(), 512, 7.0, nullptr, nullptr, TRUE);

  GstTaconiteEmbeddingMeta* m3 = gst_buffer_get_taconite_embedding_meta_for_roi(buffer, 3);
  GstTaconiteEmbeddingMeta* whole = gst_buffer_get_taconite_embedding_meta_for_roi(buffer, -1);
  ASSERT_NE(m3, nullptr);
  ASSERT_NE(whole, nullptr);
  EXPECT_EQ(gst_buffer_get_taconite_embedding_meta_for_roi(buffer, 4), nullptr);
  EXPECT_EQ(m3->dim, 512u);
  EXPECT_EQ(0, std::memcmp(m3->embedding, e1.data(), 512 * sizeof(float)));
  EXPECT_DOUBLE_EQ(m3->norm, 12.5);
  EXPECT_STREQ(m3->model, "IR-18");
  EXPECT_STREQ(whole->model, "") << "NULL model is stored as an empty string";
  EXPECT_TRUE(whole->aligned);
  EXPECT_EQ(m3->status, GST_TACONITE_EMBEDDING_COMPUTED);
  EXPECT_NEAR(gst_taconite_embedding_meta_cosine(m3, m3), 1.0, 1e-9);
  EXPECT_LT(gst_taconite_embedding_meta_cosine(m3, whole), 0.999);
  EXPECT_EQ(embedding_metas(buffer).size(), 2u);
  gst_buffer_unref(buffer);
}

TEST(EmbeddingMeta, HasNoTagsSoEveryTransformKeepsIt) {
  EXPECT_EQ(gst_meta_api_type_get_tags(GST_TACONITE_EMBEDDING_META_API_TYPE), nullptr);
}

TEST(EmbeddingMeta, CopyIsDeepAndKeepsRoiId) {
  const auto e = unit_vector(512, 3.0f);
  GstBuffer* buffer = buffer_with_meta(42, e);
  GstBuffer* copy = gst_buffer_copy(buffer);
  expect_same_meta(gst_buffer_get_taconite_embedding_meta(buffer), gst_buffer_get_taconite_embedding_meta(copy));
  gst_buffer_unref(buffer);  // the copy must stay valid on its own
  GstTaconiteEmbeddingMeta* kept = gst_buffer_get_taconite_embedding_meta(copy);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(0, std::memcmp(kept->embedding, e.data(), 512 * sizeof(float)));
  gst_buffer_unref(copy);
}

TEST(EmbeddingMeta, PartialRegionCopyDropsIt) {
  GstBuffer* buffer = buffer_with_meta(1, unit_vector(512, 4.0f));
  GstBuffer* part = gst_buffer_copy_region(buffer, GST_BUFFER_COPY_ALL, 8, 16);
  EXPECT_EQ(gst_buffer_get_taconite_embedding_meta(part), nullptr);
  gst_buffer_unref(part);
  gst_buffer_unref(buffer);
}

TEST(EmbeddingMeta, ScaleTransformIsDeepAndKeepsRoiId) {
  GstBuffer* buffer = buffer_with_meta(9, unit_vector(512, 5.0f));
  GstBuffer* scaled = gst_buffer_new_allocate(nullptr, 256, nullptr);
  GstVideoInfo in, out;
  gst_video_info_set_format(&in, GST_VIDEO_FORMAT_RGB, 8, 8);
  gst_video_info_set_format(&out, GST_VIDEO_FORMAT_RGB, 16, 16);
  GstVideoMetaTransform transform = {&in, &out};
  GstMeta* meta = GST_META_CAST(gst_buffer_get_taconite_embedding_meta(buffer));
  ASSERT_TRUE(meta->info->transform_func(scaled, meta, buffer, gst_video_meta_transform_scale_get_quark(), &transform));
  expect_same_meta(gst_buffer_get_taconite_embedding_meta(buffer), gst_buffer_get_taconite_embedding_meta(scaled));
  gst_buffer_unref(scaled);
  gst_buffer_unref(buffer);
}

TEST(EmbeddingMeta, UnknownTransformIsRefused) {
  GstBuffer* buffer = buffer_with_meta(9, unit_vector(512, 6.0f));
  GstBuffer* dest = gst_buffer_new();
  GstMeta* meta = GST_META_CAST(gst_buffer_get_taconite_embedding_meta(buffer));
  EXPECT_FALSE(meta->info->transform_func(dest, meta, buffer, g_quark_from_static_string("some-other"), nullptr));
  EXPECT_EQ(gst_buffer_get_taconite_embedding_meta(dest), nullptr);
  gst_buffer_unref(dest);
  gst_buffer_unref(buffer);
}

TEST(EmbeddingParams, RoundTripAsLittleEndianFloat32) {
  const auto e = unit_vector(512, 7.0f);
  GstStructure* params = gst_taconite_embedding_params_new(e.data(), 512, 3.25, "IR-101", "npu-xrt", FALSE);
  EXPECT_TRUE(gst_structure_has_name(params, GST_TACONITE_EMBEDDING_PARAMS_NAME));
  guint dim = 0;
  EXPECT_TRUE(gst_structure_get_uint(params, "dim", &dim));
  EXPECT_EQ(dim, 512u);
  EXPECT_STREQ(gst_structure_get_string(params, "model"), "IR-101");

  // The bytes are little-endian float32, whatever the host.
  GBytes* bytes = static_cast<GBytes*>(g_value_get_boxed(gst_structure_get_value(params, "embedding")));
  gsize size = 0;
  const auto* raw = static_cast<const guint8*>(g_bytes_get_data(bytes, &size));
  ASSERT_EQ(size, 512 * 4u);
  guint32 bits;
  std::memcpy(&bits, &e[1], 4);
  EXPECT_EQ(raw[4], bits & 0xff);
  EXPECT_EQ(raw[7], bits >> 24);

  double norm = 0;
  gfloat* back = gst_taconite_embedding_params_get_embedding(params, &dim, &norm);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(dim, 512u);
  EXPECT_DOUBLE_EQ(norm, 3.25);
  EXPECT_EQ(0, std::memcmp(back, e.data(), 512 * sizeof(float)));
  g_free(back);

  // It serialises for gst-launch -v and message printing (1.22 writes GBytes as base64).
  gchar* text = gst_structure_to_string(params);
  EXPECT_NE(std::string(text).find("embedding=(GBytes)"), std::string::npos) << text;
  g_free(text);
  gst_structure_free(params);
}

TEST(EmbeddingParams, RejectsInconsistentStructures) {
  const auto e = unit_vector(8, 8.0f);
  GstStructure* params = gst_taconite_embedding_params_new(e.data(), 8, 1.0, "m", "b", FALSE);
  gst_structure_set(params, "dim", G_TYPE_UINT, 9u, nullptr);
  guint dim = 123;
  EXPECT_EQ(gst_taconite_embedding_params_get_embedding(params, &dim, nullptr), nullptr);
  EXPECT_EQ(dim, 0u);
  GstStructure* other = gst_structure_new_empty("not-an-embedding");
  EXPECT_EQ(gst_taconite_embedding_params_get_embedding(other, &dim, nullptr), nullptr);
  gst_structure_free(other);
  gst_structure_free(params);
}

}  // namespace
