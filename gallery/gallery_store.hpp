// A face gallery in one SQLite file: who (identities), what they look like (templates: unit
// embeddings with the raw norm as a quality), and the gallery's own record (schema version,
// embedding size, model fingerprint, revision).
//
// The file is in WAL mode: readers (a running pipeline) never block a writer (an enrollment) and
// see either all or none of a write; every write is one transaction and bumps `revision`, which
// tells readers (and the persisted search index) that the gallery changed. A write waits up to
// `busy_timeout_ms` for another writer, then fails with an error naming the file.
//
// Every error names the file. No exception leaves these calls. One GalleryStore is not safe for
// concurrent calls; open one per thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model_fingerprint.hpp"
#include "taconite/error.hpp"

namespace taconite::gallery {

// The result of a gallery call that returns nothing but may fail.
struct Ok {};
using Status = Result<Ok>;

inline constexpr int kSchemaVersion = 1;
// Bounds what a file can make a reader allocate: a template's size and a name's length.
inline constexpr int kMaxEmbeddingDim = 4096;
inline constexpr std::size_t kMaxNameBytes = 256;
inline constexpr std::size_t kMaxMetadataBytes = 64 * 1024;

struct GalleryInfo {
  int schema_version = 0;
  int embedding_dim = 0;
  std::string model_fingerprint;  // ModelFingerprint::sha256 of the bundle it was made with
  std::string model;              // the bundle's model name, for messages
  std::int64_t created_unix = 0;
  std::int64_t revision = 0;  // bumped by every write
  std::int64_t identities = 0;
  std::int64_t templates = 0;
};

struct IdentityRow {
  std::int64_t id = 0;
  std::string name;
  std::string metadata;  // free JSON object text, "{}" when none
  std::int64_t templates = 0;
  std::int64_t created_unix = 0;
};

struct TemplateRow {
  std::int64_t id = 0;
  std::int64_t identity_id = 0;
  std::vector<float> embedding;  // unit length; empty when read without embeddings
  double norm = 0.0;             // the raw embedding's L2 norm (AdaFace's quality signal)
  std::string source;            // where it came from (file path, "import", ...)
  std::int64_t created_unix = 0;
};

struct NewTemplate {
  std::vector<float> embedding;  // raw or unit; stored L2-normalised
  double norm = 0.0;             // 0: the L2 norm of `embedding`
  std::string source;
  std::int64_t created_unix = 0;  // 0: now
};

class GalleryStore {
 public:
  struct Impl;  // private state (defined in gallery_store.cpp)
  enum class Access { ReadOnly, ReadWrite };

  // A new gallery file for embeddings of `dim` values from the model `model`. Fails when the file
  // exists.
  static Result<GalleryStore> create(const std::filesystem::path& path, const ModelFingerprint& model, int dim);
  // Opens an existing gallery; fails (naming the file) when it is missing, not a gallery, of
  // another schema version, or corrupt.
  static Result<GalleryStore> open(const std::filesystem::path& path, Access access, int busy_timeout_ms = 5000);

  GalleryStore(GalleryStore&&) noexcept;
  GalleryStore& operator=(GalleryStore&&) noexcept;
  ~GalleryStore();

  const std::filesystem::path& path() const;
  Result<GalleryInfo> info() const;
  Result<std::int64_t> revision() const;

  // Input error when `model` is not the model the gallery was made with: embeddings of different
  // models are not comparable, and mixing them gives silently wrong matches.
  Status check_model(const ModelFingerprint& model) const;

  // Adds templates to the identity `name`, creating it (with `metadata`, a JSON object text, or
  // "{}" when empty) if it is new; one transaction. Returns the identity id.
  Result<std::int64_t> enroll(const std::string& name, const std::string& metadata,
                              std::span<const NewTemplate> templates);
  // Removes an identity and its templates; false when there is none of that name.
  Result<bool> remove(const std::string& name);

  Result<std::vector<IdentityRow>> identities() const;
  // Every template, in id order; without embeddings only ids, identity, norm, source and time.
  Result<std::vector<TemplateRow>> templates(bool with_embeddings) const;

 private:
  explicit GalleryStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace taconite::gallery
