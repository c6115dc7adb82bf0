// The gallery library on real SQLite files and real FAISS indexes: store, model fingerprint,
// schema/corruption/lock errors, WAL readers during a write, exact and HNSW search.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <random>
#include <thread>

#include "gallery_index.hpp"
#include "gallery_store.hpp"
#include "identity_fields.hpp"
#include "json_write.hpp"
#include "model_fingerprint.hpp"
#include "requires_hnsw.hpp"

namespace {

using namespace taconite::gallery;
namespace fs = std::filesystem;

constexpr int kDim = 16;

class GalleryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("taconite-gallery-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static ModelFingerprint model(char digit = 'a', const char* name = "IR-test") {
    return {std::string(64, digit), name};
  }
  GalleryStore make(const char* file = "g.db") {
    auto created = GalleryStore::create(dir_ / file, model(), kDim);
    EXPECT_TRUE(created.ok()) << (created.ok() ? "" : created.error().message);
    return std::move(created.value());
  }
  // A bundle-shaped directory: manifest.txt, tensors.txt (a weight and a ref tensor), tensors.bin.
  fs::path fake_bundle(const char* name, const std::string& manifest, const std::string& bin) {
    const fs::path b = dir_ / name;
    fs::create_directories(b);
    std::ofstream(b / "manifest.txt") << manifest;
    std::ofstream(b / "tensors.txt") << "w.conv0 bf16 2,2 0 8\nref.input f32 1 8 4\n";
    std::ofstream(b / "tensors.bin", std::ios::binary) << bin;
    return b;
  }
  fs::path dir_;
};

std::vector<float> axis(int i, float other = 0.0f) {
  std::vector<float> v(kDim, other);
  v[static_cast<std::size_t>(i)] = 1.0f;
  return v;
}

TEST_F(GalleryTest, EnrollListRemoveAndRevision) {
  GalleryStore store = make();
  ASSERT_EQ(store.revision().value(), 1);  // creating is the first write
  std::vector<NewTemplate> two = {{axis(0), 0.0, "a.png", 0}, {axis(1), 7.5, "b.png", 0}};
  auto id = store.enroll("alice", R"({"badge":7})", two);
  ASSERT_TRUE(id.ok()) << id.error().message;
  EXPECT_EQ(store.revision().value(), 2);
  std::vector<NewTemplate> scaled = {{std::vector<float>(kDim, 3.0f), 0.0, "c.png", 0}};
  ASSERT_EQ(store.enroll("alice", "", scaled).value(), id.value());  // same identity, one more template
  auto identities = store.identities().value();
  ASSERT_EQ(identities.size(), 1u);
  EXPECT_EQ(identities[0].templates, 3);
  EXPECT_EQ(identities[0].metadata, R"({"badge":7})");
  auto templates = store.templates(true).value();
  ASSERT_EQ(templates.size(), 3u);
  EXPECT_DOUBLE_EQ(templates[1].norm, 7.5);
  EXPECT_NEAR(templates[2].norm, 12.0, 1e-9);            // computed: |3 * ones(16)| = 12
  EXPECT_NEAR(templates[2].embedding[0], 0.25f, 1e-6f);  // stored unit length
  EXPECT_TRUE(store.remove("alice").value());
  EXPECT_FALSE(store.remove("alice").value());
  EXPECT_EQ(store.templates(false).value().size(), 0u);  // templates go with their identity
  EXPECT_EQ(store.revision().value(), 4);                // the failed remove wrote nothing
}

TEST_F(GalleryTest, RefusesBadEmbeddingsAndExistingFile) {
  GalleryStore store = make();
  std::vector<NewTemplate> short_one = {{std::vector<float>(kDim - 1, 1.0f), 0.0, "x", 0}};
  auto r = store.enroll("bob", "", short_one);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("15 values, the gallery holds 16"), std::string::npos) << r.error().message;
  std::vector<NewTemplate> zero = {{std::vector<float>(kDim, 0.0f), 0.0, "zero.png", 0}};
  EXPECT_FALSE(store.enroll("bob", "", zero).ok());
  EXPECT_EQ(store.identities().value().size(), 0u);  // nothing half-written
  auto again = GalleryStore::create(dir_ / "g.db", model(), kDim);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("already exists"), std::string::npos);
}

// Ids are AUTOINCREMENT: after `remove X; enroll Y` a reader holding X's ids (an index built before)
// can never find them on Y's face.
TEST_F(GalleryTest, IdsAreNeverReusedAfterARemoval) {
  GalleryStore store = make();
  std::vector<NewTemplate> one = {{axis(0), 0.0, "x", 0}};
  ASSERT_TRUE(store.enroll("alice", "", one).ok());
  const std::int64_t x = store.enroll("xavier", "", one).value();
  const std::int64_t x_template = store.templates(false).value().back().id;
  ASSERT_TRUE(store.remove("xavier").value());
  std::vector<NewTemplate> other = {{axis(1), 0.0, "y", 0}};
  const std::int64_t y = store.enroll("yolanda", "", other).value();
  EXPECT_GT(y, x);
  EXPECT_GT(store.templates(false).value().back().id, x_template);
}

TEST_F(GalleryTest, ReadSnapshotSeesOneRevisionAcrossReads) {
  GalleryStore writer = make();
  std::vector<NewTemplate> xs = {{axis(0), 0.0, "x", 0}};
  const std::int64_t x = writer.enroll("xavier", "", xs).value();
  auto reader = GalleryStore::open(dir_ / "g.db", GalleryStore::Access::ReadOnly);
  ASSERT_TRUE(reader.ok());
  {
    auto snapshot = reader.value().read_snapshot();
    ASSERT_TRUE(snapshot.ok()) << snapshot.error().message;
    const auto identities = reader.value().identities().value();
    ASSERT_EQ(identities.size(), 1u);
    EXPECT_EQ(identities[0].name, "xavier");
    // Between the reader's two reads: xavier leaves, yolanda comes.
    ASSERT_TRUE(writer.remove("xavier").value());
    std::vector<NewTemplate> ys = {{axis(1), 0.0, "y", 0}};
    ASSERT_TRUE(writer.enroll("yolanda", "", ys).ok());
    const auto templates = reader.value().templates(true).value();
    ASSERT_EQ(templates.size(), 1u);
    EXPECT_EQ(templates[0].identity_id, x);
    EXPECT_EQ(templates[0].embedding, axis(0)) << "the template must be xavier's, as the identities read";
    EXPECT_EQ(reader.value().revision().value(), 2);
  }
  EXPECT_EQ(reader.value().identities().value().at(0).name, "yolanda");  // the snapshot has ended
  EXPECT_EQ(reader.value().revision().value(), 4);
}

