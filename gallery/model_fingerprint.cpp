#include "model_fingerprint.hpp"

#include <glib.h>
#include <json-glib/json-glib.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include "bundle/regular_file.hpp"
#include "common/failure.hpp"
#include "onnx/onnx_path.hpp"

namespace taconite::gallery {

namespace {

// manifest.txt and tensors.txt are small text files (KiBs); refuse anything implausibly large.
constexpr std::uintmax_t kMaxTextFile = 64u << 20;
constexpr std::size_t kChunk = 1u << 20;

struct ChecksumDeleter {
  void operator()(GChecksum* c) const { g_checksum_free(c); }
};
using Checksum = std::unique_ptr<GChecksum, ChecksumDeleter>;

struct WeightRecord {
  std::string name, dtype, dims;
  std::uint64_t offset = 0, bytes = 0;
};

Result<std::string> read_text(const std::filesystem::path& path) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return Error{ErrorKind::Io, path.string() + ": " + ec.message()};
  if (size > kMaxTextFile)
    return Error{ErrorKind::Bundle,
                 path.string() + ": " + std::to_string(size) + " bytes, more than a bundle's text file may hold"};
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) return Error{ErrorKind::Io, path.string() + ": cannot be read"};
  return text.str();
}

bool parse_u64(const std::string& field, std::uint64_t& value) {
  const char* end = field.data() + field.size();
  auto [ptr, ec] = std::from_chars(field.data(), end, value);
  return ec == std::errc() && ptr == end;
}

// The five-field records of tensors.txt other than ref.*, sorted by name (the fingerprint does not
// depend on the order the writer listed them in).
Result<std::vector<WeightRecord>> weight_records(const std::filesystem::path& path, const std::string& text,
                                                 std::uint64_t bin_size) {
  std::vector<WeightRecord> records;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string field; fields >> field;) f.push_back(field);
    if (f.empty() || (f[0][0] == '#' && f.size() != 5)) continue;  // blank or comment
    WeightRecord r;
    if (f.size() != 5 || !parse_u64(f[3], r.offset) || !parse_u64(f[4], r.bytes))
      return Error{ErrorKind::Bundle, path.string() + ":" + std::to_string(number) +
                                          ": expected '<name> <dtype> <dims> <offset> <bytes>', got '" + line + "'"};
    if (r.offset > bin_size || r.bytes > bin_size - r.offset)
      return Error{ErrorKind::Bundle, path.string() + ":" + std::to_string(number) +
                                          ": tensor reaches past the end of tensors.bin (" + std::to_string(bin_size) +
                                          " bytes)"};
    if (f[0].rfind("ref.", 0) == 0) continue;  // reference tensors are not the model
    r.name = f[0];
    r.dtype = f[1];
    r.dims = f[2];
    records.push_back(std::move(r));
  }
  std::sort(records.begin(), records.end(),
            [](const WeightRecord& a, const WeightRecord& b) { return a.name < b.name; });
  return records;
}

void update(GChecksum* sum, const std::string& text) {
  // Length-prefixed, so "ab"+"c" and "a"+"bc" hash differently.
  const std::string length = std::to_string(text.size()) + ":";
  g_checksum_update(sum, reinterpret_cast<const guchar*>(length.data()), static_cast<gssize>(length.size()));
  g_checksum_update(sum, reinterpret_cast<const guchar*>(text.data()), static_cast<gssize>(text.size()));
}

std::string model_param(const std::string& manifest) {
  std::istringstream lines(manifest);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string tag, name, value;
    if (fields >> tag >> name >> value && tag == "param" && name == "model") return value;
  }
  return "";
}

// The whole of a regular file of at most `limit` bytes.
Result<std::string> read_bounded(const std::filesystem::path& path, std::uint64_t limit, const char* what) {
  try {
    const bundle::RegularFile file = bundle::RegularFile::open(path);
    if (file.size() > limit)
      return Error{ErrorKind::Bundle, path.string() + ": " + std::to_string(file.size()) + " bytes, more than " +
                                          what + " may hold (" + std::to_string(limit) + ")"};
    std::string bytes(static_cast<std::size_t>(file.size()), '\0');
    file.read_all(bytes.data());
    return bytes;
  } catch (const Failure& failure) {
    return failure.error();
  }
}

struct ObjectUnref {
  void operator()(gpointer object) const { g_object_unref(object); }
};

// The member at a dotted path as compact JSON, or "absent".
std::string member_json(JsonObject* top, const char* object, const char* member) {
  JsonNode* outer = json_object_get_member(top, object);
  if (outer == nullptr || !JSON_NODE_HOLDS_OBJECT(outer)) return "absent";
  JsonNode* node = json_object_get_member(json_node_get_object(outer), member);
  if (node == nullptr) return "absent";
  gchar* text = json_to_string(node, FALSE);
  std::string compact = text;
  g_free(text);
  return compact;
}

