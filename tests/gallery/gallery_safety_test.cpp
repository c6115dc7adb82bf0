// The gallery library against hostile locations and files (issue 29): a password never shows in a
// message (every form, libpq's own text too); a service or password file that is a FIFO, a device,
// a directory or huge is refused before libpq reads it (no hang, no spin); a gallery in a
// directory its reader cannot write is still read. No PostgreSQL server is needed: every case is
// decided before libpq connects anywhere. Cases that could hang run in a child process with a
// deadline, so a regression fails instead of hanging.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "displayed_location.hpp"
#include "gallery_store.hpp"

namespace {

using namespace taconite::gallery;
using taconite::Result;
namespace fs = std::filesystem;

constexpr const char* kSecret = "hunter2secret";

// ---------------------------------------------------------------------------------------------
// Passwords in locations and messages.

TEST(DisplayedLocation, MasksThePasswordOfEveryFormAndKeepsTheRest) {
  struct Case {
    std::string location;
    std::vector<std::string> kept;  // what still identifies the gallery
  };
  const std::vector<Case> cases = {
      {"host=/run/pg port=5433 user=nobody dbname=g2 password=hunter2secret", {"host=/run/pg", "dbname=g2", "user=nobody"}},
      {"password = hunter2secret dbname=g2", {"dbname=g2"}},
      {"dbname=g2 password='hunter2secret with spaces\\' and a quote' user=nobody", {"dbname=g2", "user=nobody"}},
      {"dbname=g2 password=hunter2\\ secret", {"dbname=g2"}},
      {"postgresql://nobody:hunter2secret@db.lan:5432/g2", {"postgresql://nobody:", "@db.lan:5432/g2"}},
      {"postgresql://nobody:hunter2secret@[::1/g2", {"nobody", "[::1/g2"}},  // malformed (no ']')
      {"postgres://nobody:hunter2secret@/g2?host=/run/pg", {"nobody", "/g2?host=/run/pg"}},
      {"postgresql:///g2?host=/run/pg&password=hunter2secret&user=nobody", {"/g2?host=/run/pg", "&user=nobody"}},
      {"postgresql:///g2?password=hunter2secret", {"/g2?password="}},
      {"host=h dbname=g2 sslpassword=hunter2secret", {"dbname=g2"}},
  };
  for (const Case& c : cases) {
    const std::string shown = displayed_location(c.location);
    EXPECT_EQ(shown.find("hunter2"), std::string::npos) << c.location << " -> " << shown;
    EXPECT_EQ(shown.find("secret"), std::string::npos) << c.location << " -> " << shown;
    EXPECT_NE(shown.find(kMaskedSecret), std::string::npos) << c.location << " -> " << shown;
    for (const std::string& part : c.kept) EXPECT_NE(shown.find(part), std::string::npos) << part << " in " << shown;
  }
  // Nothing to mask: shown as given.
  for (const char* plain : {"/data/people.db", "people.db", "gal lery/a=b.db", "postgresql:///g2?host=/run/pg&user=u",
                            "service=gallery", "host=/run/pg dbname=g2 user=nobody"})
    EXPECT_EQ(displayed_location(plain), plain);
}

// libpq's text (a parse error quoting the string, a server message) is masked with the passwords
// the location holds, as written and as libpq decodes them, wherever they appear.
TEST(DisplayedLocation, MasksTheLocationsPasswordsInAnyText) {
  const std::string uri = "postgresql://nobody:hunter%32secret@[::1/g2";
  const std::string libpq = "end of string reached when looking for matching \"]\" in IPv6 host address in URI: \"" +
                            uri + "\"; the server said hunter2secret";
  const std::string masked = mask_secrets(libpq, uri);
  EXPECT_EQ(masked.find("hunter"), std::string::npos) << masked;
  EXPECT_NE(masked.find("IPv6 host address"), std::string::npos) << masked;
  EXPECT_NE(masked.find("nobody"), std::string::npos) << masked;
  const std::string keyword = "host=h password='a b' dbname=g";
  EXPECT_EQ(mask_secrets("failed for a b and 'a b'", keyword), "failed for **** and ****");
  // A password that reads as one in the text is masked even when the location holds none.
  EXPECT_EQ(mask_secrets("invalid option in \"dbname=g password=x1\"", "service=s").find("x1"), std::string::npos);
}

TEST(DisplayedLocation, AnyLibpqKeywordFirstIsAPostgresLocation) {
  for (const char* pg : {"service=g", "password=x host=h", "sslmode=disable dbname=g", " host=h", "dbname=g2"})
    EXPECT_TRUE(is_postgres_location(pg)) << pg;
  for (const char* file : {"people.db", "/data/a=b.db", "people=1.db", "gal lery.db"})
    EXPECT_FALSE(is_postgres_location(file)) << file;
}

// The store's errors: a password in the string is refused, and neither its refusal nor a parse
// error shows it.
TEST(DisplayedLocation, StoreErrorsNeverShowThePassword) {
  for (const std::string location :
       {"host=/nonexistent port=1 user=nobody dbname=g2 password=hunter2secret",
        "postgresql://nobody:hunter2secret@[::1/g2", "postgresql:///g2?host=/nonexistent&password=hunter2secret",
        "sslmode=disable dbname=g2 password='hunter2secret"}) {  // (an unterminated quote)
    for (GalleryStore::Access access : {GalleryStore::Access::ReadOnly, GalleryStore::Access::ReadWrite}) {
      auto store = GalleryStore::open(location, access);
      ASSERT_FALSE(store.ok()) << location;
      EXPECT_EQ(store.error().message.find(kSecret), std::string::npos) << store.error().message;
      EXPECT_NE(store.error().message.find("g2"), std::string::npos) << store.error().message;
    }
    auto created = GalleryStore::create(location, {std::string(64, 'a'), "m"}, 4);
    ASSERT_FALSE(created.ok());
    EXPECT_EQ(created.error().message.find(kSecret), std::string::npos) << created.error().message;
  }
  if (!postgres_available()) return;  // (libpq's parse: PostgresLocationsWithoutLibpq... below instead)
  auto malformed = GalleryStore::open("postgresql://nobody:hunter2secret@[::1/g2", GalleryStore::Access::ReadOnly);
  EXPECT_NE(malformed.error().message.find("malformed connection string"), std::string::npos);
  EXPECT_NE(malformed.error().message.find("IPv6"), std::string::npos) << malformed.error().message;
}

// A build without libpq (-Dpostgresql=disabled) still tells a PostgreSQL location from a file name,
// and refuses it saying so and how to rebuild, password masked; with libpq that refusal never comes.
TEST(DisplayedLocation, PostgresLocationsWithoutLibpqAreRefusedSayingHowToRebuild) {
  for (const std::string location : {"postgresql://nobody:hunter2secret@db.lan/g2",
                                     "host=/nonexistent dbname=g2 password=hunter2secret", "service=g2"}) {
    auto store = GalleryStore::open(location, GalleryStore::Access::ReadOnly);
    auto created = GalleryStore::create(location, {std::string(64, 'a'), "m"}, 4);
    ASSERT_FALSE(store.ok()) << location;
    ASSERT_FALSE(created.ok()) << location;
    for (const taconite::Error& e : {store.error(), created.error()}) {
      EXPECT_EQ(e.message.find(kSecret), std::string::npos) << e.message;
      EXPECT_NE(e.message.find("g2"), std::string::npos) << e.message;
      const bool refused = e.message.find("built without PostgreSQL support (libpq; rebuild with libpq-dev and "
                                          "-Dpostgresql=enabled)") != std::string::npos;
      EXPECT_EQ(refused, !postgres_available()) << e.message;
      if (refused) {
        EXPECT_EQ(e.kind, taconite::ErrorKind::Input);
      }
    }
  }
  EXPECT_FALSE(fs::exists("service=g2"));  // not taken for an SQLite file name
}

// ---------------------------------------------------------------------------------------------
// Service and password files libpq would read.

class ClientFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("taconite-gallery-safety-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "home");
    if (!postgres_available()) GTEST_SKIP() << "this build has no libpq (-Dpostgresql=disabled): no client files read";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Opens `location` in a child process with `environment` (name, value; "" unsets) and HOME in
  // the test's directory; returns the error message, or "TIMED OUT" after 30 s (then killed: a
  // hang or a spin in libpq), or "OPENED".
  std::string open_in_child(const std::string& location, const std::vector<std::pair<std::string, std::string>>& environment) {
    int out[2];
    if (::pipe(out) != 0) return "pipe failed";
    const pid_t child = ::fork();
    if (child == 0) {
      ::close(out[0]);
      ::setenv("HOME", (dir_ / "home").c_str(), 1);
      for (const char* name : {"PGSERVICEFILE", "PGPASSFILE", "PGSERVICE", "PGSYSCONFDIR"}) ::unsetenv(name);
      for (const auto& [name, value] : environment)
        if (!value.empty()) ::setenv(name.c_str(), value.c_str(), 1);
      auto store = GalleryStore::open(location, GalleryStore::Access::ReadOnly);
      const std::string said = store.ok() ? "OPENED" : store.error().message;
      [[maybe_unused]] const ssize_t written = ::write(out[1], said.data(), said.size());
      ::_exit(0);
    }
    ::close(out[1]);
    std::string said;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd p{out[0], POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) == 0) {
        ::kill(child, SIGKILL);
        said = "TIMED OUT";
        break;
      }
      char buffer[4096];
      const ssize_t got = ::read(out[0], buffer, sizeof buffer);
      if (got <= 0) break;
      said.append(buffer, static_cast<std::size_t>(got));
    }
    ::close(out[0]);
    ::waitpid(child, nullptr, 0);
    return said;
  }

  std::string fifo(const char* name) {
    const fs::path path = dir_ / name;
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
    return path.string();
  }

  fs::path dir_;
};