// A gallery written by schema version 1 (ids without AUTOINCREMENT) is read as it is, and the first
// read-write open migrates it, keeping its ids.
TEST_F(GalleryTest, SchemaVersion1IsReadAndMigratedByAWriter) {
  const fs::path file = dir_ / "v1.db";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
  const std::string blob(reinterpret_cast<const char*>(axis(2).data()), kDim * sizeof(float));
  const std::string v1 = R"sql(
PRAGMA application_id = 1413563207; PRAGMA user_version = 1; PRAGMA journal_mode = WAL;
CREATE TABLE gallery(key INTEGER PRIMARY KEY CHECK (key = 1), schema_version INTEGER NOT NULL,
  embedding_dim INTEGER NOT NULL, model_fingerprint TEXT NOT NULL, model TEXT NOT NULL,
  created_unix INTEGER NOT NULL, revision INTEGER NOT NULL);
CREATE TABLE identities(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, metadata TEXT NOT NULL DEFAULT '{}',
  created_unix INTEGER NOT NULL);
CREATE TABLE templates(id INTEGER PRIMARY KEY, identity_id INTEGER NOT NULL REFERENCES identities(id) ON DELETE CASCADE,
  embedding BLOB NOT NULL, norm REAL NOT NULL, source TEXT NOT NULL, created_unix INTEGER NOT NULL);
CREATE INDEX templates_by_identity ON templates(identity_id);
INSERT INTO gallery VALUES (1, 1, 16, ')sql" + std::string(64, 'a') + R"sql(', 'IR-test', 1, 7);
INSERT INTO identities VALUES (4, 'alice', '{"badge":1}', 1), (9, 'bob', '{}', 1);
INSERT INTO templates VALUES (5, 4, ?, 2.0, 'a.png', 1), (12, 9, ?, 3.0, 'b.png', 1);
)sql";
  // The template blobs go in as hex literals (X'...').
  std::string hex;
  for (unsigned char c : blob) {
    static const char* digits = "0123456789ABCDEF";
    hex += digits[c >> 4];
    hex += digits[c & 15];
  }
  std::string sql = v1;
  for (std::size_t at; (at = sql.find('?')) != std::string::npos;) sql.replace(at, 1, "X'" + hex + "'");
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);

  {
    auto reader = GalleryStore::open(file, GalleryStore::Access::ReadOnly);
    ASSERT_TRUE(reader.ok()) << reader.error().message;
    EXPECT_EQ(reader.value().info().value().schema_version, 1);  // a reader changes nothing
    EXPECT_EQ(reader.value().templates(true).value().size(), 2u);
  }
  auto writer = GalleryStore::open(file, GalleryStore::Access::ReadWrite);
  ASSERT_TRUE(writer.ok()) << writer.error().message;
  GalleryStore& store = writer.value();
  EXPECT_EQ(store.info().value().schema_version, 2);
  const auto identities = store.identities().value();
  ASSERT_EQ(identities.size(), 2u);
  EXPECT_EQ(identities[0].id, 4);
  EXPECT_EQ(identities[0].metadata, R"({"badge":1})");
  EXPECT_EQ(identities[1].id, 9);
  const auto templates = store.templates(true).value();
  ASSERT_EQ(templates.size(), 2u);
  EXPECT_EQ(templates[1].id, 12);
  EXPECT_EQ(templates[1].embedding, axis(2));
  ASSERT_TRUE(store.remove("bob").value());  // the highest ids go...
  std::vector<NewTemplate> one = {{axis(3), 0.0, "c", 0}};
  EXPECT_EQ(store.enroll("carol", "", one).value(), 10);  // ...and are not given again
  EXPECT_EQ(store.templates(false).value().back().id, 13);
  EXPECT_EQ(store.templates(false).value().front().identity_id, 4);  // alice's template kept its identity
}

TEST_F(GalleryTest, NamesMustBePrintableUtf8OnOneLine) {
  GalleryStore store = make();
  std::vector<NewTemplate> one = {{axis(0), 0.0, "x", 0}};
  const std::pair<std::string, const char*> refused[] = {
      {"", "1..256"},
      {std::string(257, 'n'), "1..256"},
      {"caf\xE9", "not valid UTF-8 (byte 3)"},
      {"two\nlines", "control character (U+000A at character 3)"},
      {"tab\there", "control character (U+0009"},
      {"nel\xC2\x85", "control character (U+0085"},
      {"line\xE2\x80\xA8sep", "control character (U+2028"},
      {"   \xE3\x80\x80", "blank"},  // ASCII and ideographic spaces
  };
  for (const auto& [name, why] : refused) {
    auto r = store.enroll(name, "", one);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.error().kind, taconite::ErrorKind::Input);
    EXPECT_NE(r.error().message.find(why), std::string::npos) << r.error().message;
  }
  EXPECT_EQ(store.revision().value(), 1);  // nothing written
  EXPECT_TRUE(store.enroll("Jos\xC3\xA9 \xE5\xB1\xB1\xE7\x94\xB0", "", one).ok());  // "José 山田"
}

TEST_F(GalleryTest, MetadataMustBeAJsonObjectAndIsStoredCompact) {
  GalleryStore store = make();
  std::vector<NewTemplate> one = {{axis(0), 0.0, "x", 0}};
  const std::pair<std::string, const char*> refused[] = {
      {"not json", "must be a JSON object"},
      {"[1, 2]", "not an array"},
      {"\"text\"", "not a string"},
      {"{'a': 1}", "single quotes and comments"},
      {"{/* \" */ \"a\": 1}", "single quotes and comments"},
      {"{\"a\": 1e999}", "too large"},
      {"{\"a\": 99999999999999999999}", "the integer 99999999999999999999 is beyond 64 bits"},  // json-glib: -1
      {"{\"a\": [-9223372036854775809]}", "beyond 64 bits"},
      {"{\"a\":" + std::string(40, '[') + std::string(40, ']') + "}", "nested 41 levels deep"},
      {std::string(kMaxMetadataBytes + 1, ' '), "at most 65536"},
  };
  for (const auto& [metadata, why] : refused) {
    auto r = store.enroll("alice", metadata, one);
    ASSERT_FALSE(r.ok()) << metadata;
    EXPECT_NE(r.error().message.find(why), std::string::npos) << r.error().message;
  }
  EXPECT_TRUE(store.identities().value().empty());
  ASSERT_TRUE(store.enroll("alice", "{ \"team\" :\n [1, \"nasa\"] }", one).ok());
  EXPECT_EQ(store.identities().value().at(0).metadata, R"({"team":[1,"nasa"]})");
  EXPECT_EQ(canonical_metadata("").value(), "{}");
}

// json-glib 1.6 stored 1e20 as `1e+20.0` (not JSON); the metadata is now written by json_write.
TEST_F(GalleryTest, MetadataNumbersAreStoredAsValidJsonInShortestForm) {
  EXPECT_EQ(canonical_metadata(R"({"a":1e20,"b":1e-300,"c":[1e17, 1E+308, 5e-324, -0.0, 0.1, 2.50, 7]})").value(),
            R"({"a":1e+20,"b":1e-300,"c":[1e+17,1e+308,5e-324,-0.0,0.1,2.5,7]})");
}

