#include "bundle_fixture.hpp"

#include <stdlib.h>  // mkdtemp

#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "numerics/bf16.hpp"
#include "numerics/weight_packing.hpp"

namespace taconite::testing {

namespace fs = std::filesystem;
using numerics::bf16_t;

namespace {

constexpr std::size_t kAlign = 64;  // what the real writer uses (spec §3)

float to_bf16_value(float v) { return numerics::bf16_to_f32(numerics::f32_to_bf16(v)); }

std::vector<float> uniform(std::mt19937& rng, std::size_t n, float lo, float hi, bool bf16 = true) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> values(n);
  for (float& v : values) v = bf16 ? to_bf16_value(dist(rng)) : dist(rng);
  return values;
}

std::vector<bf16_t> to_bf16(const std::vector<float>& values) {
  std::vector<bf16_t> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = numerics::f32_to_bf16(values[i]);
  return out;
}

// The packing a stem stored in `layout` would have (only Assumed is spec §5.3).
std::vector<bf16_t> pack(const numerics::ConvWeightShape& shape, const std::vector<float>& oihw, StemLayout layout) {
  const std::vector<bf16_t> plain = to_bf16(oihw);
  std::vector<bf16_t> packed(shape.elements());
  if (layout == StemLayout::PlainOihw) return plain;
  numerics::pack_conv_weights(shape, plain, packed);
  if (layout == StemLayout::Assumed) return packed;
  // InnerO8I8: same 64-element blocks, each 8x8 block transposed (output channel outer).
  std::vector<bf16_t> swapped(packed.size());
  for (std::size_t idx = 0; idx < packed.size(); ++idx) {
    const std::size_t block = idx / 64, i8 = (idx % 64) / 8, o8 = idx % 8;
    swapped[block * 64 + o8 * 8 + i8] = packed[idx];
  }
  return swapped;
}

// Input channels [first, first+count) of an OIHW weight.
std::vector<float> input_group(const std::vector<float>& oihw, int oc, int ic, int kk, int first, int count) {
  std::vector<float> out;
  out.reserve(static_cast<std::size_t>(oc) * count * kk);
  for (int o = 0; o < oc; ++o)
    for (int i = first; i < first + count; ++i)
      for (int t = 0; t < kk; ++t) out.push_back(oihw[(static_cast<std::size_t>(o) * ic + i) * kk + t]);
  return out;
}

void write_file(const fs::path& path, const void* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) throw std::runtime_error("fixture: cannot write " + path.string());
}

void write_lines(const fs::path& path, const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  write_file(path, text.data(), text.size());
}

void check_line(int line, std::size_t count, const char* what) {
  if (line < 1 || static_cast<std::size_t>(line) > count)
    throw std::out_of_range(std::string("fixture: no ") + what + " line " + std::to_string(line));
}

}  // namespace

std::vector<std::uint8_t> bf16_bytes(const std::vector<float>& values) {
  const std::vector<bf16_t> bits = to_bf16(values);
  std::vector<std::uint8_t> bytes(bits.size() * 2);
  std::memcpy(bytes.data(), bits.data(), bytes.size());
  return bytes;
}

