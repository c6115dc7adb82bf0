#include "network_file.hpp"

#include <bit>
#include <charconv>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace taconite::mkbundle {

static_assert(std::endian::native == std::endian::little, "network.bin is little-endian");

namespace {

namespace fs = std::filesystem;

// Bounds on what a network.txt may ask for (the reader allocates from them).
constexpr int kMaxChannels = 4096, kMaxUnits = 512, kMaxEmbedding = 4096;
constexpr std::uintmax_t kMaxBinBytes = std::uintmax_t{2} << 30;

// network.bin, read front to back; every read is checked against the bytes left.
class BinReader {
 public:
  explicit BinReader(const fs::path& path) : path_(path), in_(path, std::ios::binary) {
    std::error_code ec;
    left_ = fs::file_size(path, ec);
    if (!in_ || ec) throw std::runtime_error(path.string() + ": cannot open");
    if (left_ > kMaxBinBytes) throw std::runtime_error(path.string() + ": larger than 2 GiB");
  }
  std::vector<float> take(std::size_t count, const std::string& what) {
    if (count * sizeof(float) > left_)
      throw std::runtime_error(path_.string() + ": ends inside " + what + " (truncated hand-off file)");
    std::vector<float> values(count);
    in_.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(count * sizeof(float)));
    if (!in_) throw std::runtime_error(path_.string() + ": read failed in " + what);
    left_ -= count * sizeof(float);
    return values;
  }
  void expect_end() const {
    if (left_ != 0)
      throw std::runtime_error(path_.string() + ": " + std::to_string(left_) + " bytes after the last tensor");
  }

 private:
  fs::path path_;
  std::ifstream in_;
  std::uintmax_t left_ = 0;
};

struct Line {
  int number;
  std::string text;
  std::vector<std::string> fields;
  [[noreturn]] void fail(const std::string& problem) const {
    throw std::runtime_error("network.txt:" + std::to_string(number) + ": " + problem + " ('" + text + "')");
  }
  int integer(std::size_t index, int min, int max) const {
    if (index >= fields.size()) fail("missing field " + std::to_string(index));
    const std::string& f = fields[index];
    int value = 0;
    const auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), value);
    if (ec != std::errc() || end != f.data() + f.size() || value < min || value > max)
      fail("'" + f + "' is not an integer in " + std::to_string(min) + ".." + std::to_string(max));
    return value;
  }
};

std::string rest_after(const std::string& text, std::size_t tokens) {
  std::size_t at = 0;
  for (std::size_t t = 0; t < tokens; ++t) {
    at = text.find_first_not_of(" \t", at);
    at = text.find_first_of(" \t", at);
    if (at == std::string::npos) return "";
  }
  const std::size_t start = text.find_first_not_of(" \t", at);
  return start == std::string::npos ? "" : text.substr(start);
}

// A BatchNorm given as scale/shift: gamma = scale, beta = shift, mean 0, var 1, eps 0.
BatchNorm scale_shift(BinReader& bin, int channels, const std::string& what) {
  BatchNorm bn;
  bn.channels = channels;
  bn.gamma = bin.take(static_cast<std::size_t>(channels), what + " scale");
  bn.beta = bin.take(static_cast<std::size_t>(channels), what + " shift");
  bn.mean.assign(static_cast<std::size_t>(channels), 0.0f);
  bn.var.assign(static_cast<std::size_t>(channels), 1.0f);
  bn.eps = 0.0f;
  return bn;
}

Conv2d conv(BinReader& bin, int in, int out, int kernel, int stride, const std::string& what) {
  return {in, out, kernel, stride,
          bin.take(static_cast<std::size_t>(out) * in * kernel * kernel, what + " weight")};
}

}  // namespace

