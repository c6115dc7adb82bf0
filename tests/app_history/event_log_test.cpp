// The event log (gallery/track_event_log.hpp) on a real SQLite gallery and, when the test runner
// started one, a real PostgreSQL server: append, filters, newest first, limit bounds, prune, the
// snapshot path, hostile text, bounds, a gallery made without the table, and the JSON.
#include <gtest/gtest.h>
#include <json-glib/json-glib.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "event_log_fixture.hpp"
#include "gallery_index.hpp"
#include "json_parse.hpp"

namespace {

namespace fs = std::filesystem;
using namespace taconite;
using gallery::GalleryStore;
using gallery::StoredTrackEvent;
using gallery::TrackEventFilter;
using gallery::TrackEventLog;

StoredTrackEvent event(double epoch, const std::string& camera, const std::string& kind, const std::string& uid,
                       std::optional<std::string> label = std::nullopt) {
  StoredTrackEvent e;
  e.epoch_s = epoch;
  e.camera = camera;
  e.kind = kind;
  e.uid = uid;
  e.track_id = 7;
  e.label_state = label ? "known" : "pending";
  e.label = label;
  if (label) e.label_id = 3, e.confidence = 0.81;
  if (kind == "end") {
    e.reason = "lost";
    e.first_epoch_s = epoch - 2.5;
    e.last_epoch_s = epoch;
    e.dwell_s = 2.5;
    e.frames = 25;
  }
  e.document = R"({"schema":"taconite-tracks/1","event":")" + kind + R"("})";
  return e;
}

class EventLogTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "postgres") {
      const auto pg = test::postgres_location();
      if (!pg) GTEST_SKIP() << "no PostgreSQL server (run through test_app_history.py, which starts one)";
      ASSERT_EQ(test::empty_postgres(*pg), "");
      location_ = *pg;
    } else {
      dir_ = fs::temp_directory_path() / ("taconite-events-" + std::to_string(getpid()) + "-" +
                                          ::testing::UnitTest::GetInstance()->current_test_info()->name());
      fs::remove_all(dir_);
      fs::create_directories(dir_);
      location_ = (dir_ / "people.db").string();
    }
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  void make_gallery() {
    auto created = GalleryStore::create(location_, test::test_model(), test::kTestDim);
    ASSERT_TRUE(created.ok()) << created.error().message;
  }
  TrackEventLog open_log(TrackEventLog::Access access = TrackEventLog::Access::ReadWrite) {
    auto log = TrackEventLog::open(location_, access);
    EXPECT_TRUE(log.ok()) << log.error().message;
    return std::move(log.value());
  }
  bool is_postgres() const { return GetParam() == "postgres"; }

  fs::path dir_;
  std::string location_;
};

TEST_P(EventLogTest, AppendsAndQueriesNewestFirstWithEveryFilter) {
  make_gallery();
  TrackEventLog log = open_log();
  ASSERT_TRUE(log.append(event(1000.5, "door1", "new", "u1")).ok());
  ASSERT_TRUE(log.append(event(1001.25, "door1", "update", "u1", "alice")).ok());
  ASSERT_TRUE(log.append(event(1003.0, "door1", "end", "u1", "alice")).ok());
  ASSERT_TRUE(log.append(event(1002.0, "door2", "new", "u2")).ok());
  ASSERT_TRUE(log.append(event(1004.0, "door2", "end", "u2", "bob")).ok());

  auto all = log.query({});
  ASSERT_TRUE(all.ok()) << all.error().message;
  ASSERT_EQ(all.value().size(), 5u);
  for (std::size_t i = 1; i < all.value().size(); ++i) EXPECT_GE(all.value()[i - 1].epoch_s, all.value()[i].epoch_s);
  EXPECT_EQ(all.value().front().uid, "u2");
  EXPECT_EQ(all.value().front().label.value_or(""), "bob");

  const StoredTrackEvent& end = all.value()[1];  // alice's end
  EXPECT_EQ(end.kind, "end");
  EXPECT_EQ(end.reason, "lost");
  EXPECT_DOUBLE_EQ(end.dwell_s.value_or(-1), 2.5);
  EXPECT_DOUBLE_EQ(end.first_epoch_s.value_or(-1), 1000.5);
  EXPECT_EQ(end.frames, 25);
  EXPECT_EQ(end.label_id.value_or(0), 3);
  EXPECT_DOUBLE_EQ(end.confidence.value_or(0), 0.81);
  EXPECT_FALSE(all.value().back().label.has_value());
  EXPECT_FALSE(all.value().back().confidence.has_value());
  EXPECT_DOUBLE_EQ(all.value().back().epoch_s, 1000.5);

  TrackEventFilter f;
  f.person = "alice";
  auto alice = log.query(f);
  ASSERT_TRUE(alice.ok());
  ASSERT_EQ(alice.value().size(), 2u);
  EXPECT_EQ(alice.value()[0].kind, "end");

  f = {};
  f.camera = "door2";
  f.kind = "end";
  auto door2_end = log.query(f);
  ASSERT_TRUE(door2_end.ok());
  ASSERT_EQ(door2_end.value().size(), 1u);
  EXPECT_EQ(door2_end.value()[0].uid, "u2");

  f = {};
  f.since_epoch_s = 1001.25;
  f.until_epoch_s = 1003.0;
  auto window = log.query(f);
  ASSERT_TRUE(window.ok());
  ASSERT_EQ(window.value().size(), 3u);
  EXPECT_DOUBLE_EQ(window.value()[0].epoch_s, 1003.0);
  EXPECT_DOUBLE_EQ(window.value()[2].epoch_s, 1001.25);

  f = {};
  f.limit = 2;
  auto two = log.query(f);
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two.value().size(), 2u);
  EXPECT_DOUBLE_EQ(two.value()[1].epoch_s, 1003.0);

  f = {};
  f.uid = "u1";
  auto u1 = log.query(f);
  ASSERT_TRUE(u1.ok());
  EXPECT_EQ(u1.value().size(), 3u);
  EXPECT_EQ(log.count().value(), 5u);
}