// A server nobody answers at: a run that gets past the checks fails to connect (never hangs).
const std::string kNowhere = "host=/nonexistent-socket-dir dbname=g2 connect_timeout=2";

TEST_F(ClientFilesTest, AServiceFileThatIsAFifoADeviceOrADirectoryIsRefusedNamingTheVariable) {
  for (const std::string& bad : {fifo("svc.fifo"), std::string("/dev/zero"), dir_.string()}) {
    const std::string said = open_in_child("service=gal", {{"PGSERVICEFILE", bad}});
    EXPECT_NE(said.find("PGSERVICEFILE"), std::string::npos) << said;
    EXPECT_NE(said.find(bad), std::string::npos) << said;
    EXPECT_NE(said.find("not a regular file"), std::string::npos) << said;
    EXPECT_NE(said.find("service=gal"), std::string::npos) << said;
  }
  // The service named by PGSERVICE, the URI form's ?service=: the same check.
  const std::string fifo_file = (dir_ / "svc.fifo").string();
  EXPECT_NE(open_in_child(kNowhere, {{"PGSERVICEFILE", fifo_file}, {"PGSERVICE", "gal"}}).find("is a FIFO"),
            std::string::npos);
  EXPECT_NE(open_in_child("postgresql:///g2?service=gal", {{"PGSERVICEFILE", "/dev/zero"}}).find("is a device"),
            std::string::npos);
}