TEST_F(GalleryTest, StoredMetadataThatIsNotJsonIsMendedOrKeptAsText) {
  const StoredMetadata valid = read_stored_metadata(R"({"a":1e+20,"s":"1e+20.0"})");
  ASSERT_TRUE(valid.object);
  EXPECT_EQ(valid.problem, "");
  EXPECT_EQ(taconite::json::write_json(valid.object.get()), R"({"a":1e+20,"s":"1e+20.0"})");

  // What json-glib 1.6 stored; the ".0" inside a string stays.
  const StoredMetadata legacy = read_stored_metadata(R"({"a":1e+20.0,"b":[1e-300.0,-2.5E+17.0],"s":"1e+20.0"})");
  ASSERT_TRUE(legacy.object);
  EXPECT_EQ(taconite::json::write_json(legacy.object.get()), R"({"a":1e+20,"b":[1e-300,-2.5e+17],"s":"1e+20.0"})");
  EXPECT_NE(legacy.problem.find("json-glib 1.6"), std::string::npos) << legacy.problem;

  const StoredMetadata bytes = read_stored_metadata("{\"team\":\"caf\xC3\"}");
  ASSERT_TRUE(bytes.object);
  EXPECT_EQ(taconite::json::write_json(bytes.object.get()), "{\"team\":\"caf\xEF\xBF\xBD\"}");
  EXPECT_NE(bytes.problem.find("not UTF-8"), std::string::npos) << bytes.problem;

  for (const char* text : {"badge 7", "[1]", "{\"a\":1e+20.0.0}"}) {
    const StoredMetadata kept = read_stored_metadata(text);
    EXPECT_FALSE(kept.object) << text;
    EXPECT_EQ(kept.text, text);
    EXPECT_NE(kept.problem.find("written as a string"), std::string::npos) << kept.problem;
  }
  const StoredMetadata huge = read_stored_metadata(R"({"a":1e999})");
  ASSERT_TRUE(huge.object);
  EXPECT_EQ(taconite::json::write_json(huge.object.get()), R"({"a":null})");
  EXPECT_NE(huge.problem.find("too large"), std::string::npos) << huge.problem;
}

TEST_F(GalleryTest, NonFiniteEmbeddingsAndNormsAreRefused) {
  GalleryStore store = make();
  std::vector<float> nan_value = axis(0), inf_value = axis(1);
  nan_value[3] = std::nanf("");
  inf_value[5] = -INFINITY;
  std::vector<NewTemplate> nan_one = {{nan_value, 0.0, "n.png", 0}};
  auto r = store.enroll("alice", "", nan_one);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("n.png: value 3 is not finite"), std::string::npos) << r.error().message;
  std::vector<NewTemplate> inf_one = {{inf_value, 0.0, "i.png", 0}};
  r = store.enroll("alice", "", inf_one);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("i.png: value 5 is not finite"), std::string::npos) << r.error().message;
  for (double norm : {std::nan(""), HUGE_VAL, -1.0}) {
    std::vector<NewTemplate> bad_norm = {{axis(0), norm, "q.png", 0}};
    r = store.enroll("alice", "", bad_norm);
    ASSERT_FALSE(r.ok()) << norm;
    EXPECT_NE(r.error().message.find("is not a finite positive number"), std::string::npos) << r.error().message;
  }
  EXPECT_EQ(store.templates(false).value().size(), 0u);
}

TEST_F(GalleryTest, DuplicateTemplatesAreSkippedAndUnitEmbeddingsKeepTheirBits) {
  GalleryStore store = make();
  std::vector<float> unit(kDim);
  for (int i = 0; i < kDim; ++i) unit[static_cast<std::size_t>(i)] = static_cast<float>(i + 1);
  double sum = 0.0;
  for (float v : unit) sum += static_cast<double>(v) * v;
  for (float& v : unit) v = static_cast<float>(v / std::sqrt(sum));
  std::vector<NewTemplate> one = {{unit, 5.0, "a.png", 0}};
  auto batch = store.begin_write();
  ASSERT_TRUE(batch.ok());
  auto first = batch.value().enroll("alice", "", one);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first.value().added, 1u);
  auto again = batch.value().enroll("alice", "", one);  // within the same batch
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.value().added, 0u);
  EXPECT_EQ(again.value().duplicates, 1u);
  ASSERT_TRUE(batch.value().commit().ok());
  const std::int64_t revision = store.revision().value();
  const auto stored = store.templates(true).value();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(std::memcmp(stored[0].embedding.data(), unit.data(), sizeof(float) * kDim), 0) << "stored as given";
  // A batch of duplicates only writes nothing: the revision stays (readers need not reload).
  auto only_duplicates = store.begin_write();
  ASSERT_TRUE(only_duplicates.value().enroll("alice", "", one).ok());
  ASSERT_TRUE(only_duplicates.value().commit().ok());
  EXPECT_EQ(store.revision().value(), revision);
  // Another identity may hold the same embedding.
  EXPECT_TRUE(store.enroll("twin", "", one).ok());
  EXPECT_EQ(store.templates(false).value().size(), 2u);
}

TEST_F(GalleryTest, WriteBatchIsAllOrNothing) {
  GalleryStore store = make();
  std::vector<NewTemplate> one = {{axis(0), 0.0, "x", 0}};
  {
    auto batch = store.begin_write();
    ASSERT_TRUE(batch.ok());
    ASSERT_TRUE(batch.value().enroll("alice", "", one).ok());
    ASSERT_FALSE(batch.value().enroll("bad\nname", "", one).ok());
  }  // not committed: rolled back
  EXPECT_TRUE(store.identities().value().empty());
  EXPECT_EQ(store.revision().value(), 1);
  auto batch = store.begin_write();
  ASSERT_TRUE(batch.value().enroll("alice", "", one).ok());
  ASSERT_TRUE(batch.value().enroll("bob", "", one).ok());
  ASSERT_TRUE(batch.value().commit().ok());
  EXPECT_EQ(store.identities().value().size(), 2u);
  EXPECT_EQ(store.revision().value(), 2);  // one write, one revision
  EXPECT_FALSE(batch.value().commit().ok()) << "a batch ends at its commit";
}

TEST_F(GalleryTest, AWriteFailingHalfWayThroughAnEnrolmentEndsTheBatchWithNothingKept) {
  GalleryStore store = make();
  {  // a trigger makes SQLite refuse the second template, after the identity and first template went in
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / "g.db").c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "CREATE TRIGGER poison BEFORE INSERT ON templates WHEN NEW.source = 'poison' "
                           "BEGIN SELECT RAISE(ABORT, 'poisoned'); END",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  std::vector<NewTemplate> two = {{axis(0), 0.0, "fine", 0}, {axis(1), 0.0, "poison", 0}};
  auto batch = store.begin_write();
  ASSERT_TRUE(batch.ok());
  ASSERT_TRUE(batch.value().enroll("bob", "", std::vector<NewTemplate>{{axis(2), 0.0, "x", 0}}).ok());
  EXPECT_FALSE(batch.value().enroll("alice", "", two).ok());
  EXPECT_FALSE(batch.value().commit().ok()) << "a batch that failed while writing cannot be committed";
  EXPECT_TRUE(store.identities().value().empty()) << "neither alice's half nor bob is kept";
  EXPECT_EQ(store.revision().value(), 1);
}

TEST_F(GalleryTest, SourcesAreMendedNotRefused) {
  GalleryStore store = make();
  std::vector<NewTemplate> one = {{axis(0), 0.0, "dir/caf\xE9\n.png", 0}};
  ASSERT_TRUE(store.enroll("alice", "", one).ok());
  EXPECT_EQ(store.templates(false).value().at(0).source, "dir/caf\xEF\xBF\xBD\xEF\xBF\xBD.png");
  std::vector<NewTemplate> long_one = {{axis(1), 0.0, std::string(5000, 's'), 0}};
  ASSERT_TRUE(store.enroll("alice", "", long_one).ok());
  EXPECT_EQ(store.templates(false).value().at(1).source.size(), kMaxSourceBytes);
}

TEST_F(GalleryTest, ModelMismatchIsRefusedWithBothFingerprints) {
  GalleryStore store = make();
  EXPECT_TRUE(store.check_model(model()).ok());
  auto other = store.check_model(model('b', "IR-other"));
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find((dir_ / "g.db").string()), std::string::npos);
  EXPECT_NE(other.error().message.find("another model"), std::string::npos);
  EXPECT_NE(other.error().message.find("IR-other bbbbbbbbbbbb"), std::string::npos) << other.error().message;
}

