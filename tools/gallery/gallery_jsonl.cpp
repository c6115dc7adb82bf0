#include "gallery_jsonl.hpp"

#include <json-glib/json-glib.h>

#include <cfloat>
#include <cmath>
#include <memory>
#include <optional>
#include <ostream>
#include <unordered_set>

#include "bundle/regular_file.hpp"
#include "common/failure.hpp"
#include "identity_fields.hpp"
#include "json_parse.hpp"
#include "json_write.hpp"
#include "line_reader.hpp"
#include "utf8_repair.hpp"

namespace taconite::gallery_cli {

namespace {

using gallery::GalleryStore;
using json::JsonNodePtr;

struct GObjectDeleter {
  void operator()(gpointer p) const { g_object_unref(p); }
};
template <typename T>
using GPtr = std::unique_ptr<T, GObjectDeleter>;

std::string to_json(JsonBuilder* builder, json::Repairs* repairs = nullptr) {
  JsonNodePtr root(json_builder_get_root(builder));
  return json::write_json(root.get(), repairs);
}

// The stored metadata as a JSON node (the caller owns it): the object, mended if need be, or the
// stored text as a string when it is no JSON object; what was wrong goes to `problem`.
JsonNode* metadata_node(const std::string& metadata, std::string& problem) {
  gallery::StoredMetadata read = gallery::read_stored_metadata(metadata);
  problem = read.problem;
  if (read.object) return read.object.release();
  JsonNode* text = json_node_new(JSON_NODE_VALUE);
  json_node_set_string(text, read.text.c_str());
  return text;
}

// A member of a line, type-checked; the error names the line, the member and what it holds.
class LineObject {
 public:
  LineObject(JsonObject* object, std::string where) : object_(object), where_(std::move(where)) {}

  const std::string& where() const { return where_; }
  JsonNode* find(const char* name) const {
    return json_object_has_member(object_, name) ? json_object_get_member(object_, name) : nullptr;
  }
  Error wrong(const char* name, const char* wanted, JsonNode* node) const {
    return Error{ErrorKind::Input,
                 where_ + "\"" + name + "\" must be " + wanted + ", not " + json::json_kind(node)};
  }
  Error missing(const char* name, const char* wanted) const {
    return Error{ErrorKind::Input, where_ + "\"" + name + "\" (" + wanted + ") is missing"};
  }

  // `fallback` when absent; nullopt fallback: required.
  Result<std::string> text(const char* name, std::optional<std::string> fallback) const {
    JsonNode* node = find(name);
    if (!node) return fallback ? Result<std::string>(*fallback) : missing(name, "a string");
    if (!holds(node, G_TYPE_STRING)) return wrong(name, "a string", node);
    return std::string(json_node_get_string(node));
  }
  Result<std::int64_t> integer(const char* name, std::optional<std::int64_t> fallback) const {
    JsonNode* node = find(name);
    if (!node) return fallback ? Result<std::int64_t>(*fallback) : missing(name, "an integer");
    if (!holds(node, G_TYPE_INT64)) return wrong(name, "an integer", node);
    return static_cast<std::int64_t>(json_node_get_int(node));
  }
  Result<double> number(const char* name, double fallback) const {
    JsonNode* node = find(name);
    if (!node) return fallback;
    if (!is_number(node)) return wrong(name, "a number", node);
    const double value = json_node_get_double(node);
    if (!std::isfinite(value)) return Error{ErrorKind::Input, where_ + "\"" + name + "\" is not a finite number"};
    return value;
  }

  static bool holds(JsonNode* node, GType type) {
    return JSON_NODE_HOLDS_VALUE(node) && json_node_get_value_type(node) == type;
  }
  static bool is_number(JsonNode* node) { return holds(node, G_TYPE_INT64) || holds(node, G_TYPE_DOUBLE); }

