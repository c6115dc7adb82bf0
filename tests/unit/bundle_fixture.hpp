// A tiny but complete, valid AdaFace-style bundle written from C++ into a fresh temp directory,
// with editable manifest/tensor-index lines so a test can break exactly one thing and load it.
//
// The network (every step kind of spec §4, 4 conv dispatches, 3 hardware contexts):
//   input 8x8x8 (3 real channels) -> stem conv3x3 8->16 -> prelu_bias -> affine
//   -> conv3x3 16->16 split in two channel-group records -> bias   (residual branch)
//   -> conv1x1 16->16 on the prelu output -> bias                  (shortcut)
//   -> add -> subsample stride 2 -> head k=16*4*4 n=16
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace taconite::testing {

// How the fixture stores the stem conv's weights (only `Assumed` is the spec §5.3 packing;
// the others exist to prove the stem zero-pattern diagnostic notices a different layout).
enum class StemLayout { Assumed, PlainOihw, InnerO8I8 };

struct FixtureOptions {
  std::uint32_t seed = 20261130;
  int real_input_channels = 3;  // the rest of the 8 stem channels are zero (input and weights)
  StemLayout stem_layout = StemLayout::Assumed;
};

// The unpacked model the bundle encodes. Every weight is exactly representable in bf16; the
// input image and head_b2 are raw f32 (the bundle stores the image rounded in ref.input).
struct FixtureModel {
  static constexpr int kInC = 8, kH = 8, kW = 8, kMidC = 16, kN = 16;
  std::vector<float> input_chw;          // [8][8][8] channel-major raw f32, channels >= real are zero
  std::vector<float> stem_w;             // OIHW [16][8][3][3]
  std::vector<float> p1_alpha, p1_bias;  // [16]
  std::vector<float> a1_scale, a1_shift; // [16]
  std::vector<float> c2_w;               // OIHW [16][16][3][3], dispatched as input groups 0 and 1
  std::vector<float> c2_bias;            // [16]
  std::vector<float> sc_w;               // OI [16][16] (1x1)
  std::vector<float> sc_bias;            // [16]
  std::vector<float> head_bT;            // [k=256][n=16] row-major
  std::vector<float> head_b2;            // [16], f32
};

class BundleFixture {
 public:
  explicit BundleFixture(const FixtureOptions& options = {});
  ~BundleFixture();
  BundleFixture(const BundleFixture&) = delete;
  BundleFixture& operator=(const BundleFixture&) = delete;

  const std::filesystem::path& dir() const { return dir_; }        // the bundle directory
  const std::filesystem::path& outside() const { return outside_; } // a sibling directory, NOT in the bundle
  const FixtureModel& model() const { return model_; }

  // ---- manifest.txt (1-based line numbers, as error messages count them) ----
  int manifest_line_count() const { return static_cast<int>(manifest_.size()); }
  const std::string& manifest_line(int line) const;
  int manifest_line_of(std::string_view needle) const;  // first line containing needle; throws if none
  void replace_manifest_line(int line, std::string text);
  void erase_manifest_line(int line);
  void insert_manifest_line(int before_line, std::string text);  // before_line = count+1 appends
  // Sets key=value in a k=v record (appends the field when absent); returns the new line text.
  const std::string& set_field(int line, std::string_view key, std::string_view value);
  const std::string& remove_field(int line, std::string_view key);

  // ---- tensors.txt / tensors.bin ----
  int tensor_line_of(std::string_view name) const;  // line whose first field is `name`; throws if none
  const std::string& tensor_line(int line) const;
  void replace_tensor_line(int line, std::string text);
  void erase_tensor_line(int line);
  void insert_tensor_line(int before_line, std::string text);
  // Appends a tensor (64-aligned in tensors.bin) and its index line; returns that line number.
  int add_tensor(std::string_view name, std::string_view dtype, std::string_view shape,
                 const std::vector<std::uint8_t>& bytes);
  int add_bf16_tensor(std::string_view name, std::size_t count, float value = 0.25f);
  int add_f32_tensor(std::string_view name, std::size_t count, float value = 0.25f);
  std::uint64_t blob_size() const { return blob_.size(); }
  std::uint64_t tensor_offset(std::string_view name) const;

  // Writes whatever changed since the last write (the constructor writes everything). Files a
  // test removed or replaced on disk are left alone unless their content changed here.
  void flush();

 private:
  void build_model(const FixtureOptions& options);
  void build_files(const FixtureOptions& options);
  void write_all();

  std::filesystem::path root_, dir_, outside_;
  FixtureModel model_;
  std::vector<std::string> manifest_, tensors_;
  std::vector<std::uint8_t> blob_;
  bool manifest_dirty_ = false, tensors_dirty_ = false, blob_dirty_ = false;
};

// Helpers for tests: bytes of bf16 / f32 values.
std::vector<std::uint8_t> bf16_bytes(const std::vector<float>& values);
std::vector<std::uint8_t> f32_bytes(const std::vector<float>& values);

}  // namespace taconite::testing