TEST_P(EventLogTest, LimitOutsideItsBoundsIsRefused) {
  make_gallery();
  TrackEventLog log = open_log();
  for (std::size_t limit : {std::size_t{0}, gallery::kMaxEventQueryRows + 1}) {
    TrackEventFilter f;
    f.limit = limit;
    auto r = log.query(f);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, ErrorKind::Input);
    EXPECT_NE(r.error().message.find("limit"), std::string::npos) << r.error().message;
  }
  TrackEventFilter f;
  f.limit = gallery::kMaxEventQueryRows;
  f.since_epoch_s = NAN;
  EXPECT_FALSE(log.query(f).ok());
}

TEST_P(EventLogTest, PrunesByCountAndAgeKeepingTheNewest) {
  make_gallery();
  TrackEventLog log = open_log();
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(log.append(event(100.0 + i, "cam", "new", "u" + std::to_string(i))).ok());
  auto removed = log.prune(15, 0, 0);
  ASSERT_TRUE(removed.ok()) << removed.error().message;
  EXPECT_EQ(removed.value(), 5u);
  auto rows = log.query({});
  ASSERT_EQ(rows.value().size(), 15u);
  EXPECT_EQ(rows.value().back().uid, "u5");  // the 5 oldest went
  // Age: now 120, keep 10 s: only events at >= 110 stay.
  removed = log.prune(0, 10, 120);
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(removed.value(), 5u);
  EXPECT_EQ(log.count().value(), 10u);
  EXPECT_EQ(log.query({}).value().back().uid, "u10");
  EXPECT_EQ(log.prune(0, 0, 120).value(), 0u);  // no bound: nothing removed
  EXPECT_FALSE(log.prune(0, -1, 120).ok());
}

TEST_P(EventLogTest, SetsTheSnapshotOfTheNewestEventOfAUid) {
  make_gallery();
  TrackEventLog log = open_log();
  ASSERT_TRUE(log.append(event(10, "cam", "new", "u1")).ok());
  ASSERT_TRUE(log.append(event(12, "cam", "end", "u1")).ok());
  auto set = log.set_snapshot("u1", gallery::SnapshotOf::End, "/snaps/cam/2026-12-06/u1-end.jpg");
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_TRUE(set.value());
  EXPECT_FALSE(log.set_snapshot("nobody", gallery::SnapshotOf::End, "/x.jpg").value());
  auto rows = log.query({});
  EXPECT_EQ(rows.value()[0].snapshot, "/snaps/cam/2026-12-06/u1-end.jpg");
  EXPECT_EQ(rows.value()[1].snapshot, "");
  // The decision: the first new/update with a decided identity ("new" here is pending: the end is
  // the only decided event, but an end is never the decision).
  EXPECT_FALSE(log.set_snapshot("u1", gallery::SnapshotOf::Decision, "d.jpg").value());
  ASSERT_TRUE(log.append(event(20, "cam", "new", "u2")).ok());
  ASSERT_TRUE(log.append(event(21, "cam", "update", "u2", "bob")).ok());
  ASSERT_TRUE(log.append(event(22, "cam", "update", "u2", "bob")).ok());
  ASSERT_TRUE(log.set_snapshot("u2", gallery::SnapshotOf::Decision, "u2-decided.jpg").value());
  gallery::TrackEventFilter f;
  f.uid = "u2";
  rows = log.query(f);
  ASSERT_EQ(rows.value().size(), 3u);
  EXPECT_EQ(rows.value()[0].snapshot, "");
  EXPECT_EQ(rows.value()[1].snapshot, "u2-decided.jpg");
  EXPECT_EQ(rows.value()[2].snapshot, "");
}