TEST_F(GalleryTest, FingerprintCoversManifestAndWeightsButNotReferenceTensors) {
  const std::string weights = "WWWWWWWW", ref = "RRRR";
  auto a = fingerprint_bundle(fake_bundle("a", "param model IR-x\n", weights + ref)).value();
  EXPECT_EQ(a.model, "IR-x");
  EXPECT_EQ(a.sha256.size(), 64u);
  EXPECT_EQ(fingerprint_bundle(fake_bundle("b", "param model IR-x\n", weights + "rrrr")).value().sha256, a.sha256);
  EXPECT_NE(fingerprint_bundle(fake_bundle("c", "param model IR-x\n", "WWWWWWWX" + ref)).value().sha256, a.sha256);
  EXPECT_NE(fingerprint_bundle(fake_bundle("d", "param model IR-y\n", weights + ref)).value().sha256, a.sha256);
  auto missing = fingerprint_bundle(dir_ / "nowhere");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("manifest.txt"), std::string::npos);
  const fs::path fifo = fake_bundle("f", "param model IR-x\n", weights + ref);
  fs::remove(fifo / "tensors.bin");
  ASSERT_EQ(::mkfifo((fifo / "tensors.bin").c_str(), 0600), 0);
  auto not_regular = fingerprint_bundle(fifo);  // refused, not opened (opening would wait for a writer)
  ASSERT_FALSE(not_regular.ok());
  EXPECT_NE(not_regular.error().message.find("tensors.bin: is a FIFO, not a regular file"), std::string::npos)
      << not_regular.error().message;
  auto truncated = fingerprint_bundle(fake_bundle("e", "param model IR-x\n", "WWWW"));
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.error().message.find("tensors.txt:1"), std::string::npos) << truncated.error().message;
}

TEST_F(GalleryTest, CorruptForeignWrongSchemaAndMissingFilesNameTheFile) {
  const fs::path garbage = dir_ / "garbage.db";
  std::ofstream(garbage) << std::string(4096, 'x');
  auto r = GalleryStore::open(garbage, GalleryStore::Access::ReadOnly);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(garbage.string()), std::string::npos);
  EXPECT_NE(r.error().message.find("corrupt or not a taconite gallery"), std::string::npos) << r.error().message;

  const fs::path foreign = dir_ / "foreign.db";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(foreign.c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "CREATE TABLE t(x)", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  r = GalleryStore::open(foreign, GalleryStore::Access::ReadOnly);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not a taconite gallery"), std::string::npos) << r.error().message;

  { make("v2.db"); }
  ASSERT_EQ(sqlite3_open((dir_ / "v2.db").c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "UPDATE gallery SET schema_version = 3", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  r = GalleryStore::open(dir_ / "v2.db", GalleryStore::Access::ReadOnly);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("schema version 3, this program reads versions 1..2"), std::string::npos)
      << r.error().message;

  r = GalleryStore::open(dir_ / "missing.db", GalleryStore::Access::ReadOnly);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("missing.db: no such gallery file"), std::string::npos);
}

TEST_F(GalleryTest, LockedGalleryFailsAWriteButNotAReader) {
  GalleryStore store = make();
  std::vector<NewTemplate> one = {{axis(0), 0.0, "a", 0}};
  ASSERT_TRUE(store.enroll("alice", "", one).ok());
  // Another writer holds the write lock (an enrollment in progress elsewhere).
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "g.db").c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE; DELETE FROM templates;", nullptr, nullptr, nullptr), SQLITE_OK);
  auto writer = GalleryStore::open(dir_ / "g.db", GalleryStore::Access::ReadWrite, 50);
  ASSERT_TRUE(writer.ok());
  auto blocked = writer.value().enroll("bob", "", one);
  ASSERT_FALSE(blocked.ok());
  EXPECT_NE(blocked.error().message.find("write lock"), std::string::npos) << blocked.error().message;
  // WAL: a reader is not blocked and sees the last committed state, not the uncommitted delete.
  auto reader = GalleryStore::open(dir_ / "g.db", GalleryStore::Access::ReadOnly, 0);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  EXPECT_EQ(reader.value().templates(false).value().size(), 1u);
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  EXPECT_TRUE(writer.value().enroll("bob", "", one).ok());
}

TEST_F(GalleryTest, ExactSearchRanksIdentitiesByTheirBestTemplate) {
  GalleryStore store = make();
  std::vector<NewTemplate> alice = {{axis(0), 0.0, "a0", 0}, {axis(1), 0.0, "a1", 0}};
  std::vector<NewTemplate> bob = {{axis(2), 0.0, "b", 0}};
  ASSERT_TRUE(store.enroll("alice", "", alice).ok());
  ASSERT_TRUE(store.enroll("bob", "", bob).ok());
  auto index = GalleryIndex::load(store, IndexOptions{});
  ASSERT_TRUE(index.ok());
  EXPECT_FALSE(index.value().approximate());
  std::vector<float> query = axis(1);
  query[2] = 0.5f;  // closest to alice's second template, then bob
  auto matches = index.value().search(query, 5);
  ASSERT_EQ(matches.size(), 2u);  // two identities, not three templates
  EXPECT_EQ(matches[0].name, "alice");
  EXPECT_NEAR(matches[0].similarity, 1.0 / std::sqrt(1.25), 1e-5);
  EXPECT_EQ(matches[1].name, "bob");
  EXPECT_EQ(index.value().search(query, 1).size(), 1u);
  EXPECT_TRUE(index.value().search(std::vector<float>(kDim + 1, 1.0f), 1).empty());  // wrong size
}

TEST_F(GalleryTest, EmptyGallerySearchFindsNothing) {
  GalleryStore store = make();
  auto index = GalleryIndex::load(store, IndexOptions{});
  ASSERT_TRUE(index.ok());
  EXPECT_TRUE(index.value().search(axis(0), 3).empty());
}