 private:
  JsonObject* object_;
  std::string where_;
};

struct Header {
  gallery::ModelFingerprint model;
  int dim = 0;
};

Result<Header> read_header(const LineObject& line) {
  Result<std::int64_t> version = line.integer("taconite_gallery", std::nullopt);
  if (!version)
    return Error{ErrorKind::Input,
                 version.error().message + " (the first line must be the header {\"taconite_gallery\":" +
                     std::to_string(kExportFormatVersion) + ",\"embedding_dim\":..,\"model_fingerprint\":..})"};
  if (version.value() != kExportFormatVersion)
    return Error{ErrorKind::Input, line.where() + "export format version " + std::to_string(version.value()) +
                                       ", this program reads " + std::to_string(kExportFormatVersion)};
  Result<std::int64_t> dim = line.integer("embedding_dim", std::nullopt);
  if (!dim) return dim.error();
  if (dim.value() < 1 || dim.value() > gallery::kMaxEmbeddingDim)
    return Error{ErrorKind::Input, line.where() + "\"embedding_dim\" " + std::to_string(dim.value()) +
                                       " out of range 1.." + std::to_string(gallery::kMaxEmbeddingDim)};
  Result<std::string> fingerprint = line.text("model_fingerprint", std::nullopt);
  if (!fingerprint) return fingerprint.error();
  Result<std::string> model = line.text("model", "");
  if (!model) return model.error();
  return Header{{fingerprint.value(), model.value()}, static_cast<int>(dim.value())};
}

// The template of a line (nullopt: an identity line without one).
Result<std::optional<gallery::NewTemplate>> read_template(const LineObject& line, int dim) {
  JsonNode* embedding = line.find("embedding");
  if (!embedding) return std::optional<gallery::NewTemplate>();
  if (!JSON_NODE_HOLDS_ARRAY(embedding)) return line.wrong("embedding", "an array of numbers", embedding);
  JsonArray* values = json_node_get_array(embedding);
  if (static_cast<int>(json_array_get_length(values)) != dim)
    return Error{ErrorKind::Input, line.where() + "embedding of " + std::to_string(json_array_get_length(values)) +
                                       " values, the header says " + std::to_string(dim)};
  gallery::NewTemplate t;
  t.embedding.reserve(static_cast<std::size_t>(dim));
  for (guint i = 0; i < json_array_get_length(values); ++i) {
    JsonNode* v = json_array_get_element(values, i);
    const double value = LineObject::is_number(v) ? json_node_get_double(v) : NAN;
    if (!LineObject::is_number(v) || !std::isfinite(value) || std::abs(value) > FLT_MAX)
      return Error{ErrorKind::Input,
                   line.where() + "embedding value " + std::to_string(i) + " is not a finite float32 number"};
    t.embedding.push_back(static_cast<float>(value));
  }
  Result<double> norm = line.number("norm", 0.0);
  if (!norm) return norm.error();
  if (norm.value() < 0.0) return Error{ErrorKind::Input, line.where() + "\"norm\" is negative"};
  Result<std::string> source = line.text("source", "import");
  if (!source) return source.error();
  Result<std::int64_t> created = line.integer("created_unix", 0);
  if (!created) return created.error();
  t.norm = norm.value();
  t.source = source.value();
  t.created_unix = created.value();
  return std::optional<gallery::NewTemplate>(std::move(t));
}

// Opens the gallery the header names (creating it when missing; `created` says so).
Result<GalleryStore> open_for(const std::filesystem::path& path, const Header& header, const std::string& where,
                              bool& created) {
  std::error_code ec;
  // A PostgreSQL gallery is made with `create` first (an import that fails cannot drop it again).
  if (!gallery::is_postgres_location(path.string()) && !std::filesystem::exists(path, ec)) {
    Result<GalleryStore> made = GalleryStore::create(path, header.model, header.dim);
    if (!made) return Error{made.error().kind, where + made.error().message};
    created = true;
    return made;
  }
  Result<GalleryStore> opened = GalleryStore::open(path, GalleryStore::Access::ReadWrite);
  if (!opened) return opened.error();
  if (gallery::Status s = opened.value().check_model(header.model); !s) return Error{s.error().kind, where + s.error().message};
  Result<gallery::GalleryInfo> info = opened.value().info();
  if (!info) return info.error();
  if (info.value().embedding_dim != header.dim)
    return Error{ErrorKind::Input, where + "embeddings of " + std::to_string(header.dim) + " values, " +
                                       path.string() + " holds " + std::to_string(info.value().embedding_dim)};
  return opened;
}

Result<ImportSummary> import_lines(const std::filesystem::path& path, const std::filesystem::path& file,
                                   bool& created) {
  const bundle::RegularFile input = bundle::RegularFile::open(file);  // throws Failure (caught below)
  LineReader lines(input.fd(), kMaxLineBytes);
  ImportSummary summary;
  std::optional<GalleryStore> store;
  std::optional<GalleryStore::WriteBatch> batch;
  int dim = 0;
  std::unordered_set<std::int64_t> identities;
  std::string text;
  for (long number = 1;; ++number) {
    const std::string where = file.string() + ":" + std::to_string(number) + ": ";
    Result<bool> got = lines.next(text);
    if (!got) return Error{got.error().kind, where + got.error().message};
    if (!got.value()) break;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    Result<JsonNodePtr> node = json::parse_json(text);
    if (!node) return Error{ErrorKind::Input, where + node.error().message};
    if (!JSON_NODE_HOLDS_OBJECT(node.value().get()))
      return Error{ErrorKind::Input, where + "a line must be a JSON object, not " + json::json_kind(node.value().get())};
    const LineObject line(json_node_get_object(node.value().get()), where);

    if (!store) {
      Result<Header> header = read_header(line);
      if (!header) return header.error();
      Result<GalleryStore> opened = open_for(path, header.value(), where, created);
      if (!opened) return opened.error();
      store.emplace(std::move(opened.value()));
      Result<GalleryStore::WriteBatch> begun = store->begin_write();
      if (!begun) return begun.error();
      batch.emplace(std::move(begun.value()));
      dim = header.value().dim;
      continue;
    }

    Result<std::string> name = line.text("name", std::nullopt);
    if (!name) return name.error();
    std::string metadata;
    if (JsonNode* meta = line.find("metadata")) {
      if (!JSON_NODE_HOLDS_OBJECT(meta)) return line.wrong("metadata", "an object", meta);
      metadata = json::write_json(meta);
    }
    Result<std::optional<gallery::NewTemplate>> t = read_template(line, dim);
    if (!t) return t.error();
    const std::span<const gallery::NewTemplate> templates =
        t.value() ? std::span<const gallery::NewTemplate>(&*t.value(), 1) : std::span<const gallery::NewTemplate>();
    Result<gallery::Enrolled> enrolled = batch->enroll(name.value(), metadata, templates);
    if (!enrolled) return Error{enrolled.error().kind, where + enrolled.error().message};
    identities.insert(enrolled.value().identity);
    summary.templates += static_cast<std::int64_t>(enrolled.value().added);
    summary.duplicates += static_cast<std::int64_t>(enrolled.value().duplicates);
  }
  if (!store) return Error{ErrorKind::Input, file.string() + ": empty (no header line)"};
  if (gallery::Status s = batch->commit(); !s) return s.error();
  summary.identities = static_cast<std::int64_t>(identities.size());
  summary.created = created;
  return summary;
}

}  // namespace

gallery::Status export_jsonl(const GalleryStore& store, std::ostream& out, const ExportWarning& warn) {
  // One read transaction: a write meanwhile must not give templates of an identity not listed.
  Result<GalleryStore::ReadSnapshot> snapshot = store.read_snapshot();
  if (!snapshot) return snapshot.error();
  Result<gallery::GalleryInfo> info = store.info();
  if (!info) return info.error();
  Result<std::vector<gallery::IdentityRow>> identities = store.identities();
  if (!identities) return identities.error();
  Result<std::vector<gallery::TemplateRow>> templates = store.templates(true);
  if (!templates) return templates.error();

  // JSON has no NaN or infinity: a template stored before values were checked is refused, not
  // written as text no reader takes.
  for (const gallery::TemplateRow& t : templates.value())
    for (float v : t.embedding)
      if (!std::isfinite(v) || !std::isfinite(t.norm))
        return Error{ErrorKind::Input, store.path().string() + ": template " + std::to_string(t.id) +
                                           " holds a value that is not finite; remove its identity"};

  GPtr<JsonBuilder> header(json_builder_new());
  json_builder_begin_object(header.get());
  json_builder_set_member_name(header.get(), "taconite_gallery");
  json_builder_add_int_value(header.get(), kExportFormatVersion);
  json_builder_set_member_name(header.get(), "embedding_dim");
  json_builder_add_int_value(header.get(), info.value().embedding_dim);
  json_builder_set_member_name(header.get(), "model");
  json_builder_add_string_value(header.get(), info.value().model.c_str());
  json_builder_set_member_name(header.get(), "model_fingerprint");
  json_builder_add_string_value(header.get(), info.value().model_fingerprint.c_str());
  json_builder_end_object(header.get());
  out << to_json(header.get()) << "\n";

  for (const gallery::IdentityRow& identity : identities.value()) {
    std::string metadata_problem;
    JsonNodePtr metadata(metadata_node(identity.metadata, metadata_problem));
    json::Repairs repairs;  // strings of this identity's lines that are not UTF-8 (stored before the checks)
    auto line = [&](const gallery::TemplateRow* t) {
      GPtr<JsonBuilder> b(json_builder_new());
      json_builder_begin_object(b.get());
      json_builder_set_member_name(b.get(), "name");
      json_builder_add_string_value(b.get(), identity.name.c_str());
      json_builder_set_member_name(b.get(), "metadata");
      json_builder_add_value(b.get(), json_node_copy(metadata.get()));
      if (t) {
        json_builder_set_member_name(b.get(), "embedding");
        json_builder_begin_array(b.get());
        for (float v : t->embedding) json_builder_add_double_value(b.get(), v);
        json_builder_end_array(b.get());
        json_builder_set_member_name(b.get(), "norm");
        json_builder_add_double_value(b.get(), t->norm);
        json_builder_set_member_name(b.get(), "source");
        json_builder_add_string_value(b.get(), t->source.c_str());
        json_builder_set_member_name(b.get(), "created_unix");
        json_builder_add_int_value(b.get(), t->created_unix);
      }
      json_builder_end_object(b.get());
      out << to_json(b.get(), &repairs) << "\n";
    };
    bool any = false;
    for (const gallery::TemplateRow& t : templates.value())
      if (t.identity_id == identity.id) {
        line(&t);
        any = true;
      }
    if (!any) line(nullptr);
    // Named by id and (mended) name: what the gallery held that was written mended, once per identity.
    const std::string who = store.path().string() + ": identity " + std::to_string(identity.id) + " \"" +
                            json::repaired_utf8(identity.name) + "\": ";
    if (!metadata_problem.empty()) warn(who + "its metadata " + metadata_problem);
    if (repairs.strings)
      warn(who + "\"" + repairs.first + "\"" + (repairs.strings > 1 ? " and other strings" : "") +
           " held bytes that are not UTF-8, written as U+FFFD");
  }
  out.flush();
  if (!out) return Error{ErrorKind::Io, "writing the export failed"};
  return gallery::Ok{};
}

Result<ImportSummary> import_jsonl(const std::filesystem::path& gallery, const std::filesystem::path& file) {
  bool created = false;
  Result<ImportSummary> summary = [&]() -> Result<ImportSummary> {
    try {
      return import_lines(gallery, file, created);
    } catch (const Failure& f) {  // RegularFile: missing, a FIFO, a device, ...
      return f.error();
    }
  }();
  if (!summary && created) {  // all or nothing: no empty gallery left behind
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(gallery.string() + suffix, ec);
  }
  return summary;
}

}  // namespace taconite::gallery_cli
