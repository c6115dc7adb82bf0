// EventHistory (app/history) on a real SQLite gallery, and on the real PostgreSQL server of
// test_app_history.py stopped and started again: every event stored in order, the snapshot path,
// a database locked or away (queued, retried, logged once, the oldest dropped and counted beyond
// the bound, the main thread never waiting), refused events counted, a bounded shutdown.
#include "event_history.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "event_log_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace taconite;
using app::EventHistory;
using app::EventHistoryOptions;
using app::TrackEvent;

TrackEvent track_event(const std::string& kind, const std::string& uid, double epoch) {
  TrackEvent e;
  e.camera = "door1";
  e.kind = kind;
  e.uid = uid;
  e.track_id = 4;
  e.epoch_s = epoch;
  e.label_state = kind == "new" ? "pending" : "known";
  if (kind != "new") e.label = "alice", e.label_id = 1, e.confidence = 0.7;
  if (kind == "end")
    e.reason = "lost", e.first_epoch_s = epoch - 1, e.last_epoch_s = epoch, e.dwell_s = 1, e.frames = 9;
  e.document = R"({"schema":"taconite-tracks/1"})";
  return e;
}

// Log lines the history said, for the assertions.
struct Said {
  std::mutex mutex;
  std::vector<std::string> lines;
  std::function<void(const std::string&)> sink() {
    return [this](const std::string& line) {
      std::lock_guard lock(mutex);
      lines.push_back(line);
    };
  }
  std::size_t containing(const std::string& text) {
    std::lock_guard lock(mutex);
    std::size_t n = 0;
    for (const auto& l : lines) n += l.find(text) != std::string::npos;
    return n;
  }
};

template <typename F>
bool eventually(F condition, std::chrono::milliseconds timeout = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return condition();
}

class EventHistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("taconite-history-" + std::to_string(getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    gallery_ = (dir_ / "people.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  void make_gallery() { ASSERT_TRUE(gallery::GalleryStore::create(gallery_, test::test_model(), test::kTestDim).ok()); }
  EventHistoryOptions options() {
    EventHistoryOptions o;
    o.gallery = gallery_;
    o.retry_interval = 50ms;
    o.busy_timeout_ms = 20;
    o.log = said_.sink();
    return o;
  }
  std::vector<gallery::StoredTrackEvent> stored() {
    auto log = gallery::TrackEventLog::open(gallery_, gallery::TrackEventLog::Access::ReadOnly);
    EXPECT_TRUE(log.ok()) << log.error().message;
    gallery::TrackEventFilter f;
    f.limit = gallery::kMaxEventQueryRows;
    return log.value().query(f).value();
  }

  fs::path dir_;
  std::string gallery_;
  Said said_;
};

TEST_F(EventHistoryTest, StoresEveryEventInOrderWithItsSnapshot) {
  make_gallery();
  auto history = EventHistory::start(options());
  ASSERT_TRUE(history.ok()) << history.error().message;
  history.value()->on_track_event(track_event("new", "u1", 100));
  history.value()->on_track_event(track_event("update", "u1", 101));
  history.value()->on_track_event(track_event("end", "u1", 102));
  ASSERT_TRUE(history.value()->wait_idle(10s));
  history.value()->set_snapshot("u1", "end", "snaps/door1/u1-end.jpg");  // after the end was stored
  ASSERT_TRUE(history.value()->wait_idle(10s));
  const auto s = history.value()->stats();
  EXPECT_EQ(s.appended, 3u);
  EXPECT_EQ(s.snapshots, 1u);
  EXPECT_TRUE(s.connected);
  const auto rows = stored();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].kind, "end");
  EXPECT_EQ(rows[0].snapshot, "snaps/door1/u1-end.jpg");
  EXPECT_EQ(rows[0].dwell_s.value_or(0), 1.0);
  EXPECT_EQ(rows[0].label.value_or(""), "alice");
  EXPECT_EQ(rows[1].kind, "update");
  EXPECT_EQ(rows[1].snapshot, "");
  EXPECT_EQ(rows[2].kind, "new");
  EXPECT_FALSE(rows[2].label.has_value());
}