TEST_F(GalleryTest, HnswIndexIsPersistedReusedAndRebuiltWhenStale) {
  TACONITE_REQUIRE_HNSW();
  GalleryStore store = make();
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  std::vector<std::vector<float>> vectors;
  std::vector<NewTemplate> batch;
  for (int i = 0; i < 300; ++i) {
    std::vector<float> v(kDim);
    for (float& x : v) x = normal(rng);
    vectors.push_back(v);
    batch.push_back({v, 0.0, "r", 0});
  }
  for (int i = 0; i < 300; i += 100)
    ASSERT_TRUE(
        store.enroll("p" + std::to_string(i / 100), "", std::span(batch).subspan(static_cast<std::size_t>(i), 100))
            .ok());
  IndexOptions options;
  options.approximate_above = 100;
  options.hnsw_ef_search = 300;
  std::string note;
  auto built = GalleryIndex::load(store, options, &note);
  ASSERT_TRUE(built.ok());
  EXPECT_TRUE(built.value().approximate());
  EXPECT_EQ(built.value().ef_search(), 300);
  EXPECT_NE(note.find("built the HNSW index of 300 templates, saved"), std::string::npos) << note;
  EXPECT_TRUE(fs::exists(dir_ / "g.db.hnsw"));
  options.hnsw_ef_search = 50;  // a search-time option: the saved index is reused with the new beam
  auto loaded = GalleryIndex::load(store, options, &note);
  EXPECT_NE(note.find("loaded the HNSW index"), std::string::npos) << note;
  EXPECT_EQ(loaded.value().ef_search(), 50) << "the beam saved in the index file must not win";
  loaded.value().set_ef_search(0);
  EXPECT_EQ(loaded.value().ef_search(), 1) << "clamped to 1..kMaxEfSearch";
  loaded.value().set_ef_search(kMaxEfSearch + 1);
  EXPECT_EQ(loaded.value().ef_search(), kMaxEfSearch);
  loaded.value().set_ef_search(50);
  // Same answers as the index it was saved from: each vector finds its own identity.
  for (int i = 0; i < 300; i += 37)
    EXPECT_EQ(loaded.value().search(vectors[static_cast<std::size_t>(i)], 1).at(0).name, "p" + std::to_string(i / 100));
  std::vector<NewTemplate> more = {{axis(3), 0.0, "new", 0}};
  ASSERT_TRUE(store.enroll("newcomer", "", more).ok());
  auto rebuilt = GalleryIndex::load(store, options, &note);
  EXPECT_NE(note.find("built the HNSW index of 301 templates"), std::string::npos) << note;
  EXPECT_EQ(rebuilt.value().search(axis(3), 1).at(0).name, "newcomer");
  // A garbage index file is rebuilt, not trusted.
  std::ofstream(dir_ / "g.db.hnsw", std::ios::trunc) << "not an index";
  auto recovered = GalleryIndex::load(store, options, &note);
  ASSERT_TRUE(recovered.ok());
  EXPECT_NE(note.find("not used; built the HNSW index of 301"), std::string::npos) << note;
  EXPECT_EQ(recovered.value().search(axis(3), 1).at(0).name, "newcomer");
}

// Random gallery vectors for the index tests: `identities` x `per_identity` templates.
std::vector<std::vector<float>> enroll_random(GalleryStore& store, int identities, int per_identity,
                                              unsigned seed, const std::string& prefix = "p", int dim = kDim) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<std::vector<float>> vectors;
  for (int i = 0; i < identities; ++i) {
    std::vector<NewTemplate> batch;
    for (int t = 0; t < per_identity; ++t) {
      std::vector<float> v(static_cast<std::size_t>(dim));
      for (float& x : v) x = normal(rng);
      vectors.push_back(v);
      batch.push_back({v, 0.0, "r", 0});
    }
    EXPECT_TRUE(store.enroll(prefix + std::to_string(i), "", batch).ok());
  }
  return vectors;
}

IndexOptions hnsw_options() {
  IndexOptions options;
  options.approximate_above = 100;
  options.hnsw_ef_search = 300;
  return options;
}

// Each template finds its own identity with a finite similarity of ~1.
void expect_right_answers(const GalleryIndex& index, const std::vector<std::vector<float>>& vectors, int per_identity,
                          const std::string& prefix = "p") {
  for (std::size_t i = 0; i < vectors.size(); i += 7) {
    const auto match = index.search(vectors[i], 1);
    ASSERT_EQ(match.size(), 1u);
    EXPECT_EQ(match[0].name, prefix + std::to_string(i / std::size_t(per_identity))) << "template " << i;
    EXPECT_NEAR(match[0].similarity, 1.0f, 1e-4f) << "template " << i;
  }
}

// Issue 20 item 6: random bytes over the second half of a real saved index. With 256-d templates
// that half is all vector data: FAISS reads it without complaint (the old code answered random
// identities at -nan).
TEST_F(GalleryTest, HnswIndexWithItsSecondHalfOverwrittenIsRebuilt) {
  TACONITE_REQUIRE_HNSW();
  auto created = GalleryStore::create(dir_ / "g.db", model(), 256);
  ASSERT_TRUE(created.ok());
  GalleryStore& store = created.value();
  const auto vectors = enroll_random(store, 30, 10, 7, "p", 256);
  std::string note;
  ASSERT_TRUE(GalleryIndex::load(store, hnsw_options(), &note).ok());
  ASSERT_NE(note.find("saved to"), std::string::npos) << note;
  const fs::path saved = dir_ / "g.db.hnsw";
  const auto size = fs::file_size(saved);
  {
    std::fstream f(saved, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    std::mt19937 rng(1);
    for (auto i = size / 2; i < size; ++i) f.put(static_cast<char>(rng()));
  }
  ASSERT_EQ(fs::file_size(saved), size);
  auto reloaded = GalleryIndex::load(store, hnsw_options(), &note);
  ASSERT_TRUE(reloaded.ok()) << reloaded.error().message;
  EXPECT_NE(note.find("damaged: its checksum does not match"), std::string::npos) << note;
  EXPECT_TRUE(reloaded.value().approximate());
  expect_right_answers(reloaded.value(), vectors, 10);
  // It was saved again, whole: the next load uses it.
  ASSERT_TRUE(GalleryIndex::load(store, hnsw_options(), &note).ok());
  EXPECT_NE(note.find("loaded the HNSW index"), std::string::npos) << note;
}

// The index file of another gallery at the same revision and size is not this gallery's index.
TEST_F(GalleryTest, HnswIndexOfAnotherGalleryWithTheSameRevisionIsNotUsed) {
  TACONITE_REQUIRE_HNSW();
  GalleryStore one = make("one.db");
  GalleryStore two = make("two.db");
  enroll_random(one, 30, 10, 1, "q");
  const auto vectors = enroll_random(two, 30, 10, 2);
  ASSERT_EQ(one.revision().value(), two.revision().value());
  ASSERT_TRUE(GalleryIndex::load(one, hnsw_options()).ok());
  fs::copy_file(dir_ / "one.db.hnsw", dir_ / "two.db.hnsw");
  std::string note;
  auto index = GalleryIndex::load(two, hnsw_options(), &note);
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(note.find("loaded"), std::string::npos) << note;
  expect_right_answers(index.value(), vectors, 10);
}

// Issue 20 item 17: two loads saving the same gallery's index at once each write their own
// temporary file; the saved index is whole and nothing is left behind.
TEST_F(GalleryTest, ConcurrentSavesOfOneGalleryLeaveOneWholeIndex) {
  TACONITE_REQUIRE_HNSW();
  make();
  {
    auto store = GalleryStore::open(dir_ / "g.db", GalleryStore::Access::ReadWrite);
    enroll_random(store.value(), 30, 10, 3);
  }
  std::vector<std::string> errors(2);
  std::vector<std::thread> loaders;
  for (std::size_t i = 0; i < 2; ++i)
    loaders.emplace_back([&, i] {
      auto store = GalleryStore::open(dir_ / "g.db", GalleryStore::Access::ReadOnly);
      std::string note;
      auto index = store ? GalleryIndex::load(store.value(), hnsw_options(), &note)
                         : taconite::Result<GalleryIndex>(store.error());
      if (!index) errors[i] = index.error().message;
      else if (note.find("saved to") == std::string::npos && note.find("loaded") == std::string::npos) errors[i] = note;
    });
  for (auto& t : loaders) t.join();
  EXPECT_EQ(errors, std::vector<std::string>(2));
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir_)) files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) EXPECT_TRUE(f == "g.db" || f == "g.db.hnsw" || f.starts_with("g.db-")) << f;
  auto store = GalleryStore::open(dir_ / "g.db", GalleryStore::Access::ReadOnly);
  std::string note;
  ASSERT_TRUE(GalleryIndex::load(store.value(), hnsw_options(), &note).ok());
  EXPECT_NE(note.find("loaded the HNSW index"), std::string::npos) << note;
}

