// The gallery library on real SQLite files and real FAISS indexes: store, model fingerprint,
// schema/corruption/lock errors, WAL readers during a write, exact and HNSW search.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <thread>

#include "gallery_index.hpp"
#include "gallery_store.hpp"
#include "model_fingerprint.hpp"

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
  sqlite3_exec(db, "UPDATE gallery SET schema_version = 2", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  r = GalleryStore::open(dir_ / "v2.db", GalleryStore::Access::ReadOnly);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("schema version 2, this program reads version 1"), std::string::npos);

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

}  // namespace