// Another process holds the gallery's write lock: events queue (the main thread does not wait),
// the outage is said once, the oldest beyond max_queue are dropped and counted, a snapshot for a
// queued event is attached to it, and everything queued is stored once the lock is released.
TEST_F(EventHistoryTest, ALockedDatabaseQueuesDropsTheOldestAndRecovers) {
  make_gallery();
  {
    auto log = gallery::TrackEventLog::open(gallery_);
    ASSERT_TRUE(log.ok());
  }  // the table exists
  sqlite3* locker = nullptr;
  ASSERT_EQ(sqlite3_open(gallery_.c_str(), &locker), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(locker, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);

  EventHistoryOptions o = options();
  o.max_queue = 10;
  auto history = EventHistory::start(o);
  ASSERT_TRUE(history.ok());
  EventHistory& h = *history.value();
  const auto before = std::chrono::steady_clock::now();
  for (int i = 0; i < 15; ++i) h.on_track_event(track_event(i == 14 ? "end" : "new", "u" + std::to_string(i), 200 + i));
  const auto took = std::chrono::steady_clock::now() - before;
  EXPECT_LT(took, 200ms) << "on_track_event waited for the database";
  ASSERT_TRUE(eventually([&] { return h.stats().outages == 1; }));
  h.set_snapshot("u14", "end", "snaps/u14.jpg");  // u14's end is still queued
  std::this_thread::sleep_for(300ms);             // several retries: still one outage, said once
  auto s = h.stats();
  EXPECT_EQ(s.outages, 1u);
  EXPECT_FALSE(s.connected);
  EXPECT_EQ(s.appended, 0u);
  EXPECT_EQ(s.dropped, 5u);
  EXPECT_EQ(s.queued, 10u);
  EXPECT_EQ(said_.containing("is away"), 1u);

  ASSERT_EQ(sqlite3_exec(locker, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(locker);
  ASSERT_TRUE(h.wait_idle(10s));
  s = h.stats();
  EXPECT_EQ(s.appended, 10u);
  EXPECT_TRUE(s.connected);
  EXPECT_EQ(said_.containing("is back"), 1u);
  const auto rows = stored();
  ASSERT_EQ(rows.size(), 10u);
  EXPECT_EQ(rows.front().uid, "u14");
  EXPECT_EQ(rows.front().snapshot, "snaps/u14.jpg");
  EXPECT_EQ(rows.back().uid, "u5");  // u0..u4, the oldest, were dropped
}

// No gallery at the start (removed, not made yet): the history waits, then stores everything once
// it is there.
TEST_F(EventHistoryTest, AGalleryAwayAtTheStartIsWaitedFor) {
  auto history = EventHistory::start(options());
  ASSERT_TRUE(history.ok());
  history.value()->on_track_event(track_event("new", "u1", 1));
  ASSERT_TRUE(eventually([&] { return history.value()->stats().outages == 1; }));
  EXPECT_EQ(said_.containing(gallery_), 1u);
  make_gallery();
  ASSERT_TRUE(history.value()->wait_idle(10s));
  EXPECT_EQ(history.value()->stats().appended, 1u);
  EXPECT_EQ(stored().size(), 1u);
}

TEST_F(EventHistoryTest, RefusedEventsAreCountedAndNotRetried) {
  make_gallery();
  auto history = EventHistory::start(options());
  ASSERT_TRUE(history.ok());
  TrackEvent huge = track_event("update", "u1", 5);
  huge.document.assign(gallery::kMaxEventDocumentBytes + 1, ' ');
  history.value()->on_track_event(track_event("new", "u1", 4));
  history.value()->on_track_event(huge);
  history.value()->on_track_event(track_event("end", "u1", 6));
  ASSERT_TRUE(history.value()->wait_idle(10s));
  const auto s = history.value()->stats();
  EXPECT_EQ(s.appended, 2u);
  EXPECT_EQ(s.refused, 1u);
  EXPECT_EQ(s.outages, 0u);
  EXPECT_EQ(said_.containing("document"), 1u);
  EXPECT_EQ(stored().size(), 2u);
}

TEST_F(EventHistoryTest, RetentionKeepsTheNewest) {
  make_gallery();
  EventHistoryOptions o = options();
  o.max_rows = 5;
  o.prune_every = 1;
  auto history = EventHistory::start(o);
  ASSERT_TRUE(history.ok());
  for (int i = 0; i < 12; ++i) history.value()->on_track_event(track_event("new", "u" + std::to_string(i), 10 + i));
  ASSERT_TRUE(history.value()->wait_idle(10s));
  const auto rows = stored();
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows.back().uid, "u7");
  EXPECT_EQ(history.value()->stats().pruned, 7u);
}

TEST_F(EventHistoryTest, ShutdownWithTheDatabaseAwayIsBounded) {
  EventHistoryOptions o = options();
  o.flush_timeout = 100ms;
  auto history = EventHistory::start(o);
  ASSERT_TRUE(history.ok());
  for (int i = 0; i < 5; ++i) history.value()->on_track_event(track_event("new", "u" + std::to_string(i), i + 1));
  ASSERT_TRUE(eventually([&] { return history.value()->stats().outages == 1; }));
  const auto before = std::chrono::steady_clock::now();
  history.value().reset();
  EXPECT_LT(std::chrono::steady_clock::now() - before, 2s);
  EXPECT_EQ(said_.containing("not stored at shutdown"), 1u);
}

// How many events a second the worker stores in an SQLite gallery (each its own transaction; the
// gallery's WAL mode): printed, with a loose bound far below a camera site's event rate's need.
TEST_F(EventHistoryTest, StoresEventsFastEnough) {
  make_gallery();
  EventHistoryOptions o = options();
  o.max_queue = 2000;
  auto history = EventHistory::start(o);
  ASSERT_TRUE(history.ok());
  const int n = 1000;
  const auto before = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) history.value()->on_track_event(track_event("update", "u" + std::to_string(i % 50), i));
  const double queued_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - before).count() / n;
  ASSERT_TRUE(history.value()->wait_idle(60s));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
  std::printf("EventHistory on SQLite: %d events stored in %.2f s (%.0f a second); on_track_event %.1f us each\n", n,
              seconds, n / seconds, queued_us);
  EXPECT_EQ(history.value()->stats().appended, static_cast<std::uint64_t>(n));
  EXPECT_GT(n / seconds, 50.0);
}