// Issue 20 item 17: a deferred load searches exactly at once; the HNSW index is built by a later load.
TEST_F(GalleryTest, DeferredLoadSearchesExactlyUntilTheHnswIndexIsBuilt) {
  TACONITE_REQUIRE_HNSW();
  GalleryStore store = make();
  const auto vectors = enroll_random(store, 30, 10, 4);
  IndexOptions deferred = hnsw_options();
  deferred.defer_approximate = true;
  std::string note;
  auto quick = GalleryIndex::load(store, deferred, &note);
  ASSERT_TRUE(quick.ok());
  EXPECT_FALSE(quick.value().approximate());
  EXPECT_TRUE(quick.value().approximate_pending());
  EXPECT_FALSE(fs::exists(dir_ / "g.db.hnsw"));
  expect_right_answers(quick.value(), vectors, 10);
  std::atomic<bool> cancel{true};
  IndexOptions cancelled = hnsw_options();
  cancelled.cancel = &cancel;
  auto stopped = GalleryIndex::load(store, cancelled);
  ASSERT_FALSE(stopped.ok());
  EXPECT_EQ(stopped.error().message, "cancelled");
  auto full = GalleryIndex::load(store, hnsw_options(), &note);
  ASSERT_TRUE(full.ok());
  EXPECT_TRUE(full.value().approximate());
  auto reused = GalleryIndex::load(store, deferred, &note);
  EXPECT_TRUE(reused.value().approximate()) << "a saved index is used at once, also when deferring";
  EXPECT_FALSE(reused.value().approximate_pending());
}

// Issue 20 item 4: NaN or Inf never reaches the search.
TEST_F(GalleryTest, NonFiniteTemplatesAreLeftOutAndNonFiniteQueriesRefused) {
  GalleryStore store = make();
  std::vector<NewTemplate> alice = {{axis(0), 0.0, "a", 0}, {axis(1), 0.0, "a2", 0}};
  std::vector<NewTemplate> bob = {{axis(2), 0.0, "b", 0}};
  ASSERT_TRUE(store.enroll("alice", "", alice).ok());
  ASSERT_TRUE(store.enroll("bob", "", bob).ok());
  // A template damaged in the file (written past the store's checks).
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "g.db").c_str(), &db), SQLITE_OK);
  std::vector<float> nan(kDim, std::nanf(""));
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "UPDATE templates SET embedding = ? WHERE id = 2", -1, &st, nullptr), SQLITE_OK);
  sqlite3_bind_blob(st, 1, nan.data(), int(nan.size() * sizeof(float)), SQLITE_STATIC);
  ASSERT_EQ(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  sqlite3_close(db);
  for (std::size_t approximate_above : {IndexOptions{}.approximate_above, std::size_t{0}}) {
    IndexOptions options;
    options.approximate_above = approximate_above;
    std::string note;
    auto index = GalleryIndex::load(store, options, &note);
    ASSERT_TRUE(index.ok()) << index.error().message;
    EXPECT_EQ(index.value().skipped_templates(), 1u);
    EXPECT_EQ(index.value().templates(), 2u);
    EXPECT_NE(note.find("left out 1 templates holding NaN or Inf"), std::string::npos) << note;
    auto matches = index.value().search(axis(1), 2);  // the damaged template was alice's axis(1)
    ASSERT_EQ(matches.size(), 2u);
    for (const auto& m : matches) EXPECT_TRUE(std::isfinite(m.similarity));
    for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
      std::vector<float> query = axis(0);
      query[3] = bad;
      EXPECT_FALSE(finite_query(query));
      EXPECT_TRUE(index.value().search(query, 3).empty());
    }
  }
}