std::vector<std::uint8_t> f32_bytes(const std::vector<float>& values) {
  std::vector<std::uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

BundleFixture::BundleFixture(const FixtureOptions& options) {
  std::string pattern = (fs::temp_directory_path() / "taconite-unit-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("fixture: mkdtemp failed");
  root_ = pattern;
  dir_ = root_ / "bundle";
  outside_ = root_ / "outside";
  fs::create_directories(dir_ / "kernels");
  fs::create_directories(outside_);
  build_model(options);
  build_files(options);
  write_all();
}

BundleFixture::~BundleFixture() {
  std::error_code ec;
  fs::remove_all(root_, ec);
}

void BundleFixture::build_model(const FixtureOptions& options) {
  std::mt19937 rng(options.seed);
  FixtureModel& m = model_;
  constexpr int C = FixtureModel::kInC, H = FixtureModel::kH, W = FixtureModel::kW, M = FixtureModel::kMidC;
  const int real = options.real_input_channels;

  // The caller's raw f32 image: ref.input is its RNE rounding, so embed() must round it.
  m.input_chw = uniform(rng, static_cast<std::size_t>(C) * H * W, -1.0f, 1.0f, /*bf16=*/false);
  for (std::size_t i = static_cast<std::size_t>(real) * H * W; i < m.input_chw.size(); ++i) m.input_chw[i] = 0.0f;
  m.stem_w = uniform(rng, static_cast<std::size_t>(M) * C * 9, -0.25f, 0.25f);
  for (int o = 0; o < M; ++o)
    for (int i = real; i < C; ++i)
      for (int t = 0; t < 9; ++t) m.stem_w[(static_cast<std::size_t>(o) * C + i) * 9 + t] = 0.0f;
  m.p1_alpha = uniform(rng, M, 0.1f, 0.3f);
  m.p1_bias = uniform(rng, M, -0.1f, 0.1f);
  m.a1_scale = uniform(rng, M, 0.5f, 1.5f);
  m.a1_shift = uniform(rng, M, -0.2f, 0.2f);
  m.c2_w = uniform(rng, static_cast<std::size_t>(M) * M * 9, -0.1f, 0.1f);
  m.c2_bias = uniform(rng, M, -0.1f, 0.1f);
  m.sc_w = uniform(rng, static_cast<std::size_t>(M) * M, -0.25f, 0.25f);
  m.sc_bias = uniform(rng, M, -0.1f, 0.1f);
  m.head_bT = uniform(rng, static_cast<std::size_t>(M) * (H / 2) * (W / 2) * FixtureModel::kN, -0.1f, 0.1f);
  m.head_b2 = uniform(rng, FixtureModel::kN, -0.5f, 0.5f, /*bf16=*/false);
}

void BundleFixture::build_files(const FixtureOptions& options) {
  const FixtureModel& m = model_;
  constexpr int C = FixtureModel::kInC, H = FixtureModel::kH, W = FixtureModel::kW, M = FixtureModel::kMidC;

  // ref.input: the input in the tiled layout [H][C/8][W][8], written out from spec §4.
  std::vector<float> tiled(m.input_chw.size());
  for (int ch = 0; ch < C; ++ch)
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x)
        tiled[((static_cast<std::size_t>(y) * (C / 8) + ch / 8) * W + x) * 8 + ch % 8] =
            m.input_chw[(static_cast<std::size_t>(ch) * H + y) * W + x];

  const numerics::ConvWeightShape stem_shape{M, C, 3}, group_shape{M, 8, 3}, sc_shape{M, M, 1};
  auto packed_bytes = [](const std::vector<bf16_t>& bits) {
    std::vector<std::uint8_t> bytes(bits.size() * 2);
    std::memcpy(bytes.data(), bits.data(), bytes.size());
    return bytes;
  };

  add_tensor("ref.input", "bf16", "8,1,8,8", bf16_bytes(tiled));
  add_tensor("ref.input_chw", "f32", "3,8,8",
             f32_bytes(std::vector<float>(m.input_chw.begin(), m.input_chw.begin() + 3 * H * W)));
  add_tensor("stem.wt", "bf16", "2,1,3,3,8,8", packed_bytes(pack(stem_shape, m.stem_w, options.stem_layout)));
  add_tensor("p1.alpha", "bf16", "16", bf16_bytes(m.p1_alpha));
  add_tensor("p1.bias", "bf16", "16", bf16_bytes(m.p1_bias));
  add_tensor("a1.scale", "bf16", "16", bf16_bytes(m.a1_scale));
  add_tensor("a1.shift", "bf16", "16", bf16_bytes(m.a1_shift));
  for (int g = 0; g < 2; ++g)
    add_tensor("c2.g" + std::to_string(g), "bf16", "2,1,3,3,8,8",
               packed_bytes(pack(group_shape, input_group(m.c2_w, M, M, 9, 8 * g, 8), StemLayout::Assumed)));
  add_tensor("c2.bias", "bf16", "16", bf16_bytes(m.c2_bias));
  add_tensor("sc.wt", "bf16", "2,2,8,8", packed_bytes(pack(sc_shape, m.sc_w, StemLayout::Assumed)));
  add_tensor("sc.bias", "bf16", "16", bf16_bytes(m.sc_bias));
  add_tensor("head.bT", "bf16", "256,16", bf16_bytes(m.head_bT));
  add_tensor("head.b2", "f32", "16", f32_bytes(m.head_b2));
  add_tensor("misc.u8", "u8", "5", {1, 2, 3, 250, 255});
  const std::int32_t i32_values[3] = {-7, 0, 123456789};
  std::vector<std::uint8_t> i32_bytes(sizeof(i32_values));
  std::memcpy(i32_bytes.data(), i32_values, sizeof(i32_values));
  add_tensor("misc.i32", "i32", "3", i32_bytes);

  const std::string conv16 = "ict=16 h=8 w=8 ";
  manifest_ = {
      "# taconite unit-test fixture bundle",
      "version 1",
      "param model IR-fixture",
      "xclbin stem kernels/stem.xclbin conv2dk3_bf16",
      "xclbin k3 kernels/conv3x3.xclbin conv2dk3_bf16",
      "xclbin k1 kernels/conv1x1.xclbin conv2dk1_bf16",
      "input buf=0 c=8 h=8 w=8 tensor=ref.input",
      "conv in=0 ict=8 h=8 w=8 c0=0 icg=8 wp=8 oc=16 oh=8 ow=8 owp=8 ctx=stem insts=kernels/stem.insts.bin "
      "wt=stem.wt out=1 first=1 last=1",
      "prelu_bias buf=1 c=16 h=8 w=8 alpha=p1.alpha bias=p1.bias",
      "affine in=1 out=2 c=16 h=8 w=8 scale=a1.scale shift=a1.shift",
      "conv in=2 " + conv16 + "c0=0 icg=8 wp=12 oc=16 oh=8 ow=8 owp=12 ctx=k3 insts=kernels/conv3x3.insts.bin "
      "wt=c2.g0 out=3 first=1 last=0",
      "conv in=2 " + conv16 + "c0=1 icg=8 wp=12 oc=16 oh=8 ow=8 owp=12 ctx=k3 insts=kernels/conv3x3.insts.bin "
      "wt=c2.g1 out=3 first=0 last=1",
      "bias buf=3 c=16 h=8 w=8 bias=c2.bias",
      "conv in=1 " + conv16 + "c0=0 icg=16 wp=8 oc=16 oh=8 ow=8 owp=8 ctx=k1 insts=kernels/conv1x1.insts.bin "
      "wt=sc.wt out=4 first=1 last=1",
      "bias buf=4 c=16 h=8 w=8 bias=sc.bias",
      "add a=3 b=4 out=5 c=16 h=8 w=8",
      "subsample in=5 out=6 c=16 h=8 w=8 stride=2",
      "head in=6 c=16 h=4 w=4 k=256 n=16 bT=head.bT b2=head.b2",
  };
}

void BundleFixture::write_all() {
  write_lines(dir_ / "manifest.txt", manifest_);
  write_lines(dir_ / "tensors.txt", tensors_);
  write_file(dir_ / "tensors.bin", blob_.data(), blob_.size());
  const std::string xclbin = "placeholder xclbin (unit-test fixture)\n";
  for (const char* name : {"stem", "conv3x3", "conv1x1"}) {
    write_file(dir_ / "kernels" / (std::string(name) + ".xclbin"), xclbin.data(), xclbin.size());
    const std::uint32_t words[4] = {0x54534b50u, 1u, static_cast<std::uint32_t>(std::strlen(name)), 0u};
    write_file(dir_ / "kernels" / (std::string(name) + ".insts.bin"), words, sizeof(words));
  }
  const std::uint32_t secret[4] = {1, 2, 3, 4};
  write_file(outside_ / "secret.insts.bin", secret, sizeof(secret));
  manifest_dirty_ = tensors_dirty_ = blob_dirty_ = false;
}

void BundleFixture::flush() {
  if (manifest_dirty_) write_lines(dir_ / "manifest.txt", manifest_);
  if (tensors_dirty_) write_lines(dir_ / "tensors.txt", tensors_);
  if (blob_dirty_) write_file(dir_ / "tensors.bin", blob_.data(), blob_.size());
  manifest_dirty_ = tensors_dirty_ = blob_dirty_ = false;
}

// ---- manifest edits ----

const std::string& BundleFixture::manifest_line(int line) const {
  check_line(line, manifest_.size(), "manifest");
  return manifest_[static_cast<std::size_t>(line - 1)];
}

int BundleFixture::manifest_line_of(std::string_view needle) const {
  for (std::size_t i = 0; i < manifest_.size(); ++i)
    if (manifest_[i].find(needle) != std::string::npos) return static_cast<int>(i + 1);
  throw std::out_of_range("fixture: no manifest line contains '" + std::string(needle) + "'");
}

void BundleFixture::replace_manifest_line(int line, std::string text) {
  check_line(line, manifest_.size(), "manifest");
  manifest_[static_cast<std::size_t>(line - 1)] = std::move(text);
  manifest_dirty_ = true;
}

void BundleFixture::erase_manifest_line(int line) {
  check_line(line, manifest_.size(), "manifest");
  manifest_.erase(manifest_.begin() + (line - 1));
  manifest_dirty_ = true;
}

void BundleFixture::insert_manifest_line(int before_line, std::string text) {
  check_line(before_line, manifest_.size() + 1, "manifest");
  manifest_.insert(manifest_.begin() + (before_line - 1), std::move(text));
  manifest_dirty_ = true;
}

const std::string& BundleFixture::set_field(int line, std::string_view key, std::string_view value) {
  check_line(line, manifest_.size(), "manifest");
  std::istringstream tokens(manifest_[static_cast<std::size_t>(line - 1)]);
  std::string token, rebuilt;
  bool replaced = false;
  while (tokens >> token) {
    if (!replaced && token.size() > key.size() && token.compare(0, key.size(), key) == 0 && token[key.size()] == '=') {
      token = std::string(key) + "=" + std::string(value);
      replaced = true;
    }
    rebuilt += (rebuilt.empty() ? "" : " ") + token;
  }
  if (!replaced) rebuilt.append(" ").append(key).append("=").append(value);  // not `" " + string&&` (GCC 12 -Wrestrict)
  replace_manifest_line(line, rebuilt);
  return manifest_line(line);
}

const std::string& BundleFixture::remove_field(int line, std::string_view key) {
  check_line(line, manifest_.size(), "manifest");
  std::istringstream tokens(manifest_[static_cast<std::size_t>(line - 1)]);
  std::string token, rebuilt;
  bool removed = false;
  while (tokens >> token) {
    if (token.size() > key.size() && token.compare(0, key.size(), key) == 0 && token[key.size()] == '=') {
      removed = true;
      continue;
    }
    rebuilt += (rebuilt.empty() ? "" : " ") + token;
  }
  if (!removed) throw std::out_of_range("fixture: line " + std::to_string(line) + " has no key " + std::string(key));
  replace_manifest_line(line, rebuilt);
  return manifest_line(line);
}

// ---- tensor index edits ----

int BundleFixture::tensor_line_of(std::string_view name) const {
  for (std::size_t i = 0; i < tensors_.size(); ++i)
    if (tensors_[i].compare(0, name.size() + 1, std::string(name) + " ") == 0) return static_cast<int>(i + 1);
  throw std::out_of_range("fixture: no tensor named '" + std::string(name) + "'");
}

const std::string& BundleFixture::tensor_line(int line) const {
  check_line(line, tensors_.size(), "tensors");
  return tensors_[static_cast<std::size_t>(line - 1)];
}

void BundleFixture::replace_tensor_line(int line, std::string text) {
  check_line(line, tensors_.size(), "tensors");
  tensors_[static_cast<std::size_t>(line - 1)] = std::move(text);
  tensors_dirty_ = true;
}

void BundleFixture::erase_tensor_line(int line) {
  check_line(line, tensors_.size(), "tensors");
  tensors_.erase(tensors_.begin() + (line - 1));
  tensors_dirty_ = true;
}

void BundleFixture::insert_tensor_line(int before_line, std::string text) {
  check_line(before_line, tensors_.size() + 1, "tensors");
  tensors_.insert(tensors_.begin() + (before_line - 1), std::move(text));
  tensors_dirty_ = true;
}

int BundleFixture::add_tensor(std::string_view name, std::string_view dtype, std::string_view shape,
                              const std::vector<std::uint8_t>& bytes) {
  const std::size_t offset = (blob_.size() + kAlign - 1) / kAlign * kAlign;
  blob_.resize(offset + bytes.size());
  if (!bytes.empty()) std::memcpy(blob_.data() + offset, bytes.data(), bytes.size());
  tensors_.push_back(std::string(name) + " " + std::string(dtype) + " " + std::string(shape) + " " +
                     std::to_string(offset) + " " + std::to_string(bytes.size()));
  tensors_dirty_ = blob_dirty_ = true;
  return static_cast<int>(tensors_.size());
}

int BundleFixture::add_bf16_tensor(std::string_view name, std::size_t count, float value) {
  return add_tensor(name, "bf16", std::to_string(count), bf16_bytes(std::vector<float>(count, value)));
}

int BundleFixture::add_f32_tensor(std::string_view name, std::size_t count, float value) {
  return add_tensor(name, "f32", std::to_string(count), f32_bytes(std::vector<float>(count, value)));
}

std::uint64_t BundleFixture::tensor_offset(std::string_view name) const {
  std::istringstream fields(tensor_line(tensor_line_of(name)));
  std::string n, dtype, shape;
  std::uint64_t offset = 0;
  fields >> n >> dtype >> shape >> offset;
  return offset;
}

}  // namespace taconite::testing
