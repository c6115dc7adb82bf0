// Renaming an identity, removing one template (GalleryStore::rename, remove_template) and the
// template thumbnails the web page keeps (template_thumbnails.hpp), on real SQLite files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <vector>

#include "gallery_store.hpp"
#include "template_thumbnails.hpp"

namespace {

using namespace taconite::gallery;
namespace fs = std::filesystem;

constexpr int kDim = 8;

class IdentityEditsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("taconite-identity-edits-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto created = GalleryStore::create(dir_ / "g.db", {std::string(64, 'a'), "IR-test"}, kDim);
    ASSERT_TRUE(created.ok()) << created.error().message;
    store_.emplace(std::move(created.value()));
    std::vector<NewTemplate> two = {{axis(0), 0.0, "a.png", 0}, {axis(1), 0.0, "b.png", 0}};
    ASSERT_TRUE(store_->enroll("alice", "", two).ok());
    std::vector<NewTemplate> one = {{axis(2), 0.0, "c.png", 0}};
    ASSERT_TRUE(store_->enroll("bob", "", one).ok());
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }
  static std::vector<float> axis(int i) {
    std::vector<float> v(kDim, 0.0f);
    v[static_cast<std::size_t>(i)] = 1.0f;
    return v;
  }
  std::string location() const { return (dir_ / "g.db").string(); }
  fs::path dir_;
  std::optional<GalleryStore> store_;
};

TEST_F(IdentityEditsTest, RenameKeepsIdsAndTemplatesAndBumpsTheRevision) {
  const auto before = store_->templates(false).value();
  const std::int64_t revision = store_->revision().value();
  auto renamed = store_->rename("alice", "Alice Smith");
  ASSERT_TRUE(renamed.ok()) << renamed.error().message;
  EXPECT_TRUE(renamed.value());
  EXPECT_EQ(store_->revision().value(), revision + 1);  // running pipelines reload the new name
  const auto ids = store_->identities().value();
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0].name, "Alice Smith");
  EXPECT_EQ(ids[0].templates, 2);
  const auto after = store_->templates(false).value();
  ASSERT_EQ(after.size(), before.size());
  for (std::size_t i = 0; i < after.size(); ++i) EXPECT_EQ(after[i].id, before[i].id);
}

TEST_F(IdentityEditsTest, RenameRefusesATakenOrBadNameAndChangesNothing) {
  const std::int64_t revision = store_->revision().value();
  auto taken = store_->rename("alice", "bob");
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.error().kind, taconite::ErrorKind::Input);
  EXPECT_NE(taken.error().message.find("exists already"), std::string::npos) << taken.error().message;
  EXPECT_NE(taken.error().message.find("g.db"), std::string::npos) << taken.error().message;
  for (const char* bad : {"", "two\nlines", "\xff\xfe"}) EXPECT_FALSE(store_->rename("alice", bad).ok()) << bad;
  EXPECT_FALSE(store_->rename("alice", std::string(kMaxNameBytes + 1, 'x')).ok());
  auto missing = store_->rename("carol", "Carol");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing.value());
  EXPECT_EQ(store_->revision().value(), revision);
  EXPECT_EQ(store_->identities().value()[0].name, "alice");
}

TEST_F(IdentityEditsTest, RemoveTemplateKeepsTheIdentity) {
  const auto templates = store_->templates(false).value();
  const std::int64_t revision = store_->revision().value();
  auto removed = store_->remove_template(templates[0].id);
  ASSERT_TRUE(removed.ok()) << removed.error().message;
  EXPECT_TRUE(removed.value());
  EXPECT_EQ(store_->revision().value(), revision + 1);
  EXPECT_EQ(store_->templates(false).value().size(), templates.size() - 1);
  EXPECT_EQ(store_->identities().value()[0].templates, 1);
  auto again = store_->remove_template(templates[0].id);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again.value());
  EXPECT_EQ(store_->revision().value(), revision + 1);  // nothing removed: no new revision
}

TEST_F(IdentityEditsTest, ThumbnailsAreKeptBoundedAndRemovedWithTheirTemplates) {
  const auto templates = store_->templates(false).value();
  {
    // A read-only open of a gallery without the table reads none and creates nothing.
    auto reader = TemplateThumbnails::open(location(), false);
    ASSERT_TRUE(reader.ok()) << reader.error().message;
    const std::int64_t ids[] = {templates[0].id};
    EXPECT_TRUE(reader.value().get(ids).value()[0].empty());
    EXPECT_FALSE(reader.value().has(ids).value()[0]);
  }
  auto thumbs = TemplateThumbnails::open(location(), true);
  ASSERT_TRUE(thumbs.ok()) << thumbs.error().message;
  const std::vector<unsigned char> jpeg = {0xFF, 0xD8, 1, 2, 3, 0xFF, 0xD9};
  for (const TemplateRow& t : templates) ASSERT_TRUE(thumbs.value().put(t.id, jpeg).ok());
  EXPECT_FALSE(thumbs.value().put(templates[0].id, {}).ok());
  const std::vector<unsigned char> huge(kMaxThumbnailBytes + 1, 0);
  auto refused = thumbs.value().put(templates[0].id, huge);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, taconite::ErrorKind::Input);
  const std::int64_t asked[] = {templates[1].id, 999999, templates[0].id};
  auto got = thumbs.value().get(asked);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got.value()[0], jpeg);
  EXPECT_TRUE(got.value()[1].empty());
  EXPECT_EQ(got.value()[2], jpeg);  // the refused puts left it as it was
  EXPECT_EQ(thumbs.value().has(asked).value(), (std::vector<bool>{true, false, true}));
  // The gallery's revision is not a thumbnail's business.
  const std::int64_t revision = store_->revision().value();
  ASSERT_TRUE(store_->remove("alice").ok());
  EXPECT_EQ(thumbs.value().remove_orphans().value(), 2u);
  EXPECT_EQ(thumbs.value().has(asked).value(), (std::vector<bool>{false, false, false}));
  EXPECT_EQ(store_->revision().value(), revision + 1);
  // The file still opens as a gallery and passes its checks.
  auto reopened = GalleryStore::open(location(), GalleryStore::Access::ReadWrite);
  ASSERT_TRUE(reopened.ok()) << reopened.error().message;
  EXPECT_EQ(reopened.value().identities().value().size(), 1u);
}

}  // namespace