TEST_F(ClientFilesTest, TheDefaultServiceFilesAreCheckedToo) {
  fifo("home/.pg_service.conf");
  const std::string home = open_in_child("service=gal", {});
  EXPECT_NE(home.find("~/.pg_service.conf"), std::string::npos) << home;
  EXPECT_NE(home.find("is a FIFO"), std::string::npos) << home;
  fs::remove(dir_ / "home/.pg_service.conf");
  fs::create_directories(dir_ / "etc");
  fifo("etc/pg_service.conf");
  const std::string system = open_in_child("service=gal", {{"PGSYSCONFDIR", (dir_ / "etc").string()}});
  EXPECT_NE(system.find("PGSYSCONFDIR"), std::string::npos) << system;
  EXPECT_NE(system.find("is a FIFO"), std::string::npos) << system;
}

TEST_F(ClientFilesTest, APasswordFileThatIsNotARegularFileOrHugeIsRefused) {
  const std::string pass_fifo = fifo("pass.fifo");
  const std::string variable = open_in_child(kNowhere, {{"PGPASSFILE", pass_fifo}});
  EXPECT_NE(variable.find("PGPASSFILE names " + pass_fifo), std::string::npos) << variable;
  const std::string keyword = open_in_child(kNowhere + " passfile=/dev/zero", {});
  EXPECT_NE(keyword.find("passfile="), std::string::npos) << keyword;
  EXPECT_NE(keyword.find("is a device"), std::string::npos) << keyword;
  fifo("home/.pgpass");
  const std::string home = open_in_child(kNowhere, {});
  EXPECT_NE(home.find("~/.pgpass"), std::string::npos) << home;
  const fs::path huge = dir_ / "huge.pgpass";
  std::ofstream(huge) << std::string(2 * 1024 * 1024, '#');
  const std::string big = open_in_child(kNowhere, {{"PGPASSFILE", huge.string()}});
  EXPECT_NE(big.find("2097152 bytes"), std::string::npos) << big;
}

// Regular files (and absent ones) are left to libpq: the open goes on to the (absent) server.
TEST_F(ClientFilesTest, RegularOrAbsentFilesAreLeftToLibpq) {
  std::ofstream(dir_ / "svc.conf") << "[gal]\nhost=/nonexistent-socket-dir\ndbname=g2\nconnect_timeout=2\n";
  const std::string said = open_in_child("service=gal", {{"PGSERVICEFILE", (dir_ / "svc.conf").string()},
                                                         {"PGPASSFILE", (dir_ / "absent").string()}});
  EXPECT_NE(said.find("cannot connect"), std::string::npos) << said;
}

// ---------------------------------------------------------------------------------------------
// A gallery in a directory its reader cannot write (SQLite's WAL mode wants a -shm file there).

class ReadOnlyDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("taconite-gallery-rodir-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::permissions(dir_, fs::perms(0755));
  }
  void TearDown() override {
    fs::permissions(dir_, fs::perms(0755));
    fs::remove_all(dir_);
  }

  fs::path make(const char* name) {
    auto store = GalleryStore::create(dir_ / name, {std::string(64, 'a'), "m"}, 4);
    EXPECT_TRUE(store.ok()) << (store.ok() ? "" : store.error().message);
    EXPECT_TRUE(store.value().enroll("alice", "", std::vector<NewTemplate>{{{1, 0, 0, 0}, 0.0, "t", 0}}).ok());
    return dir_ / name;
  }

  // Reads the identities of `path` as a user who cannot write dir_: as root (who can write
  // anything) a child process that became `nobody`, else this user with dir_ made read-only.
  // Returns the names read, or the error.
  std::string read_as_reader(const fs::path& path) {
    if (::geteuid() != 0) fs::permissions(dir_, fs::perms(0555));
    int out[2];
    if (::pipe(out) != 0) return "pipe failed";
    const pid_t child = ::fork();
    if (child == 0) {
      ::close(out[0]);
      std::string said;
      if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) said = "could not become nobody";
      if (said.empty() && ::access(dir_.c_str(), W_OK) == 0) said = "the directory is still writable";
      if (said.empty()) {
        auto store = GalleryStore::open(path, GalleryStore::Access::ReadOnly);
        auto identities = store.ok() ? store.value().identities() : Result<std::vector<IdentityRow>>(store.error());
        if (!identities.ok()) said = "ERROR " + identities.error().message;
        for (const IdentityRow& r : identities.ok() ? identities.value() : std::vector<IdentityRow>{}) said += r.name + ";";
      }
      [[maybe_unused]] const ssize_t written = ::write(out[1], said.data(), said.size());
      ::_exit(0);
    }
    ::close(out[1]);
    std::string said;
    char buffer[4096];
    for (ssize_t got; (got = ::read(out[0], buffer, sizeof buffer)) > 0;) said.append(buffer, static_cast<std::size_t>(got));
    ::close(out[0]);
    ::waitpid(child, nullptr, 0);
    fs::permissions(dir_, fs::perms(0755));
    return said;
  }

  fs::path dir_;
};

TEST_F(ReadOnlyDirectoryTest, AGalleryClosedByItsWritersIsRead) {
  const fs::path gallery = make("g.db");
  ASSERT_FALSE(fs::exists(gallery.string() + "-shm"));
  EXPECT_EQ(read_as_reader(gallery), "alice;");
  EXPECT_FALSE(fs::exists(gallery.string() + "-shm"));  // nothing written beside it
}

// While a writer has it open (its -wal and -shm exist), the reader sees the writer's last commit.
TEST_F(ReadOnlyDirectoryTest, AGalleryWithItsWriterOpenIsReadWithTheWritersCommits) {
  const fs::path gallery = make("g.db");
  auto writer = GalleryStore::open(gallery, GalleryStore::Access::ReadWrite);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer.value().enroll("bob", "", std::vector<NewTemplate>{{{0, 1, 0, 0}, 0.0, "t", 0}}).ok());
  ASSERT_TRUE(fs::exists(gallery.string() + "-wal"));
  EXPECT_EQ(read_as_reader(gallery), "alice;bob;");
}

// Writes waiting in a -wal file without its -shm (a writer that crashed): reading without them
// would miss writes, so the error says why instead.
TEST_F(ReadOnlyDirectoryTest, WritesWaitingInAWalFileWithoutItsShmAreAClearError) {
  const fs::path gallery = make("g.db");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(gallery.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA wal_autocheckpoint = 0; UPDATE identities SET name = 'carol'", nullptr, nullptr,
                           nullptr),
              SQLITE_OK);
    // A copy of the database and its -wal while the writer holds them: a crashed writer's files.
    fs::create_directories(dir_ / "crashed");
    fs::copy_file(gallery, dir_ / "crashed/g.db");
    fs::copy_file(gallery.string() + "-wal", dir_ / "crashed/g.db-wal");
    sqlite3_close(db);
  }
  fs::permissions(dir_ / "crashed", fs::perms(0555));
  const std::string said = read_as_reader(dir_ / "crashed/g.db");
  fs::permissions(dir_ / "crashed", fs::perms(0755));
  EXPECT_NE(said.find("ERROR"), std::string::npos) << said;
  EXPECT_NE(said.find("not writable"), std::string::npos) << said;
  EXPECT_NE(said.find("g.db-shm"), std::string::npos) << said;
}

}  // namespace
