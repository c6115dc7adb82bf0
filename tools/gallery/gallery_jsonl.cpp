#include "gallery_jsonl.hpp"

#include <json-glib/json-glib.h>

#include <istream>
#include <memory>
#include <optional>
#include <ostream>

namespace taconite::gallery_cli {

namespace {

using gallery::GalleryStore;

constexpr std::size_t kMaxTemplatesPerWrite = 10000;

struct GObjectDeleter {
  void operator()(gpointer p) const { g_object_unref(p); }
};
template <typename T>
using GPtr = std::unique_ptr<T, GObjectDeleter>;

std::string to_json(JsonBuilder* builder) {
  JsonNode* root = json_builder_get_root(builder);
  GPtr<JsonGenerator> generator(json_generator_new());
  json_generator_set_root(generator.get(), root);
  gchar* text = json_generator_to_data(generator.get(), nullptr);
  std::string out = text;
  g_free(text);
  json_node_unref(root);
  return out;
}

// The metadata text as a JSON node (an empty object when it does not parse as one).
JsonNode* metadata_node(const std::string& metadata) {
  JsonNode* node = json_from_string(metadata.c_str(), nullptr);
  if (node && JSON_NODE_HOLDS_OBJECT(node)) return node;
  if (node) json_node_unref(node);
  JsonNode* empty = json_node_new(JSON_NODE_OBJECT);
  json_node_take_object(empty, json_object_new());
  return empty;
}

}  // namespace

gallery::Status export_jsonl(const GalleryStore& store, std::ostream& out) {
  Result<gallery::GalleryInfo> info = store.info();
  if (!info) return info.error();
  Result<std::vector<gallery::IdentityRow>> identities = store.identities();
  if (!identities) return identities.error();
  Result<std::vector<gallery::TemplateRow>> templates = store.templates(true);
  if (!templates) return templates.error();

  GPtr<JsonBuilder> header(json_builder_new());
  json_builder_begin_object(header.get());
  json_builder_set_member_name(header.get(), "taconite_gallery");
  json_builder_add_int_value(header.get(), gallery::kSchemaVersion);
  json_builder_set_member_name(header.get(), "embedding_dim");
  json_builder_add_int_value(header.get(), info.value().embedding_dim);
  json_builder_set_member_name(header.get(), "model");
  json_builder_add_string_value(header.get(), info.value().model.c_str());
  json_builder_set_member_name(header.get(), "model_fingerprint");
  json_builder_add_string_value(header.get(), info.value().model_fingerprint.c_str());
  json_builder_end_object(header.get());
  out << to_json(header.get()) << "\n";

  for (const gallery::IdentityRow& identity : identities.value()) {
    auto line = [&](const gallery::TemplateRow* t) {
      GPtr<JsonBuilder> b(json_builder_new());
      json_builder_begin_object(b.get());
      json_builder_set_member_name(b.get(), "name");
      json_builder_add_string_value(b.get(), identity.name.c_str());
      json_builder_set_member_name(b.get(), "metadata");
      json_builder_add_value(b.get(), metadata_node(identity.metadata));
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
      out << to_json(b.get()) << "\n";
    };
    bool any = false;
    for (const gallery::TemplateRow& t : templates.value())
      if (t.identity_id == identity.id) {
        line(&t);
        any = true;
      }
    if (!any) line(nullptr);
  }
  out.flush();
  if (!out) return Error{ErrorKind::Io, "writing the export failed"};
  return gallery::Ok{};
}

Result<ImportSummary> import_jsonl(const std::filesystem::path& path, std::istream& in, const std::string& source) {
  ImportSummary summary;
  std::optional<GalleryStore> store;
  int dim = 0;
  std::string pending_name, pending_metadata;
  std::vector<gallery::NewTemplate> pending;
  bool have_pending = false;
  auto flush = [&]() -> gallery::Status {
    if (!have_pending) return gallery::Ok{};
    Result<std::int64_t> id = store->enroll(pending_name, pending_metadata, pending);
    if (!id) return id.error();
    ++summary.identities;
    summary.templates += static_cast<std::int64_t>(pending.size());
    pending.clear();
    have_pending = false;
    return gallery::Ok{};
  };

  std::string text;
  for (long number = 1; std::getline(in, text); ++number) {
    const std::string where = source + ":" + std::to_string(number) + ": ";
    if (text.size() > kMaxLineBytes) return Error{ErrorKind::Input, where + "line longer than 1 MiB"};
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    GError* error = nullptr;
    JsonNode* node = json_from_string(text.c_str(), &error);
    if (!node || !JSON_NODE_HOLDS_OBJECT(node)) {
      const std::string why = error ? error->message : "not a JSON object";
      if (error) g_error_free(error);
      if (node) json_node_unref(node);
      return Error{ErrorKind::Input, where + why};
    }
    std::unique_ptr<JsonNode, decltype(&json_node_unref)> owned(node, json_node_unref);
    JsonObject* object = json_node_get_object(node);

    if (!store) {  // the header
      if (!json_object_has_member(object, "taconite_gallery") || !json_object_has_member(object, "model_fingerprint") ||
          !json_object_has_member(object, "embedding_dim"))
        return Error{
            ErrorKind::Input,
            where + "expected the header line {\"taconite_gallery\":1,\"embedding_dim\":..,\"model_fingerprint\":..}"};
      if (json_object_get_int_member(object, "taconite_gallery") != gallery::kSchemaVersion)
        return Error{ErrorKind::Input, where + "export format version " +
                                           std::to_string(json_object_get_int_member(object, "taconite_gallery")) +
                                           ", this program reads " + std::to_string(gallery::kSchemaVersion)};
      gallery::ModelFingerprint model;
      model.sha256 = json_object_get_string_member_with_default(object, "model_fingerprint", "");
      model.model = json_object_get_string_member_with_default(object, "model", "");
      dim = static_cast<int>(json_object_get_int_member(object, "embedding_dim"));
      std::error_code ec;
      if (std::filesystem::exists(path, ec)) {
        Result<GalleryStore> opened = GalleryStore::open(path, GalleryStore::Access::ReadWrite);
        if (!opened) return opened.error();
        if (gallery::Status s = opened.value().check_model(model); !s) return Error{s.error().kind, where + s.error().message};
        store.emplace(std::move(opened.value()));
      } else {
        Result<GalleryStore> created = GalleryStore::create(path, model, dim);
        if (!created) return Error{created.error().kind, where + created.error().message};
        store.emplace(std::move(created.value()));
        summary.created = true;
      }
      continue;
    }

    const char* name = json_object_get_string_member_with_default(object, "name", "");
    if (!*name) return Error{ErrorKind::Input, where + "a template line needs a \"name\""};
    if (!have_pending || pending_name != name) {
      if (gallery::Status s = flush(); !s) return s.error();
      pending_name = name;
      pending_metadata = "{}";
      if (JsonNode* meta = json_object_get_member(object, "metadata"); meta && JSON_NODE_HOLDS_OBJECT(meta)) {
        gchar* meta_text = json_to_string(meta, FALSE);
        pending_metadata = meta_text;
        g_free(meta_text);
      }
      have_pending = true;
    }
    JsonArray* values =
        json_object_has_member(object, "embedding") ? json_object_get_array_member(object, "embedding") : nullptr;
    if (!values) continue;  // an identity without templates
    if (static_cast<int>(json_array_get_length(values)) != dim)
      return Error{ErrorKind::Input, where + "embedding of " + std::to_string(json_array_get_length(values)) +
                                         " values, the header says " + std::to_string(dim)};
    gallery::NewTemplate t;
    t.embedding.reserve(static_cast<std::size_t>(dim));
    for (guint i = 0; i < json_array_get_length(values); ++i) {
      JsonNode* v = json_array_get_element(values, i);
      if (!JSON_NODE_HOLDS_VALUE(v) ||
          (json_node_get_value_type(v) != G_TYPE_DOUBLE && json_node_get_value_type(v) != G_TYPE_INT64))
        return Error{ErrorKind::Input, where + "embedding value " + std::to_string(i) + " is not a number"};
      t.embedding.push_back(static_cast<float>(json_node_get_double(v)));
    }
    t.norm = json_object_get_double_member_with_default(object, "norm", 0.0);
    t.source = json_object_get_string_member_with_default(object, "source", "import");
    t.created_unix = json_object_get_int_member_with_default(object, "created_unix", 0);
    pending.push_back(std::move(t));
    if (pending.size() >= kMaxTemplatesPerWrite) {  // bounds memory: a long run commits in parts
      if (gallery::Status s = flush(); !s) return s.error();
      pending_name = name;
      have_pending = true;
    }
  }
  if (!store) return Error{ErrorKind::Input, source + ": empty (no header line)"};
  if (gallery::Status s = flush(); !s) return s.error();
  return summary;
}

}  // namespace taconite::gallery_cli