// The 4096-candidate cap: an identity with more templates than that must not hide the others.
TEST_F(GalleryTest, AnIdentityWithThousandsOfTemplatesDoesNotHideTheOthers) {
  constexpr int kCrowd = 5000;
  std::mt19937 rng(8);
  std::normal_distribution<float> normal;
  std::vector<float> vectors;
  std::vector<std::int64_t> ids;
  const auto add = [&](std::vector<float> v, std::int64_t id) {
    const double norm = std::sqrt(std::inner_product(v.begin(), v.end(), v.begin(), 0.0));
    for (float& x : v) x = float(x / norm);
    vectors.insert(vectors.end(), v.begin(), v.end());
    ids.push_back(id);
  };
  for (int i = 0; i < kCrowd; ++i) {  // identity 0: thousands of templates, all closer to the query
    std::vector<float> v(kDim);
    for (float& x : v) x = normal(rng);
    v[0] = std::fabs(v[0]);
    add(v, 0);
  }
  for (int other = 1; other <= 3; ++other) {  // identities 1..3: one template each, facing away
    std::vector<float> v = axis(0, 0.0f);
    v[0] = -1.0f;
    v[std::size_t(other)] = 0.5f / float(other);
    add(v, other);
  }
  auto exact = GalleryIndex::build(kDim, vectors, ids, IndexOptions{});
  ASSERT_TRUE(exact.ok());
  const auto matches = exact.value().search(axis(0), 4);
  ASSERT_EQ(matches.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(matches[i].identity_id, std::int64_t(i)) << i;
  // HNSW: its first 4096 candidates hold ~80 of 100 identities here (random vectors), so the
  // query widens until it has all 100.
  vectors.resize(std::size_t(kCrowd) * kDim);
  ids.resize(kCrowd);
  for (int other = 1; other < kMaxTopK; ++other) {
    std::vector<float> v(kDim);
    for (float& x : v) x = normal(rng);
    add(v, other);
  }
  IndexOptions approximate;
  approximate.approximate_above = 0;
  auto hnsw = GalleryIndex::build(kDim, vectors, ids, approximate);
  ASSERT_TRUE(hnsw.ok());
  std::vector<float> query(kDim);
  for (float& x : query) x = normal(rng);
  EXPECT_EQ(hnsw.value().search(query, kMaxTopK).size(), std::size_t(kMaxTopK));
}

// A gallery above approximate-above: HNSW with FAISS; without it (-Dfaiss=disabled) searched
// exactly, as the index and its load note say, and no <gallery>.hnsw is written.
TEST_F(GalleryTest, AGalleryAboveApproximateAboveIsSearchedByHnswOrExactlyWithoutFaiss) {
  GalleryStore store = make();
  std::vector<NewTemplate> alice = {{axis(0), 0.0, "a", 0}, {axis(1), 0.0, "a2", 0}};
  std::vector<NewTemplate> bob = {{axis(2), 0.0, "b", 0}};
  ASSERT_TRUE(store.enroll("alice", "", alice).ok());
  ASSERT_TRUE(store.enroll("bob", "", bob).ok());
  IndexOptions options;
  options.approximate_above = 1;
  std::string note;
  auto index = GalleryIndex::load(store, options, &note);
  ASSERT_TRUE(index.ok()) << index.error().message;
  const bool hnsw = approximate_search_available();
  EXPECT_EQ(index.value().approximate(), hnsw);
  EXPECT_EQ(index.value().approximate_unsupported(), !hnsw);
  EXPECT_FALSE(index.value().approximate_pending());
  EXPECT_EQ(fs::exists(dir_ / "g.db.hnsw"), hnsw);
  EXPECT_EQ(note.find("built without FAISS") != std::string::npos, !hnsw) << note;
  const auto matches = index.value().search(axis(2), 2);
  ASSERT_EQ(matches.size(), 2u);
  EXPECT_EQ(matches[0].name, "bob");
  EXPECT_FLOAT_EQ(matches[0].similarity, 1.0f);
  EXPECT_EQ(matches[1].name, "alice");
  // At or under approximate-above, exact in every build, with nothing to report.
  options.approximate_above = 3;
  auto exact = GalleryIndex::load(store, options, &note);
  ASSERT_TRUE(exact.ok());
  EXPECT_FALSE(exact.value().approximate());
  EXPECT_FALSE(exact.value().approximate_unsupported());
  EXPECT_EQ(note.find("FAISS"), std::string::npos) << note;
}

// Issue 24: unknown faces kept for review, in the gallery's table unknown_faces.
NewUnknownFace unknown_face(int axis_index, const char* stream = "door") {
  NewUnknownFace f;
  f.embedding = axis(axis_index, 0.0f);
  f.embedding[static_cast<std::size_t>(axis_index)] = 4.0f;  // raw: stored unit length, norm 4
  f.jpeg = {0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 0xFF, 0xD9};
  f.stream = stream;
  f.track_id = 7;
  f.first_seen_ms = 1700000000000;
  f.last_seen_ms = 1700000004000;
  f.quality = 0.8;
  f.nearest_identity = 3;
  f.nearest_name = "alice";
  f.nearest_similarity = 0.25;
  return f;
}

TEST_F(GalleryTest, UnknownFacesAreKeptAndReadBackWithoutANewRevision) {
  GalleryStore store = make();
  const std::int64_t revision = store.revision().value();
  auto first = store.add_unknown_face(unknown_face(2), {});
  ASSERT_TRUE(first.ok()) << first.error().message;
  NewUnknownFace no_picture = unknown_face(5, "yard");
  no_picture.jpeg.clear();
  no_picture.nearest_identity = 0;
  no_picture.nearest_name = "";
  no_picture.norm = 9.5;
  auto second = store.add_unknown_face(no_picture, {});
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_GT(second.value(), first.value());
  EXPECT_EQ(store.revision().value(), revision);  // pipelines have nothing to reload

  auto faces = store.unknown_faces(true, true).value();
  ASSERT_EQ(faces.size(), 2u);
  const UnknownFaceRow& a = faces[0];
  EXPECT_EQ(a.id, first.value());
  EXPECT_EQ(a.embedding, axis(2));  // unit length
  EXPECT_DOUBLE_EQ(a.norm, 4.0);
  EXPECT_EQ(a.jpeg, unknown_face(2).jpeg);
  EXPECT_EQ(a.stream, "door");
  EXPECT_EQ(a.track_id, 7);
  EXPECT_EQ(a.first_seen_ms, 1700000000000);
  EXPECT_EQ(a.last_seen_ms, 1700000004000);
  EXPECT_DOUBLE_EQ(a.quality, 0.8);
  EXPECT_EQ(a.nearest_identity, 3);
  EXPECT_EQ(a.nearest_name, "alice");
  EXPECT_DOUBLE_EQ(a.nearest_similarity, 0.25);
  EXPECT_LE(std::abs(a.created_unix - static_cast<std::int64_t>(std::time(nullptr))), 60);
  EXPECT_TRUE(faces[1].jpeg.empty());
  EXPECT_DOUBLE_EQ(faces[1].norm, 9.5);
  EXPECT_EQ(faces[1].stream, "yard");

  auto light = store.unknown_faces(false, false).value();
  ASSERT_EQ(light.size(), 2u);
  EXPECT_TRUE(light[0].embedding.empty());
  EXPECT_TRUE(light[0].jpeg.empty());
  EXPECT_EQ(light[0].stream, "door");
  // Another process sees them (committed).
  auto reader = GalleryStore::open(dir_ / "g.db", GalleryStore::Access::ReadOnly);
  EXPECT_EQ(reader.value().unknown_faces(false, false).value().size(), 2u);
}

// A stored embedding of the wrong size (written past the store's checks) is named on reading, with
// the gallery, the row and the sizes; the other readers' calls are not affected.
TEST_F(GalleryTest, AStoredEmbeddingOfTheWrongSizeIsNamedOnReading) {
  GalleryStore store = make();
  std::vector<NewTemplate> alice = {{axis(0), 0.0, "a", 0}};
  ASSERT_TRUE(store.enroll("alice", "", alice).ok());
  const std::int64_t face = store.add_unknown_face(unknown_face(2), {}).value();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "g.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE templates SET embedding = x'00';"
                         " UPDATE unknown_faces SET embedding = x'0000'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const std::string expected = std::to_string(kDim * sizeof(float));
  auto templates = store.templates(true);
  ASSERT_FALSE(templates.ok());
  EXPECT_EQ(templates.error().message, (dir_ / "g.db").string() + ": template 1 holds 1 bytes, expected " + expected +
                                           " (corrupt gallery)");
  auto faces = store.unknown_faces(true, false);
  ASSERT_FALSE(faces.ok());
  EXPECT_EQ(faces.error().message, (dir_ / "g.db").string() + ": the embedding of unknown face " +
                                       std::to_string(face) + " holds 2 bytes, expected " + expected +
                                       " (corrupt gallery)");
  // Read without embeddings, both are listed.
  EXPECT_EQ(store.templates(false).value().size(), 1u);
  EXPECT_EQ(store.unknown_faces(false, false).value().size(), 1u);
}

TEST_F(GalleryTest, UnknownFaceRetentionByCountKeepsTheNewestAndIdsAreNeverReused) {
  GalleryStore store = make();
  UnknownRetention three;
  three.max_count = 3;
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(store.add_unknown_face(unknown_face(i), three).value());
  auto faces = store.unknown_faces(false, false).value();
  ASSERT_EQ(faces.size(), 3u);
  EXPECT_EQ(faces[0].id, ids[2]);
  EXPECT_EQ(faces[2].id, ids[4]);
  const std::int64_t all[] = {ids[2], ids[3], ids[4], 999999};
  EXPECT_EQ(store.remove_unknown_faces(all).value(), 3u);  // the unknown id is ignored
  EXPECT_TRUE(store.unknown_faces(false, false).value().empty());
  EXPECT_GT(store.add_unknown_face(unknown_face(0), three).value(), ids[4]);
}

TEST_F(GalleryTest, UnknownFaceRetentionByAgeDeletesFacesStoredTooLongAgo) {
  GalleryStore store = make();
  const std::int64_t old_id = store.add_unknown_face(unknown_face(0), {}).value();
  const std::int64_t recent_id = store.add_unknown_face(unknown_face(1), {}).value();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "g.db").c_str(), &db), SQLITE_OK);
  const std::string age = "UPDATE unknown_faces SET created_unix = created_unix - 1000 WHERE id = " +
                          std::to_string(old_id);
  ASSERT_EQ(sqlite3_exec(db, age.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  UnknownRetention ten_minutes;
  ten_minutes.max_age_s = 600;
  const std::int64_t newest = store.add_unknown_face(unknown_face(2), ten_minutes).value();
  std::vector<std::int64_t> kept;
  const auto faces = store.unknown_faces(false, false).value();
  for (const UnknownFaceRow& f : faces) kept.push_back(f.id);
  EXPECT_EQ(kept, (std::vector<std::int64_t>{recent_id, newest}));
}

// A version 2 gallery made before the table existed: readers see no unknown faces, the first
// read-write open adds the table without a new schema version or revision.
TEST_F(GalleryTest, AnOlderGalleryWithoutTheUnknownFacesTableGetsItOnTheFirstReadWriteOpen) {
  { make(); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "g.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE unknown_faces", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto reader = GalleryStore::open(dir_ / "g.db", GalleryStore::Access::ReadOnly);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  auto none = reader.value().unknown_faces(true, true);
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_TRUE(none.value().empty());
  const std::int64_t revision = reader.value().revision().value();
  // A read-only store writes nothing.
  auto refused = reader.value().add_unknown_face(unknown_face(0), {});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find((dir_ / "g.db").string()), std::string::npos) << refused.error().message;

  auto writer = GalleryStore::open(dir_ / "g.db", GalleryStore::Access::ReadWrite);
  ASSERT_TRUE(writer.ok()) << writer.error().message;
  EXPECT_TRUE(writer.value().add_unknown_face(unknown_face(0), {}).ok());
  EXPECT_EQ(reader.value().unknown_faces(false, false).value().size(), 1u);
  EXPECT_EQ(writer.value().revision().value(), revision);
  EXPECT_EQ(writer.value().info().value().schema_version, 2);
}

TEST_F(GalleryTest, HostileUnknownFacesAreRefusedNamingTheFieldAndTheGallery) {
  GalleryStore store = make();
  const std::string gallery = (dir_ / "g.db").string();
  struct Case {
    const char* expected;
    void (*spoil)(NewUnknownFace&);
  };
  const Case cases[] = {
      {"value 3 is not finite", [](NewUnknownFace& f) { f.embedding[3] = std::numeric_limits<float>::quiet_NaN(); }},
      {"has 15 values, the gallery holds 16", [](NewUnknownFace& f) { f.embedding.pop_back(); }},
      {"embedding is all zeros", [](NewUnknownFace& f) { f.embedding.assign(kDim, 0.0f); }},
      {"norm", [](NewUnknownFace& f) { f.norm = -1.0; }},
      {"jpeg of 262145 bytes, at most 262144",
       [](NewUnknownFace& f) { f.jpeg.resize(kMaxUnknownJpegBytes + 1, 0); }},
      {"jpeg does not start like a JPEG", [](NewUnknownFace& f) { f.jpeg = {'G', 'I', 'F', '8'}; }},
      {"stream name of 0 bytes", [](NewUnknownFace& f) { f.stream.clear(); }},
      {"stream name holds a control character", [](NewUnknownFace& f) { f.stream = "door\nEVIL"; }},
      {"stream name is not valid UTF-8", [](NewUnknownFace& f) { f.stream = "door\xff"; }},
      {"stream name of 257 bytes", [](NewUnknownFace& f) { f.stream.assign(257, 'x'); }},
      {"track_id -5", [](NewUnknownFace& f) { f.track_id = -5; }},
      {"first_seen_ms 1700000004001 is after last_seen_ms 1700000004000",
       [](NewUnknownFace& f) { f.first_seen_ms = f.last_seen_ms + 1; }},
      {"not Unix milliseconds", [](NewUnknownFace& f) { f.first_seen_ms = -1; }},
      {"not Unix milliseconds", [](NewUnknownFace& f) { f.last_seen_ms = std::numeric_limits<std::int64_t>::max(); }},
      {"quality nan", [](NewUnknownFace& f) { f.quality = std::nan(""); }},
      {"quality -1", [](NewUnknownFace& f) { f.quality = -1.0; }},
      {"nearest_identity -1", [](NewUnknownFace& f) { f.nearest_identity = -1; }},
      {"nearest_similarity nan", [](NewUnknownFace& f) { f.nearest_similarity = std::nan(""); }},
      {"nearest_similarity 2", [](NewUnknownFace& f) { f.nearest_similarity = 2.0; }},
  };
  for (const Case& c : cases) {
    NewUnknownFace face = unknown_face(1);
    c.spoil(face);
    auto r = store.add_unknown_face(face, {});
    ASSERT_FALSE(r.ok()) << c.expected;
    EXPECT_EQ(r.error().kind, taconite::ErrorKind::Input) << r.error().message;
    EXPECT_NE(r.error().message.find(c.expected), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(gallery + ": unknown face"), std::string::npos) << r.error().message;
  }
  UnknownRetention none;
  none.max_count = 0;
  auto r = store.add_unknown_face(unknown_face(1), none);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("max_count 0 out of range 1..100000"), std::string::npos) << r.error().message;
  UnknownRetention too_many;
  too_many.max_count = kMaxUnknownFaces + 1;
  EXPECT_FALSE(store.add_unknown_face(unknown_face(1), too_many).ok());
  UnknownRetention no_age;
  no_age.max_age_s = 0;
  r = store.add_unknown_face(unknown_face(1), no_age);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("max_age_s 0"), std::string::npos) << r.error().message;
  // Rounding past +-1 is accepted and clamped; a nearest name is mended like a source.
  NewUnknownFace rounded = unknown_face(1);
  rounded.nearest_similarity = 1.0000001;
  rounded.nearest_name = "al\nice";
  ASSERT_TRUE(store.add_unknown_face(rounded, {}).ok());
  const auto faces = store.unknown_faces(false, false).value();
  ASSERT_EQ(faces.size(), 1u);  // nothing refused was stored
  EXPECT_EQ(faces[0].nearest_similarity, 1.0);
  EXPECT_EQ(faces[0].nearest_name, "al\xEF\xBF\xBDice");
}