ExtractedNetwork read_network_file(const fs::path& dir) {
  std::ifstream txt(dir / "network.txt");
  if (!txt) throw std::runtime_error((dir / "network.txt").string() + ": cannot open");
  BinReader bin(dir / "network.bin");
  ExtractedNetwork x;
  IrNetwork& net = x.net;
  net.name.clear();
  int channels = 0, size = net.input_height;
  bool have_head = false;
  std::string text;
  for (int number = 1; std::getline(txt, text); ++number) {
    Line line{number, text, {}};
    std::istringstream tokens(text);
    for (std::string field; tokens >> field;) line.fields.push_back(field);
    if (line.fields.empty()) continue;
    const std::string& tag = line.fields[0];
    if (number == 1) {
      if (tag != "taconite-network" || line.fields.size() != 2 || line.fields[1] != "1")
        line.fail("expected 'taconite-network 1'");
      continue;
    }
    if (have_head) line.fail("record after the head");
    if (tag == "name") {
      net.name = rest_after(text, 1);
    } else if (tag == "comment") {
      x.comment = rest_after(text, 1);
    } else if (tag == "param") {
      if (line.fields.size() < 3) line.fail("param needs a name and a value");
      if (!x.params.emplace(line.fields[1], rest_after(text, 2)).second) line.fail("param defined twice");
    } else if (tag == "stem") {
      if (channels != 0) line.fail("second stem");
      channels = line.integer(1, 64, 64);  // the emitter's stem step writes 64 channels
      net.stem_conv = conv(bin, net.input_channels, channels, 3, 1, "stem conv");
      net.stem_bn = scale_shift(bin, channels, "stem");
      net.stem_prelu.alpha = bin.take(static_cast<std::size_t>(channels), "stem PReLU");
    } else if (tag == "unit") {
      if (channels == 0) line.fail("unit before the stem");
      if (net.units.size() >= static_cast<std::size_t>(kMaxUnits)) line.fail("more than 512 units");
      IrUnit u;
      u.in_channels = line.integer(1, 8, kMaxChannels);
      u.out_channels = line.integer(2, 8, kMaxChannels);
      u.stride = line.integer(3, 1, 2);
      if (line.fields.size() != 5 || (line.fields[4] != "pool" && line.fields[4] != "conv"))
        line.fail("expected 'unit <in> <out> <stride> pool|conv'");
      u.conv_shortcut = line.fields[4] == "conv";
      if (u.in_channels != channels)
        line.fail("input channels differ from the previous output " + std::to_string(channels));
      if (u.out_channels % 8 != 0) line.fail("output channels must be a multiple of 8");
      if (!u.conv_shortcut && u.in_channels != u.out_channels) line.fail("a pooling shortcut needs in == out");
      if (size % u.stride != 0) line.fail("stride does not divide the size " + std::to_string(size));
      u.height = u.width = size;
      const std::string what = "unit " + std::to_string(net.units.size());
      u.bn1 = scale_shift(bin, u.in_channels, what + " leading BN");
      u.conv1 = conv(bin, u.in_channels, u.out_channels, 3, 1, what + " conv1");
      u.bn2 = scale_shift(bin, u.out_channels, what + " conv1");
      u.prelu.alpha = bin.take(static_cast<std::size_t>(u.out_channels), what + " PReLU");
      u.conv2 = conv(bin, u.out_channels, u.out_channels, 3, u.stride, what + " conv2");
      u.bn3 = scale_shift(bin, u.out_channels, what + " conv2");
      if (u.conv_shortcut) {
        u.shortcut_conv = conv(bin, u.in_channels, u.out_channels, 1, u.stride, what + " shortcut");
        u.shortcut_bn = scale_shift(bin, u.out_channels, what + " shortcut");
      }
      channels = u.out_channels;
      size /= u.stride;
      net.units.push_back(std::move(u));
    } else if (tag == "head") {
      if (net.units.empty()) line.fail("head before any unit");
      const int c = line.integer(1, 8, kMaxChannels), h = line.integer(2, 1, 112), w = line.integer(3, 1, 112);
      const int n = line.integer(4, 8, kMaxEmbedding);
      if (c != channels || h != size || w != size)
        line.fail("the last unit gives " + std::to_string(channels) + "x" + std::to_string(size) + "x" +
                  std::to_string(size));
      net.output_bn = scale_shift(bin, c, "head BN2d");
      net.fc.in_features = c * h * w;
      net.fc.out_features = n;
      net.fc.weight = bin.take(static_cast<std::size_t>(n) * c * h * w, "head Linear weight");
      net.fc.bias = bin.take(static_cast<std::size_t>(n), "head Linear bias");
      net.feature_bn = scale_shift(bin, n, "head BN1d");
      have_head = true;
    } else {
      line.fail("unknown record '" + tag + "'");
    }
  }
  if (!have_head) throw std::runtime_error((dir / "network.txt").string() + ": no head record");
  if (net.name.empty()) throw std::runtime_error((dir / "network.txt").string() + ": no name record");
  x.face = Tensor4(1, 3, net.input_height, net.input_width);
  const std::vector<float> face = bin.take(x.face.data.size(), "the reference face");
  x.face.data = face;
  x.cpu_embedding = bin.take(static_cast<std::size_t>(net.embedding_dim()), "the reference embedding");
  bin.expect_end();
  return x;
}

}  // namespace taconite::mkbundle