TEST_P(EventLogTest, HostileTextIsStoredMendedAndQueriedLiterally) {
  make_gallery();
  TrackEventLog log = open_log();
  const std::string injection = "x'); DROP TABLE track_events; --";
  const std::string bad_utf8 = std::string("ann\xff\xfe") + '\0' + "e";
  ASSERT_TRUE(log.append(event(1, injection, "new", "u1", injection)).ok());
  auto appended = log.append(event(2, "cam", "new", "u2", bad_utf8));
  ASSERT_TRUE(appended.ok()) << appended.error().message;
  TrackEventFilter f;
  f.person = injection;
  auto rows = log.query(f);
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows.value().size(), 1u);
  EXPECT_EQ(rows.value()[0].camera, injection);
  f.person = "%";
  EXPECT_EQ(log.query(f).value().size(), 0u);  // equality, not a pattern
  f = {};
  f.uid = "u2";
  rows = log.query(f);
  ASSERT_EQ(rows.value().size(), 1u);
  const std::string mended = rows.value()[0].label.value_or("");
  EXPECT_EQ(mended,
            "ann\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
            "e");  // U+FFFD for each bad byte and the NUL
  auto parsed = json::parse_json(gallery::events_to_json(log.query({}).value()));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
}

TEST_P(EventLogTest, OversizedOrNonFiniteEventsAreRefusedNamingTheField) {
  make_gallery();
  TrackEventLog log = open_log();
  StoredTrackEvent big = event(1, "cam", "new", "u1");
  big.document.assign(gallery::kMaxEventDocumentBytes + 1, 'x');
  auto r = log.append(big);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::Input);
  EXPECT_NE(r.error().message.find("document"), std::string::npos) << r.error().message;
  StoredTrackEvent long_label = event(1, "cam", "new", "u1", std::string(gallery::kMaxEventFieldBytes + 1, 'a'));
  r = log.append(long_label);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("label"), std::string::npos) << r.error().message;
  StoredTrackEvent nan = event(NAN, "cam", "new", "u1");
  r = log.append(nan);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("epoch_s"), std::string::npos);
  StoredTrackEvent no_camera = event(1, "", "new", "u1");
  EXPECT_FALSE(log.append(no_camera).ok());
  EXPECT_EQ(log.count().value(), 0u);
  StoredTrackEvent fits = event(1, "cam", "new", "u1");
  fits.document.assign(gallery::kMaxEventDocumentBytes, 'x');
  EXPECT_TRUE(log.append(fits).ok());
}

// A gallery from before the event log: a read-only open sees no events and adds nothing; the
// first read-write open adds the table, and the gallery still opens and identifies as before
// (no schema-version bump).
TEST_P(EventLogTest, AGalleryWithoutTheTableStillOpensAndIdentifies) {
  make_gallery();
  {
    auto store = GalleryStore::open(location_, GalleryStore::Access::ReadWrite);
    ASSERT_TRUE(store.ok()) << store.error().message;
    gallery::NewTemplate t;
    t.embedding = {1, 0, 0, 0};
    t.source = "test";
    ASSERT_TRUE(store.value().enroll("alice", "{}", std::span(&t, 1)).ok());
  }
  {
    TrackEventLog reader = open_log(TrackEventLog::Access::ReadOnly);
    EXPECT_EQ(reader.query({}).value().size(), 0u);
    EXPECT_EQ(reader.count().value(), 0u);
  }
  if (!is_postgres()) {  // the read-only open added nothing
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(location_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE name = 'track_events'", -1, &s, nullptr);
    ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int(s, 0), 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
  }
  TrackEventLog log = open_log();
  ASSERT_TRUE(log.append(event(5, "cam", "end", "u1", "alice")).ok());
  auto store = GalleryStore::open(location_, GalleryStore::Access::ReadOnly);
  ASSERT_TRUE(store.ok()) << store.error().message;
  EXPECT_EQ(store.value().info().value().schema_version, gallery::kSchemaVersion);
  auto index = gallery::GalleryIndex::load(store.value(), {});
  ASSERT_TRUE(index.ok()) << index.error().message;
  const std::vector<float> probe = {0.9f, 0.1f, 0, 0};
  auto matches = index.value().search(probe, 1);
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_EQ(matches[0].name, "alice");
}

TEST_P(EventLogTest, ALocationThatIsNoGalleryIsAnErrorNamingIt) {
  if (is_postgres()) {
    auto r = TrackEventLog::open(location_);  // the emptied database holds no gallery
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("not a taconite gallery"), std::string::npos) << r.error().message;
    return;
  }
  auto missing = TrackEventLog::open(location_);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find(location_), std::string::npos);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(location_.c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "CREATE TABLE other(x)", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  auto other = TrackEventLog::open(location_);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("not a taconite gallery"), std::string::npos) << other.error().message;
  // Another application's SQLite file with a table named gallery: its application_id says so.
  ASSERT_EQ(sqlite3_open(location_.c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "CREATE TABLE gallery(x)", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  other = TrackEventLog::open(location_);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("application_id"), std::string::npos) << other.error().message;
  // Not SQLite at all.
  fs::remove(location_);
  std::ofstream(location_) << "not a database, just text that is long enough to be a header......";
  other = TrackEventLog::open(location_);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find(location_), std::string::npos) << other.error().message;
  EXPECT_NE(other.error().message.find("not a taconite gallery"), std::string::npos) << other.error().message;
}

