// tensors.txt / tensors.bin (spec §3): the five-field index, dtypes, offset and size rules
// (overflow-safe), and typed views that point into the read-only mapping (zero copy).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "bundle/bundle.hpp"
#include "bundle/tensor_store.hpp"
#include "bundle_fixture.hpp"
#include "common/failure.hpp"
#include "numerics/bf16.hpp"

namespace taconite::bundle {
namespace {

using ::testing::HasSubstr;

std::string index_error(const std::string& text, std::uint64_t data_size) {
  try {
    (void)TensorStore::parse_index(text, data_size);
  } catch (const Failure& failure) {
    EXPECT_EQ(failure.error().kind, ErrorKind::Bundle);
    return failure.error().message;
  }
  ADD_FAILURE() << "index accepted: " << text;
  return "";
}

TEST(TensorIndex, ParsesAllDtypesWithSizesAndShapes) {
  const TensorStore store = TensorStore::parse_index(
      "a f32 2,3 0 24\n"
      "b bf16 4 24 8\n"     // offset 24: a multiple of 8, not of 64
      "c u8 1,1,5 32 5\n"
      "d i32 2 40 8\n"
      "e bf16 0 48 0\n",    // empty tensor
      64);
  ASSERT_EQ(store.tensors().size(), 5u);
  const TensorInfo* a = store.find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dtype, DType::F32);
  EXPECT_EQ(a->shape, (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(a->count, 6u);
  EXPECT_EQ(a->line, 1);
  EXPECT_EQ(a->location(), "tensors.txt:1");
  EXPECT_EQ(store.find("b")->dtype, DType::BF16);
  EXPECT_EQ(store.find("b")->count, 4u);
  EXPECT_EQ(store.find("c")->dtype, DType::U8);
  EXPECT_EQ(store.find("c")->count, 5u);
  EXPECT_EQ(store.find("d")->dtype, DType::I32);
  EXPECT_EQ(store.find("d")->count, 2u);
  EXPECT_EQ(store.find("e")->count, 0u);
  EXPECT_EQ(store.find("missing"), nullptr);
  EXPECT_EQ(element_size(DType::F32), 4u);
  EXPECT_EQ(element_size(DType::BF16), 2u);
  EXPECT_EQ(element_size(DType::U8), 1u);
  EXPECT_EQ(element_size(DType::I32), 4u);
}

TEST(TensorIndex, LineNumbersCountBlankAndCommentLines) {
  const TensorStore store = TensorStore::parse_index("# header\n\nx f32 1 0 4\n", 8);
  EXPECT_EQ(store.find("x")->line, 3);
  EXPECT_THAT(index_error("# header\n\nx f32 1 0 4\ny f33 1 8 4\n", 16), HasSubstr("tensors.txt:4: "));
}

// The spec has no comments in tensors.txt: a name may begin with '#'. Only a '#' line that cannot
// be a record (not five fields, or no dtype second) is skipped as a comment.
TEST(TensorIndex, NamesMayStartWithAHash) {
  const TensorStore store =
      TensorStore::parse_index("#conv.weight bf16 4 0 8\n# written by x\n#name dtype shape offset bytes\n", 8);
  ASSERT_EQ(store.tensors().size(), 1u);
  ASSERT_NE(store.find("#conv.weight"), nullptr);
  EXPECT_EQ(store.find("#conv.weight")->count, 4u);
  EXPECT_THAT(index_error("#a f32 1 0 6\n", 8), HasSubstr("tensors.txt:1: "));  // a record: checked as one
}

TEST(TensorIndex, NeedsExactlyFiveFields) {
  EXPECT_THAT(index_error("a f32 1 0\n", 8), HasSubstr("tensors.txt:1: expected 5 fields"));
  EXPECT_THAT(index_error("a f32 1 0 4 9\n", 8), HasSubstr("got 6"));
  EXPECT_THAT(index_error("a f32 1 0 4 9\n", 8), HasSubstr("\"a f32 1 0 4 9\""));
}

TEST(TensorIndex, RejectsUnknownDtypes) {
  for (const char* dtype : {"f16", "F32", "bfloat16", "i64", "u16"})
    EXPECT_THAT(index_error(std::string("a ") + dtype + " 1 0 4\n", 8), HasSubstr("unknown dtype")) << dtype;
}

TEST(TensorIndex, AcceptsOffsetsThatAreMultiplesOf8Only) {
  for (std::uint64_t offset : {0u, 8u, 16u, 56u, 64u}) {
    std::ostringstream line;
    line << "a u8 8 " << offset << " 8\n";
    EXPECT_NO_THROW((void)TensorStore::parse_index(line.str(), 128)) << offset;
  }
  for (std::uint64_t offset : {1u, 4u, 12u, 60u, 66u}) {
    std::ostringstream line;
    line << "a u8 8 " << offset << " 8\n";
    EXPECT_THAT(index_error(line.str(), 128), HasSubstr("is not a multiple of 8")) << offset;
  }
}

TEST(TensorIndex, RangeCheckCannotOverflow) {
  EXPECT_NO_THROW((void)TensorStore::parse_index("a u8 8 56 8\n", 64));  // ends exactly at the end
  EXPECT_THAT(index_error("a u8 9 56 9\n", 64), HasSubstr("exceeds tensors.bin (64 bytes)"));
  EXPECT_THAT(index_error("a u8 8 64 8\n", 64), HasSubstr("exceeds"));
  // offset + bytes wraps around 2^64 to a small number: must still be rejected.
  EXPECT_THAT(index_error("a u8 64 18446744073709551552 64\n", 64), HasSubstr("exceeds"));
  EXPECT_THAT(index_error("a u8 18446744073709551615 0 18446744073709551615\n", 64), HasSubstr("exceeds"));
  EXPECT_THAT(index_error("a u8 1 99999999999999999999999 1\n", 64), HasSubstr("bad offset"));
  EXPECT_THAT(index_error("a u8 1 0 99999999999999999999999\n", 64), HasSubstr("bad byte count"));
  EXPECT_THAT(index_error("a u8 1 -8 1\n", 64), HasSubstr("bad offset"));
  EXPECT_THAT(index_error("a u8 1 +8 1\n", 64), HasSubstr("bad offset"));
}

TEST(TensorIndex, BytesMustBeWholeElements) {
  EXPECT_THAT(index_error("a f32 1 0 6\n", 64), HasSubstr("6 bytes is not a whole number of f32 elements"));
  EXPECT_THAT(index_error("a bf16 1 0 3\n", 64), HasSubstr("of bf16 elements"));
  EXPECT_THAT(index_error("a i32 1 0 2\n", 64), HasSubstr("of i32 elements"));
}

TEST(TensorIndex, ShapeProductMustEqualElementCount) {
  EXPECT_THAT(index_error("a f32 2,4 0 24\n", 64), HasSubstr("shape holds 8 elements but the bytes hold 6"));
  EXPECT_THAT(index_error("a f32 4294967296,4294967296,2 0 24\n", 64), HasSubstr("overflows"));
  EXPECT_THAT(index_error("a f32 2,,3 0 24\n", 64), HasSubstr("bad shape"));
  EXPECT_THAT(index_error("a f32 2,3, 0 24\n", 64), HasSubstr("bad shape"));
  EXPECT_THAT(index_error("a f32 -6 0 24\n", 64), HasSubstr("bad shape"));
  // A zero dimension: zero elements, consistent with zero bytes.
  EXPECT_NO_THROW((void)TensorStore::parse_index("a f32 3,0 0 0\n", 64));
}

TEST(TensorIndex, DuplicateNamesNameBothLines) {
  EXPECT_THAT(index_error("a u8 1 0 1\nb u8 1 8 1\na u8 1 16 1\n", 64),
              HasSubstr("tensors.txt:3: tensor 'a' defined twice (first at line 1)"));
}

// Address ranges of this process's mappings of `path` (from /proc/self/maps).
bool address_is_mapped_from(const void* address, const std::filesystem::path& path) {
  std::ifstream maps("/proc/self/maps");
  const auto target = reinterpret_cast<std::uintptr_t>(address);
  for (std::string line; std::getline(maps, line);) {
    if (line.find(path.string()) == std::string::npos) continue;
    std::uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    range >> std::hex >> begin >> dash >> end;
    if (target >= begin && target < end) return true;
  }
  return false;
}

TEST(TensorStoreViews, PointIntoTheReadOnlyMappingOfTensorsBin) {
  const testing::BundleFixture fixture;
  const Bundle bundle = Bundle::open(fixture.dir());
  const TensorStore& store = bundle.tensors();

  const TensorInfo* b2 = store.find("head.b2");
  const TensorInfo* scale = store.find("a1.scale");
  ASSERT_NE(b2, nullptr);
  ASSERT_NE(scale, nullptr);
  const std::span<const float> b2_view = store.f32(*b2);
  const std::span<const std::uint16_t> scale_view = store.bf16(*scale);
  ASSERT_EQ(b2_view.size(), 16u);
  ASSERT_EQ(scale_view.size(), 16u);

  // Same bytes as written, and the views' distance equals the offsets' distance: one mapping.
  for (std::size_t i = 0; i < 16; ++i) EXPECT_EQ(b2_view[i], fixture.model().head_b2[i]) << i;
  for (std::size_t i = 0; i < 16; ++i)
    EXPECT_EQ(numerics::bf16_to_f32(scale_view[i]), fixture.model().a1_scale[i]) << i;
  EXPECT_EQ(reinterpret_cast<const char*>(b2_view.data()) - reinterpret_cast<const char*>(scale_view.data()),
            static_cast<std::ptrdiff_t>(b2->offset - scale->offset));
  EXPECT_TRUE(address_is_mapped_from(b2_view.data(), std::filesystem::canonical(fixture.dir() / "tensors.bin")));

  const std::span<const std::uint8_t> u8 = store.u8(*store.find("misc.u8"));
  EXPECT_EQ(std::vector<std::uint8_t>(u8.begin(), u8.end()), (std::vector<std::uint8_t>{1, 2, 3, 250, 255}));
  const std::span<const std::int32_t> i32 = store.i32(*store.find("misc.i32"));
  EXPECT_EQ(std::vector<std::int32_t>(i32.begin(), i32.end()), (std::vector<std::int32_t>{-7, 0, 123456789}));
}

TEST(TensorStoreViews, SurviveMovingTheBundle) {
  const testing::BundleFixture fixture;
  Bundle first = Bundle::open(fixture.dir());
  const std::span<const float> before = first.tensors().f32(*first.tensors().find("head.b2"));
  const Bundle moved = std::move(first);
  const std::span<const float> after = moved.tensors().f32(*moved.tensors().find("head.b2"));
  EXPECT_EQ(before.data(), after.data());  // the mapping moved, not the bytes
  EXPECT_EQ(after[3], fixture.model().head_b2[3]);
}

}  // namespace
}  // namespace taconite::bundle
