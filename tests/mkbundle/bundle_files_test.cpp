// The files the writer produces, checked against the format itself (parsed here with a few lines
// of independent code): kernels per ctx with matching descriptors, 64-byte aligned tensors, the
// tiled reference input, the stem's zero pattern, width padding and multi-record convs.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "numerics/bf16.hpp"
#include "placeholder_kernel.hpp"
#include "test_bundles.hpp"

namespace taconite::mkbundle {
namespace {

namespace fs = std::filesystem;
using testing::written_bundle;

struct Line {
  std::string tag;
  std::vector<std::string> fields;
  std::map<std::string, std::string> kv;
  long num(const std::string& key) const { return std::stol(kv.at(key)); }
};

std::vector<Line> read_manifest(const fs::path& dir) {
  std::ifstream in(dir / "manifest.txt");
  std::vector<Line> lines;
  std::string text;
  while (std::getline(in, text)) {
    std::istringstream tokens(text);
    Line line;
    if (!(tokens >> line.tag) || line.tag[0] == '#') continue;
    for (std::string f; tokens >> f;) {
      line.fields.push_back(f);
      if (auto eq = f.find('='); eq != std::string::npos) line.kv[f.substr(0, eq)] = f.substr(eq + 1);
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

struct TensorEntry {
  std::string dtype;
  std::size_t offset, bytes;
};

std::map<std::string, TensorEntry> read_tensor_index(const fs::path& dir) {
  std::ifstream in(dir / "tensors.txt");
  std::map<std::string, TensorEntry> index;
  std::string name, dtype, shape;
  std::size_t offset, bytes;
  while (in >> name >> dtype >> shape >> offset >> bytes) index[name] = {dtype, offset, bytes};
  return index;
}

std::vector<char> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

template <typename T>
std::vector<T> tensor_values(const fs::path& dir, const TensorEntry& e) {
  std::ifstream in(dir / "tensors.bin", std::ios::binary);
  in.seekg(static_cast<std::streamoff>(e.offset));
  std::vector<T> values(e.bytes / sizeof(T));
  in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(e.bytes));
  return values;
}

class BundleFiles : public ::testing::TestWithParam<ModelKind> {
 protected:
  const testing::WrittenBundle& bundle() const { return written_bundle(GetParam(), Grouping::Tile); }
};

TEST_P(BundleFiles, HeaderNamesTheModelAndVersion) {
  const std::vector<Line> lines = read_manifest(bundle().dir);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0].tag, "version");
  EXPECT_EQ(lines[0].fields, std::vector<std::string>{"1"});
  bool model = false;
  for (const Line& l : lines)
    if (l.tag == "param" && l.fields.at(0) == "model") model = l.fields.at(1) == model_param_name(GetParam());
  EXPECT_TRUE(model);
  EXPECT_EQ(lines.back().tag, "head");
}

TEST_P(BundleFiles, EveryCtxHasKernelFilesDescribingItsConvShape) {
  const fs::path dir = bundle().dir;
  const std::vector<Line> lines = read_manifest(dir);
  const auto tensors = read_tensor_index(dir);
  std::map<std::string, std::string> xclbins;  // key -> file
  for (const Line& l : lines)
    if (l.tag == "xclbin") {
      ASSERT_EQ(l.fields.size(), 3u);
      EXPECT_EQ(l.fields[2], "MLIR_AIE");
      xclbins[l.fields[0]] = l.fields[1];
      const std::vector<char> x = read_bytes(dir / l.fields[1]);
      ASSERT_GE(x.size(), 496u);
      EXPECT_EQ(std::memcmp(x.data(), "xclbin2\0", 8), 0);
    }
  std::map<std::string, ConvDescriptor> seen;
  int convs = 0;
  for (const Line& l : lines) {
    if (l.tag != "conv") continue;
    ++convs;
    const std::string ctx = l.kv.at("ctx");
    ASSERT_TRUE(xclbins.count(ctx)) << ctx;
    EXPECT_EQ(l.kv.at("insts"), "kernels/" + ctx + ".insts.bin");
    const std::vector<char> raw = read_bytes(dir / l.kv.at("insts"));
    ASSERT_EQ(raw.size(), 4 * kPlaceholderWords);
    std::vector<std::uint32_t> words(kPlaceholderWords);
    std::memcpy(words.data(), raw.data(), raw.size());
    const std::optional<ConvDescriptor> d = decode_descriptor(words);
    ASSERT_TRUE(d.has_value());
    const std::size_t wt_elements = tensors.at(l.kv.at("wt")).bytes / 2;
    const std::uint32_t kernel = wt_elements == static_cast<std::size_t>(l.num("oc") * l.num("icg") * 9) ? 3 : 1;
    const ConvDescriptor expected{kernel,
                                  static_cast<std::uint32_t>(l.num("icg")),
                                  static_cast<std::uint32_t>(l.num("oc")),
                                  static_cast<std::uint32_t>(l.num("h")),
                                  static_cast<std::uint32_t>(l.num("w")),
                                  static_cast<std::uint32_t>(l.num("wp")),
                                  static_cast<std::uint32_t>(l.num("owp"))};
    EXPECT_EQ(*d, expected) << "ctx " << ctx;
    seen[ctx] = *d;
  }
  EXPECT_EQ(seen.size(), xclbins.size()) << "every xclbin record is used";
  // One ctx per distinct shape: no two keys describe the same conv.
  std::set<std::vector<std::uint32_t>> shapes;
  for (const auto& [key, d] : seen) shapes.insert({d.kernel, d.icg, d.oc, d.h, d.w, d.wp, d.owp});
  EXPECT_EQ(shapes.size(), seen.size());
  EXPECT_EQ(convs, bundle().report.conv_records);
  EXPECT_EQ(static_cast<int>(seen.size()), bundle().report.contexts);
}

TEST_P(BundleFiles, WidthsArePaddedOnlyAtFourteenAndSeven) {
  for (const Line& l : read_manifest(bundle().dir)) {
    if (l.tag != "conv") continue;
    const long w = l.num("w"), expected = w == 14 ? 16 : w == 7 ? 8 : w;
    EXPECT_EQ(l.num("wp"), expected) << "w=" << w;
    EXPECT_EQ(l.num("owp"), expected) << "w=" << w;
  }
}

TEST_P(BundleFiles, TensorsAreAlignedDisjointAndInsideTheBlob) {
  const fs::path dir = bundle().dir;
  const auto index = read_tensor_index(dir);
  const std::size_t blob = fs::file_size(dir / "tensors.bin");
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  for (const auto& [name, e] : index) {
    EXPECT_EQ(e.offset % 64, 0u) << name;
    EXPECT_LE(e.offset + e.bytes, blob) << name;
    ranges.emplace_back(e.offset, e.offset + e.bytes);
  }
  std::sort(ranges.begin(), ranges.end());
  for (std::size_t i = 1; i < ranges.size(); ++i) EXPECT_LE(ranges[i - 1].second, ranges[i].first);
  for (const char* ref : {"ref.input", "ref.input_chw", "ref.npu_embedding", "ref.cpu_embedding"})
    EXPECT_TRUE(index.count(ref)) << ref;
  EXPECT_EQ(index.at("ref.input").dtype, "bf16");
  EXPECT_EQ(index.at("ref.npu_embedding").dtype, "f32");
}

TEST_P(BundleFiles, RefInputIsTheRoundedTiledImageWithZeroPadChannels) {
  const fs::path dir = bundle().dir;
  const auto index = read_tensor_index(dir);
  const auto tiled = tensor_values<std::uint16_t>(dir, index.at("ref.input"));
  const auto chw = tensor_values<float>(dir, index.at("ref.input_chw"));
  ASSERT_EQ(tiled.size(), 8u * 112 * 112);
  ASSERT_EQ(chw.size(), 3u * 112 * 112);
  float lo = 0, hi = 0;
  for (std::size_t y = 0; y < 112; ++y)
    for (std::size_t x = 0; x < 112; ++x)
      for (std::size_t c = 0; c < 8; ++c) {
        const std::uint16_t v = tiled[(y * 112 + x) * 8 + c];  // [H][C/8=1][W][8]
        if (c >= 3) {
          EXPECT_EQ(v, 0) << "pad channel " << c;
        } else {
          const float f = chw[(c * 112 + y) * 112 + x];
          lo = std::min(lo, f);
          hi = std::max(hi, f);
          EXPECT_EQ(v, numerics::f32_to_bf16(f));
        }
      }
  EXPECT_GE(lo, -1.0f);
  EXPECT_LE(hi, 1.0f);
  EXPECT_LT(lo, -0.2f);  // a real image, not a constant
  EXPECT_GT(hi, 0.2f);
}

TEST_P(BundleFiles, StemWeightsHaveTheAssumedZeroPattern) {
  const fs::path dir = bundle().dir;
  const std::vector<Line> lines = read_manifest(dir);
  const auto it = std::find_if(lines.begin(), lines.end(), [](const Line& l) { return l.tag == "conv"; });
  ASSERT_NE(it, lines.end());
  EXPECT_EQ(it->num("icg"), 8);
  const auto wt = tensor_values<std::uint16_t>(dir, read_tensor_index(dir).at(it->kv.at("wt")));
  ASSERT_EQ(wt.size(), 64u * 8 * 9);
  std::size_t nonzero = 0;
  for (std::size_t i = 0; i < wt.size(); ++i) {
    if (i % 64 >= 24) EXPECT_EQ(wt[i], 0) << i;  // rows i8 = 3..7 of each [i8][o8] block
    else nonzero += wt[i] != 0;
  }
  EXPECT_GT(nonzero, 64u * 3 * 9 * 9 / 10);
}

TEST_P(BundleFiles, WideConvsSpanSeveralRecordsCoveringAllChannels) {
  int multi = 0;
  long covered = 0;
  for (const Line& l : read_manifest(bundle().dir)) {
    if (l.tag != "conv") continue;
    if (l.kv.at("first") == "1") covered = 0;
    EXPECT_EQ(l.num("c0") * 8, covered) << "groups in order";
    covered += l.num("icg");
    if (l.kv.at("last") == "1") {
      EXPECT_EQ(covered, l.num("ict"));
      if (l.kv.at("first") == "0") ++multi;
    }
  }
  EXPECT_GT(multi, 0);
}

INSTANTIATE_TEST_SUITE_P(Models, BundleFiles, ::testing::Values(ModelKind::IrTiny, ModelKind::Ir18),
                         [](const ::testing::TestParamInfo<ModelKind>& info) {
                           return info.param == ModelKind::Ir18 ? std::string("IR18") : std::string("IRtiny");
                         });

TEST(BundleFilesIr18, TileGroupingGivesCloseToSixteenContexts) {
  const int contexts = written_bundle(ModelKind::Ir18, Grouping::Tile).report.contexts;
  EXPECT_GE(contexts, 10);
  EXPECT_LE(contexts, 16);
}

TEST(BundleFilesDeterminism, SameSeedSameBytes) {
  MakeOptions options;
  options.model = ModelKind::IrTiny;
  options.grouping = Grouping::Whole;
  options.calib_batch = 1;
  options.seed = 5;
  const fs::path a = options.out = testing::scratch_dir("determinism-a");
  make_bundle(options);
  const fs::path b = options.out = testing::scratch_dir("determinism-b");
  make_bundle(options);
  EXPECT_EQ(read_bytes(a / "tensors.bin"), read_bytes(b / "tensors.bin"));
  EXPECT_EQ(read_bytes(a / "manifest.txt"), read_bytes(b / "manifest.txt"));
}

TEST(BundleFilesDeterminism, OtherSeedOtherWeights) {
  const IrNetwork a = make_network(ModelKind::IrTiny, {5, 0.2f}), b = make_network(ModelKind::IrTiny, {6, 0.2f});
  EXPECT_NE(a.stem_conv.weight, b.stem_conv.weight);
  EXPECT_NE(a.units.back().conv2.weight, b.units.back().conv2.weight);
  EXPECT_NE(a.fc.weight, b.fc.weight);
  EXPECT_EQ(a.stem_conv.weight, make_network(ModelKind::IrTiny, {5, 0.2f}).stem_conv.weight);
}

}  // namespace
}  // namespace taconite::mkbundle