TEST_P(EventLogTest, JsonHoldsTheStoredColumns) {
  make_gallery();
  TrackEventLog log = open_log();
  ASSERT_TRUE(log.append(event(1764592024.879027, "door1", "end", "u1", "alice")).ok());
  ASSERT_TRUE(log.set_snapshot("u1", gallery::SnapshotOf::End, "snaps/u1-end.jpg").ok());
  ASSERT_TRUE(log.append(event(1764592020.5, "door1", "new", "u1")).ok());
  auto parsed = json::parse_json(gallery::events_to_json(log.query({}).value()));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  JsonArray* array = json_node_get_array(parsed.value().get());
  ASSERT_EQ(json_array_get_length(array), 2u);
  JsonObject* end = json_array_get_object_element(array, 0);
  EXPECT_STREQ(json_object_get_string_member(end, "kind"), "end");
  EXPECT_STREQ(json_object_get_string_member(end, "label"), "alice");
  EXPECT_STREQ(json_object_get_string_member(end, "utc"), "2025-12-01T12:27:04.879027Z");
  EXPECT_STREQ(json_object_get_string_member(end, "snapshot"), "snaps/u1-end.jpg");
  EXPECT_DOUBLE_EQ(json_object_get_double_member(end, "dwell_s"), 2.5);
  EXPECT_EQ(json_object_get_int_member(end, "label_id"), 3);
  JsonObject* fresh = json_array_get_object_element(array, 1);
  EXPECT_TRUE(json_node_is_null(json_object_get_member(fresh, "label")));
  EXPECT_TRUE(json_node_is_null(json_object_get_member(fresh, "snapshot")));
  EXPECT_TRUE(json_node_is_null(json_object_get_member(fresh, "dwell_s")));
  EXPECT_EQ(gallery::events_to_json({}), "[]");
}

INSTANTIATE_TEST_SUITE_P(Backends, EventLogTest, ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

TEST(EventTimes, IsoRoundTripsAndBadTextIsRefused) {
  EXPECT_EQ(gallery::epoch_to_iso(0), "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(gallery::epoch_to_iso(1764592024.879027), "2025-12-01T12:27:04.879027Z");
  EXPECT_EQ(gallery::epoch_to_iso(NAN), "");
  EXPECT_EQ(gallery::epoch_to_iso(1e18), "");
  EXPECT_DOUBLE_EQ(gallery::iso_to_epoch("1970-01-02").value_or(-1), 86400);
  EXPECT_NEAR(gallery::iso_to_epoch("2025-12-01T12:27:04.879027Z").value_or(-1), 1764592024.879027, 1e-6);
  EXPECT_DOUBLE_EQ(gallery::iso_to_epoch("2025-12-01T14:27:04+02:00").value_or(-1), 1764592024);
  EXPECT_DOUBLE_EQ(gallery::iso_to_epoch("1969-12-31T23:59:59Z").value_or(0), -1);
  for (const char* bad :
       {"", "yesterday", "2025-13-01", "2025-12-01T25:00:00Z", "2025-12-01T12:00:00+99:00", "12345-01-01"})
    EXPECT_FALSE(gallery::iso_to_epoch(bad).has_value()) << bad;
}

}  // namespace

namespace {

TEST(EventLogLocation, APasswordInTheLocationIsRefusedAndNeverShown) {
  for (const char* location : {"postgresql://taconite:s3cret@127.0.0.1:1/db", "host=127.0.0.1 password=s3cret"}) {
    auto log = taconite::gallery::TrackEventLog::open(location);
    ASSERT_FALSE(log.ok());
    EXPECT_EQ(log.error().message.find("s3cret"), std::string::npos) << log.error().message;
    EXPECT_NE(log.error().message.find("password"), std::string::npos) << log.error().message;
  }
}

}  // namespace