// `taconite-gallery name`: the enrolment and the removal of the cluster's faces are one
// transaction; the enrolment makes a revision, a removal alone does not.
TEST_F(GalleryTest, RemovingUnknownFacesInABatchCommitsWithTheEnrolmentOrNotAtAll) {
  GalleryStore store = make();
  const std::int64_t a = store.add_unknown_face(unknown_face(0), {}).value();
  const std::int64_t b = store.add_unknown_face(unknown_face(1), {}).value();
  const std::int64_t c = store.add_unknown_face(unknown_face(2), {}).value();
  const std::int64_t revision = store.revision().value();
  {
    auto batch = store.begin_write();
    const std::int64_t ids[] = {a};
    ASSERT_EQ(batch.value().remove_unknown_faces(ids).value(), 1u);
  }  // not committed: kept
  EXPECT_EQ(store.unknown_faces(false, false).value().size(), 3u);
  {
    auto batch = store.begin_write();
    std::vector<NewTemplate> t = {{axis(0), 0.0, "review", 0}};
    ASSERT_TRUE(batch.value().enroll("carol", R"({"from":"review"})", t).ok());
    const std::int64_t ids[] = {a, b};
    ASSERT_EQ(batch.value().remove_unknown_faces(ids).value(), 2u);
    ASSERT_TRUE(batch.value().commit().ok());
  }
  EXPECT_EQ(store.revision().value(), revision + 1);
  auto left = store.unknown_faces(false, false).value();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].id, c);
  const std::int64_t forget[] = {c};
  EXPECT_EQ(store.remove_unknown_faces(forget).value(), 1u);  // `forget`
  EXPECT_TRUE(store.unknown_faces(false, false).value().empty());
  EXPECT_EQ(store.revision().value(), revision + 1);
}

}  // namespace