Result<ModelFingerprint> fingerprint_onnx(const std::filesystem::path& model, const std::filesystem::path& proc) {
  Result<std::string> network = read_bounded(model, onnx::kMaxModelBytes, "an ONNX face embedder");
  if (!network) return network.error();
  Result<std::string> description = read_bounded(proc, onnx::kMaxDescriptionBytes, "a model description");
  if (!description) return description.error();
  std::unique_ptr<JsonParser, ObjectUnref> parser(json_parser_new());
  GError* error = nullptr;
  if (!json_parser_load_from_data(parser.get(), description.value().data(),
                                  static_cast<gssize>(description.value().size()), &error)) {
    const std::string message = error ? error->message : "unknown error";
    g_clear_error(&error);
    return Error{ErrorKind::Bundle, proc.string() + ": not valid JSON: " + message};
  }
  JsonNode* root = json_parser_get_root(parser.get());
  if (root == nullptr || !JSON_NODE_HOLDS_OBJECT(root))
    return Error{ErrorKind::Bundle, proc.string() + ": expected a JSON object (a taconite-embedder/1 description)"};
  JsonObject* top = json_node_get_object(root);

  Checksum sum(g_checksum_new(G_CHECKSUM_SHA256));
  update(sum.get(), "taconite-model-fingerprint-onnx-1");
  update(sum.get(), network.value());
  for (const char* member : {"name", "width", "height", "channel_order", "mean", "std"})
    update(sum.get(), std::string("input.") + member + "=" + member_json(top, "input", member));
  for (const char* member : {"name", "dim"})
    update(sum.get(), std::string("output.") + member + "=" + member_json(top, "output", member));
  JsonNode* name = json_object_get_member(top, "name");
  const bool named = name != nullptr && JSON_NODE_HOLDS_VALUE(name) && json_node_get_value_type(name) == G_TYPE_STRING;
  return ModelFingerprint{g_checksum_get_string(sum.get()), named ? json_node_get_string(name) : model.stem().string()};
}

}  // namespace

Result<ModelFingerprint> fingerprint_model(const std::filesystem::path& model,
                                           const std::filesystem::path& model_proc) {
  if (!onnx::is_onnx_path(model)) {
    if (!model_proc.empty())
      return Error{ErrorKind::Input, "a model description (" + model_proc.string() + ") is for an ONNX model; " +
                                         model.string() + " is a bundle directory"};
    return fingerprint_bundle(model);
  }
  return fingerprint_onnx(model, model_proc.empty() ? onnx::default_description_path(model) : model_proc);
}

Result<ModelFingerprint> fingerprint_bundle(const std::filesystem::path& bundle_dir) {
  const std::filesystem::path manifest_path = bundle_dir / "manifest.txt";
  const std::filesystem::path tensors_path = bundle_dir / "tensors.txt";
  const std::filesystem::path bin_path = bundle_dir / "tensors.bin";
  // A FIFO or device in place of a bundle file is refused as such, never opened (file_size would
  // only say "Operation not supported").
  for (const std::filesystem::path& p : {manifest_path, tensors_path, bin_path})
    if (const std::string problem = bundle::regular_file_problem(p); !problem.empty())
      return Error{ErrorKind::Io, p.string() + ": " + problem};
  Result<std::string> manifest = read_text(manifest_path);
  if (!manifest) return manifest.error();
  Result<std::string> tensors = read_text(tensors_path);
  if (!tensors) return tensors.error();
  std::error_code ec;
  const std::uintmax_t bin_size = std::filesystem::file_size(bin_path, ec);
  if (ec) return Error{ErrorKind::Io, bin_path.string() + ": " + ec.message()};
  Result<std::vector<WeightRecord>> records = weight_records(tensors_path, tensors.value(), bin_size);
  if (!records) return records.error();

  Checksum sum(g_checksum_new(G_CHECKSUM_SHA256));
  update(sum.get(), "taconite-model-fingerprint-1");
  update(sum.get(), manifest.value());
  std::ifstream bin(bin_path, std::ios::binary);
  if (!bin) return Error{ErrorKind::Io, bin_path.string() + ": cannot be opened"};
  std::vector<char> chunk(kChunk);
  for (const WeightRecord& r : records.value()) {
    update(sum.get(), r.name + " " + r.dtype + " " + r.dims + " " + std::to_string(r.bytes));
    bin.seekg(static_cast<std::streamoff>(r.offset));
    for (std::uint64_t left = r.bytes; left > 0;) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, kChunk));
      if (!bin.read(chunk.data(), static_cast<std::streamsize>(n)))
        return Error{ErrorKind::Io, bin_path.string() + ": read failed in tensor " + r.name};
      g_checksum_update(sum.get(), reinterpret_cast<const guchar*>(chunk.data()), static_cast<gssize>(n));
      left -= n;
    }
  }
  return ModelFingerprint{g_checksum_get_string(sum.get()), model_param(manifest.value())};
}

}  // namespace taconite::gallery