TEST(EventHistoryOptionsTest, OutOfBoundsOptionsAreRefused) {
  EventHistoryOptions o;
  EXPECT_FALSE(EventHistory::start(o).ok());  // no gallery
  o.gallery = "x.db";
  o.max_queue = 0;
  EXPECT_FALSE(EventHistory::start(o).ok());
  o.max_queue = 10;
  o.max_age_s = -1;
  EXPECT_FALSE(EventHistory::start(o).ok());
}

// The PostgreSQL server stopped while events arrive and started again (test_app_history.py gives
// the commands): queued, said once, all stored after.
TEST(EventHistoryPostgresTest, AServerStoppedAndStartedAgainLosesNothingWithinTheBound) {
  const auto pg = test::postgres_location();
  const char* stop = std::getenv("TACONITE_TEST_PG_STOP");
  const char* start = std::getenv("TACONITE_TEST_PG_START");
  if (!pg || !stop || !start) GTEST_SKIP() << "no PostgreSQL server to stop (run through test_app_history.py)";
  ASSERT_EQ(test::empty_postgres(*pg), "");
  ASSERT_TRUE(gallery::GalleryStore::create(*pg, test::test_model(), test::kTestDim).ok());
  Said said;
  EventHistoryOptions o;
  o.gallery = *pg;
  o.retry_interval = 100ms;
  o.log = said.sink();
  auto history = EventHistory::start(o);
  ASSERT_TRUE(history.ok());
  EventHistory& h = *history.value();
  h.on_track_event(track_event("new", "p1", 1));
  ASSERT_TRUE(h.wait_idle(20s));
  ASSERT_EQ(std::system(stop), 0);
  for (int i = 2; i <= 6; ++i) h.on_track_event(track_event("update", "p1", i));
  ASSERT_TRUE(eventually([&] { return h.stats().outages == 1; }, 20s));
  EXPECT_EQ(said.containing("is away"), 1u);
  ASSERT_EQ(std::system(start), 0);
  ASSERT_TRUE(h.wait_idle(30s));
  EXPECT_EQ(h.stats().appended, 6u);
  EXPECT_EQ(h.stats().dropped, 0u);
  EXPECT_EQ(said.containing("is back"), 1u);
  auto log = gallery::TrackEventLog::open(*pg);
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log.value().count().value(), 6u);
}

}  // namespace
