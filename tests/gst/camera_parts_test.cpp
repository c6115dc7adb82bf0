// taconitecamera's GStreamer-free parts on their own: the uri rules, the credentials file, the
// supervisor's state machine and backoff (on plain time points), the output mailbox's drop
// policies, order and bounds, and the overload watch's episodes.
#include <glib.h>
#include <glib/gstdio.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "camera_supervisor.hpp"
#include "camera_uri.hpp"
#include "credentials_file.hpp"
#include "output_mailbox.hpp"
#include "overload_watch.hpp"
#include "rate_gate.hpp"

namespace {

using namespace taconite::gst;
using std::chrono::milliseconds;

// Hang guard for calls that must return (or be released) promptly; not a timing assertion.
constexpr auto kHangGuard = std::chrono::seconds(20);

/* ---------------------------------------------------------------------------------------- */
/* uri                                                                                      */

TEST(CameraUri, NamesTheKindOfEachSupportedScheme) {
  struct Case {
    const char* uri;
    CameraSourceKind kind;
    bool live, credentials;
  };
  const Case cases[] = {
      {"rtsp://127.0.0.1:8554/cam", CameraSourceKind::Rtsp, true, true},
      {"RTSPS://camera.local/stream1", CameraSourceKind::Rtsp, true, true},
      {"rtsp://viewer@camera.local/stream1", CameraSourceKind::Rtsp, true, true},  // a user name alone
      {"http://127.0.0.1/mjpeg", CameraSourceKind::Http, true, true},
      {"https://cam.example/live.m3u8", CameraSourceKind::Http, true, true},
      {"v4l2:///dev/video0", CameraSourceKind::V4l2, true, false},
      {"file:///tmp/clip.mp4", CameraSourceKind::File, false, false},
      {"file://localhost/tmp/clip.mp4", CameraSourceKind::File, false, false},
  };
  for (const Case& c : cases) {
    const taconite::Result<CameraUri> uri = parse_camera_uri(c.uri);
    ASSERT_TRUE(uri.ok()) << c.uri << ": " << uri.error().message;
    EXPECT_EQ(uri.value().kind, c.kind) << c.uri;
    EXPECT_EQ(uri.value().live, c.live) << c.uri;
    EXPECT_EQ(uri.value().takes_credentials, c.credentials) << c.uri;
    EXPECT_EQ(uri.value().uri, c.uri);
  }
  EXPECT_EQ(parse_camera_uri("v4l2:///dev/video2").value().device, "/dev/video2");
}

TEST(CameraUri, RefusesWhatCannotNameACameraSayingWhy) {
  struct Case {
    std::string uri;
    const char* says;
  };
  const std::vector<Case> cases = {
      {"", "no uri is set"},
      {"camera.local/stream", "no scheme://"},
      {"ftp://camera.local/x", "scheme 'ftp' is not supported"},
      {"rtsp://camera.local/a b", "whitespace"},
      {"rtsp:///stream", "has no host"},
      {"rtsp://:554/stream", "has no host"},
      {"v4l2:///home/video0", "a device under /dev"},
      {"v4l2://", "has no path"},
      {"file://server/share/clip.mp4", "names a host"},
      {"rtsp://camera.local/" + std::string(kMaxCameraUriBytes, 'a'), "more than 4096"},
  };
  for (const Case& c : cases) {
    const taconite::Result<CameraUri> uri = parse_camera_uri(c.uri);
    ASSERT_FALSE(uri.ok()) << c.uri;
    EXPECT_EQ(uri.error().kind, taconite::ErrorKind::Input);
    EXPECT_NE(uri.error().message.find(c.says), std::string::npos) << c.uri << " -> " << uri.error().message;
  }
}

TEST(CameraUri, RefusesAPasswordWithoutRepeatingIt) {
  const taconite::Result<CameraUri> uri = parse_camera_uri("rtsp://admin:Sup3rSecret@camera.local/stream1");
  ASSERT_FALSE(uri.ok());
  EXPECT_NE(uri.error().message.find("credentials-file"), std::string::npos) << uri.error().message;
  EXPECT_EQ(uri.error().message.find("Sup3rSecret"), std::string::npos) << uri.error().message;
}

/* ---------------------------------------------------------------------------------------- */
/* credentials file                                                                         */

class CredentialsFileTest : public ::testing::Test {
 protected:
  CredentialsFileTest() {
    gchar* dir = g_dir_make_tmp("taconite-camera-credentials-XXXXXX", nullptr);
    dir_ = dir;
    g_free(dir);
  }
  ~CredentialsFileTest() override {
    for (const std::string& file : files_) g_remove(file.c_str());
    g_rmdir(dir_.c_str());
  }
  std::string write(const char* name, const std::string& contents, int mode) {
    const std::string path = dir_ + "/" + name;
    EXPECT_TRUE(g_file_set_contents(path.c_str(), contents.data(), static_cast<gssize>(contents.size()), nullptr));
    EXPECT_EQ(g_chmod(path.c_str(), mode), 0);
    files_.push_back(path);
    return path;
  }

  std::string dir_;
  std::vector<std::string> files_;
};

TEST_F(CredentialsFileTest, ReadsTheUserNameAndPasswordLines) {
  const std::string path = write("ok", "viewer\r\nS3cret:with:colons\n", 0600);
  const taconite::Result<Credentials> c = read_credentials_file(path, CredentialsAccess::OwnerOnly);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c.value().username, "viewer");
  EXPECT_EQ(c.value().password, "S3cret:with:colons");
}

TEST_F(CredentialsFileTest, OwnerOnlyRefusesAFileOthersMayReadOrChangeAndSaysHowToFixIt) {
  for (int mode : {0644, 0602}) {
    const std::string path = write(mode == 0644 ? "readable" : "writable", "viewer\nS3cret\n", mode);
    const taconite::Result<Credentials> c = read_credentials_file(path, CredentialsAccess::OwnerOnly);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.error().kind, taconite::ErrorKind::Input);
    EXPECT_NE(c.error().message.find(path), std::string::npos) << c.error().message;
    EXPECT_NE(c.error().message.find("chmod 600"), std::string::npos) << c.error().message;
    EXPECT_EQ(c.error().message.find("S3cret"), std::string::npos) << c.error().message;
    // The MQTT broker's file keeps its rule: any readable file.
    EXPECT_TRUE(read_credentials_file(path, CredentialsAccess::Any).ok());
  }
}

TEST_F(CredentialsFileTest, AFileWithoutAUserNameOrMissingIsAnErrorNamingIt) {
  const std::string empty_user = write("nouser", "\nS3cret\n", 0600);
  taconite::Result<Credentials> c = read_credentials_file(empty_user, CredentialsAccess::OwnerOnly);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("no user name"), std::string::npos) << c.error().message;
  EXPECT_EQ(c.error().message.find("S3cret"), std::string::npos) << c.error().message;
  c = read_credentials_file(dir_ + "/missing", CredentialsAccess::OwnerOnly);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind, taconite::ErrorKind::Io);
  EXPECT_NE(c.error().message.find("does not exist"), std::string::npos) << c.error().message;
}

/* ---------------------------------------------------------------------------------------- */
/* supervisor                                                                               */

SteadyTime at(double seconds) {
  return SteadyTime{} + std::chrono::duration_cast<SteadyTime::duration>(Seconds(seconds));
}

SupervisorPolicy policy(double timeout = 5.0, double retry = 2.0, unsigned max_retries = 0, bool live = true) {
  SupervisorPolicy p;
  p.timeout = Seconds(timeout);
  p.retry_interval = Seconds(retry);
  p.max_retries = max_retries;
  p.live = live;
  return p;
}

TEST(CameraSupervisor, StartsTheSourceAndStreamsFromTheFirstFrameWithoutSayingBack) {
  CameraSupervisor s(policy());
  EXPECT_EQ(s.state(), CameraState::Stopped);
  SupervisorActions a = s.start(at(0));
  EXPECT_TRUE(a.start_source);
  EXPECT_EQ(s.state(), CameraState::Connecting);
  a = s.frame(at(0.4));
  EXPECT_FALSE(a.back);
  EXPECT_EQ(s.state(), CameraState::Streaming);
  EXPECT_EQ(s.next_deadline(), at(5.4));  // the watchdog counts from the last frame
}

TEST(CameraSupervisor, AnOutageIsOneLostAndOneBackHoweverManyAttemptsItTakes) {
  CameraSupervisor s(policy(5.0, 2.0));
  s.start(at(0));
  s.frame(at(1));
  SupervisorActions a = s.failure(at(1.2), LossCause::Error, "Could not read from resource.");
  EXPECT_TRUE(a.stop_source);
  ASSERT_TRUE(a.lost);
  EXPECT_EQ(a.lost->cause, LossCause::Error);
  EXPECT_EQ(a.lost->message, "Could not read from resource.");
  EXPECT_FALSE(a.start_source);
  EXPECT_EQ(s.state(), CameraState::Retrying);
  EXPECT_EQ(s.last_error(), "Could not read from resource.");

  // The backoff: 0.5 s, 1 s, 2 s, then retry-interval (2 s) for ever; each failed attempt quiet.
  double now = 1.2;
  for (double delay : {0.5, 1.0, 2.0, 2.0}) {
    EXPECT_FALSE(s.tick(at(now + delay - 0.01)).start_source);
    EXPECT_EQ(s.next_deadline(), at(now + delay));
    now += delay;
    a = s.tick(at(now));
    EXPECT_TRUE(a.start_source);
    EXPECT_EQ(s.state(), CameraState::Connecting);
    now += 0.1;
    a = s.failure(at(now), LossCause::Error, "Connection refused");
    EXPECT_TRUE(a.stop_source);
    EXPECT_FALSE(a.lost) << "one lost per outage";
  }
  EXPECT_EQ(s.restarts(), 4u);
  now += 2.0;
  EXPECT_TRUE(s.tick(at(now)).start_source);
  a = s.frame(at(now + 0.3));
  ASSERT_TRUE(a.back);
  EXPECT_NEAR(a.back->count(), now + 0.3 - 1.0, 1e-6);  // from the last frame before to the first after
  EXPECT_EQ(s.state(), CameraState::Streaming);
  EXPECT_EQ(s.restarts(), 5u);
  EXPECT_FALSE(s.frame(at(now + 0.4)).back);
}

TEST(CameraSupervisor, NoFrameForTimeoutIsAStallAndTheEndOfALiveStreamALoss) {
  CameraSupervisor s(policy(3.0, 1.0));
  s.start(at(0));
  EXPECT_FALSE(s.tick(at(2.9)).stop_source);
  SupervisorActions a = s.tick(at(3.0));  // never connected: the watchdog counts from the start
  ASSERT_TRUE(a.lost);
  EXPECT_EQ(a.lost->cause, LossCause::Stall);
  EXPECT_EQ(a.lost->message, "no frame for 3.0 s");
  EXPECT_TRUE(a.stop_source);
  EXPECT_TRUE(s.tick(at(3.5)).start_source);
  s.frame(at(4));
  a = s.failure(at(5), LossCause::Eos, "the source ended its stream");
  ASSERT_TRUE(a.lost);
  EXPECT_EQ(a.lost->cause, LossCause::Eos);
  EXPECT_FALSE(a.end_stream);
  EXPECT_EQ(s.state(), CameraState::Retrying);
}

TEST(CameraSupervisor, ASourceWaitingForDownstreamIsNoStall) {
  CameraSupervisor s(policy(2.0));
  s.start(at(0));
  s.frame(at(0.5));
  s.hold(at(1.0), true);
  EXPECT_EQ(s.next_deadline(), SteadyTime::max());
  EXPECT_FALSE(s.tick(at(60)).stop_source);
  s.hold(at(60), false);
  EXPECT_EQ(s.next_deadline(), at(62));
  EXPECT_FALSE(s.tick(at(61.9)).stop_source);
  EXPECT_TRUE(s.tick(at(62)).lost);
}

TEST(CameraSupervisor, GivesUpAfterMaxRetriesFailedAttemptsInARowAndAFrameResetsTheCount) {
  CameraSupervisor s(policy(5.0, 0.5, 2));
  s.start(at(0));
  double now = 0;
  auto fail = [&] { return s.failure(at(now += 0.1), LossCause::Error, "Not Found"); };
  auto retry = [&] { return s.tick(at(now += 0.5)); };
  EXPECT_FALSE(fail().give_up);
  EXPECT_TRUE(retry().start_source);
  EXPECT_FALSE(fail().give_up);
  EXPECT_TRUE(retry().start_source);
  s.frame(at(now += 0.1));  // back: the count starts again
  EXPECT_FALSE(fail().give_up);
  EXPECT_TRUE(retry().start_source);
  EXPECT_FALSE(fail().give_up);
  EXPECT_TRUE(retry().start_source);
  const SupervisorActions a = fail();
  ASSERT_TRUE(a.give_up);
  EXPECT_EQ(*a.give_up, "Not Found");
  EXPECT_TRUE(a.stop_source);
  EXPECT_EQ(s.state(), CameraState::Failed);
  EXPECT_FALSE(retry().start_source);
  EXPECT_EQ(s.next_deadline(), SteadyTime::max());
}

TEST(CameraSupervisor, ARecordingEndsAtItsEosIsNotRetriedAndHasNoWatchdog) {
  CameraSupervisor ends(policy(1.0, 1.0, 0, false));
  ends.start(at(0));
  EXPECT_EQ(ends.next_deadline(), SteadyTime::max());
  EXPECT_FALSE(ends.tick(at(100)).stop_source);
  ends.frame(at(100));
  SupervisorActions a = ends.failure(at(101), LossCause::Eos, "the source ended its stream");
  EXPECT_TRUE(a.end_stream);
  EXPECT_FALSE(a.lost);
  EXPECT_EQ(ends.state(), CameraState::Ended);

  CameraSupervisor broken(policy(1.0, 1.0, 0, false));
  broken.start(at(0));
  a = broken.failure(at(0.1), LossCause::Error, "Internal data stream error.");
  ASSERT_TRUE(a.give_up);
  EXPECT_FALSE(a.lost);
  EXPECT_EQ(broken.state(), CameraState::Failed);
}

TEST(CameraSupervisor, WhatComesFromASourceAlreadyGoneIsIgnored) {
  CameraSupervisor s(policy());
  s.start(at(0));
  s.frame(at(1));
  s.failure(at(2), LossCause::Error, "first");
  EXPECT_FALSE(s.failure(at(2.1), LossCause::Eos, "second").stop_source);
  EXPECT_FALSE(s.frame(at(2.2)).back);
  EXPECT_EQ(s.state(), CameraState::Retrying);
  EXPECT_EQ(s.last_error(), "first");
}

TEST(CameraSupervisor, TheBackoffDoublesFromHalfASecondUpToTheRetryInterval) {
  const SupervisorPolicy p = policy(5.0, 3.0);
  EXPECT_DOUBLE_EQ(retry_delay(p, 1).count(), 0.5);
  EXPECT_DOUBLE_EQ(retry_delay(p, 2).count(), 1.0);
  EXPECT_DOUBLE_EQ(retry_delay(p, 3).count(), 2.0);
  EXPECT_DOUBLE_EQ(retry_delay(p, 4).count(), 3.0);
  EXPECT_DOUBLE_EQ(retry_delay(p, 4000000000u).count(), 3.0);
  EXPECT_DOUBLE_EQ(retry_delay(policy(5.0, 0.2), 1).count(), 0.2);
}

/* ---------------------------------------------------------------------------------------- */
/* mailbox                                                                                  */

using Mailbox = OutputMailbox<int, std::string>;
using Kind = Mailbox::Item::Kind;

TEST(OutputMailbox, KeepLatestHandsOutTheNewestFrameAndCountsTheOnesReplaced) {
  Mailbox box(true);
  for (int frame = 1; frame <= 3; ++frame) EXPECT_TRUE(box.push_frame(frame, 0));
  const std::optional<Mailbox::Item> item = box.take();
  ASSERT_TRUE(item);
  EXPECT_EQ(item->kind, Kind::FrameItem);
  EXPECT_EQ(item->frame, 3);
  EXPECT_EQ(box.dropped(), 2u);
}

TEST(OutputMailbox, EventsAndTheEndKeepTheirPlaceAndAreNeverReplaced) {
  Mailbox box(true);
  box.push_frame(1, 0);
  box.push_event("lost");
  box.push_frame(2, 0);
  box.push_frame(3, 0);  // replaces 2, not 1: 1 came before the event
  box.push_end();
  std::vector<std::string> order;
  for (int i = 0; i < 4; ++i) {
    const std::optional<Mailbox::Item> item = box.take();
    ASSERT_TRUE(item);
    order.push_back(item->kind == Kind::FrameItem   ? std::to_string(item->frame)
                    : item->kind == Kind::EventItem ? item->event
                                                    : "end");
  }
  EXPECT_EQ(order, (std::vector<std::string>{"1", "lost", "3", "end"}));
  EXPECT_EQ(box.dropped(), 1u);
}

TEST(OutputMailbox, AfterTheEndNothingMoreIsQueued) {
  Mailbox box(false);
  box.push_end();
  EXPECT_FALSE(box.push_frame(1, 0));  // refused, never waits
  box.push_event("late");
  box.push_end();
  std::optional<Mailbox::Item> item = box.take();
  ASSERT_TRUE(item);
  EXPECT_EQ(item->kind, Kind::End);
  auto consumer = std::async(std::launch::async, [&] { return box.take(); });
  EXPECT_EQ(consumer.wait_for(milliseconds(50)), std::future_status::timeout);
  box.set_flushing(true);  // had anything been queued after the end, the consumer would have it
  ASSERT_EQ(consumer.wait_for(kHangGuard), std::future_status::ready);
  EXPECT_FALSE(consumer.get());
}

TEST(OutputMailbox, WithoutDropsTheProducerWaitsUntilItsFrameIsTaken) {
  Mailbox box(false);
  std::promise<void> started_waiting;
  std::vector<bool> waits;
  auto producer = std::async(std::launch::async, [&] {
    return box.push_frame(7, 0, [&](bool waiting) {
      waits.push_back(waiting);
      if (waiting) started_waiting.set_value();
    });
  });
  ASSERT_EQ(started_waiting.get_future().wait_for(kHangGuard), std::future_status::ready);
  const std::optional<Mailbox::Item> item = box.take();
  ASSERT_TRUE(item);
  EXPECT_EQ(item->frame, 7);
  ASSERT_EQ(producer.wait_for(kHangGuard), std::future_status::ready);
  EXPECT_TRUE(producer.get());
  EXPECT_EQ(waits, (std::vector<bool>{true, false}));
  EXPECT_EQ(box.dropped(), 0u);
}

TEST(OutputMailbox, ARetiredProducerStopsWaitingAndItsLaterFramesAreRefused) {
  Mailbox box(false);
  std::promise<void> started_waiting;
  auto producer = std::async(std::launch::async, [&] {
    return box.push_frame(1, 4, [&](bool waiting) {
      if (waiting) started_waiting.set_value();
    });
  });
  ASSERT_EQ(started_waiting.get_future().wait_for(kHangGuard), std::future_status::ready);
  box.retire_before(5);
  ASSERT_EQ(producer.wait_for(kHangGuard), std::future_status::ready);
  EXPECT_FALSE(producer.get());
  EXPECT_FALSE(box.push_frame(2, 4));  // generation 4 is retired: refused, never waits
  const std::optional<Mailbox::Item> item = box.take();  // what it queued stays
  ASSERT_TRUE(item);
  EXPECT_EQ(item->frame, 1);
}

TEST(OutputMailbox, AClosedMailboxHoldsFramesAndWhatQueuesBehindThem) {
  Mailbox box(true);
  box.set_open(false);
  box.push_event("before");
  box.push_frame(1, 0);
  box.push_event("after");
  std::optional<Mailbox::Item> item = box.take();  // an event ahead of the frames goes out
  ASSERT_TRUE(item);
  EXPECT_EQ(item->event, "before");
  auto consumer = std::async(std::launch::async, [&] { return box.take(); });
  EXPECT_EQ(consumer.wait_for(milliseconds(50)), std::future_status::timeout);
  box.set_flushing(true);  // had the consumer taken the frame, it would not return empty
  ASSERT_EQ(consumer.wait_for(kHangGuard), std::future_status::ready);
  EXPECT_FALSE(consumer.get());
  box.set_flushing(false);
  box.set_open(true);
  box.push_frame(2, 0);
  item = box.take();
  ASSERT_TRUE(item);
  EXPECT_EQ(item->frame, 2);  // a flush discarded what waited
}

TEST(OutputMailbox, AtTheBoundTheOldestFrameGoesFirst) {
  Mailbox box(false, 3);
  box.push_event("a");
  std::promise<void> started_waiting;
  std::thread producer([&] {  // waits: drop=none
    box.push_frame(1, 0, [&](bool waiting) {
      if (waiting) started_waiting.set_value();
    });
  });
  ASSERT_EQ(started_waiting.get_future().wait_for(kHangGuard), std::future_status::ready);
  box.push_event("b");
  box.push_event("c");  // full: frame 1 goes (counted) and its producer is let go
  producer.join();
  EXPECT_EQ(box.dropped(), 1u);
  for (const char* expected : {"a", "b", "c"}) {
    const std::optional<Mailbox::Item> item = box.take();
    ASSERT_TRUE(item);
    EXPECT_EQ(item->kind, Kind::EventItem);
    EXPECT_EQ(item->event, expected);
  }
}

TEST(OutputMailbox, FlushingRefusesPushesAndLetsWaitingProducersGo) {
  Mailbox box(false);
  std::promise<void> started_waiting;
  auto producer = std::async(std::launch::async, [&] {
    return box.push_frame(1, 0, [&](bool waiting) {
      if (waiting) started_waiting.set_value();
    });
  });
  ASSERT_EQ(started_waiting.get_future().wait_for(kHangGuard), std::future_status::ready);
  box.set_flushing(true);
  ASSERT_EQ(producer.wait_for(kHangGuard), std::future_status::ready);
  EXPECT_FALSE(producer.get());
  EXPECT_FALSE(box.push_frame(2, 0));
  EXPECT_FALSE(box.take());
}

/* ---------------------------------------------------------------------------------------- */
/* overload                                                                                 */

TEST(OverloadWatch, AnEpisodeIsSaidOnceWithTheRatesAndItsEndWithWhatItCost) {
  OverloadWatch watch(Seconds(5.0));
  std::uint64_t decoded = 0, dropped = 0;
  std::vector<OverloadChange> changes;
  auto second = [&](int s, int new_frames, int new_drops) {
    decoded += new_frames;
    dropped += new_drops;
    if (auto change = watch.sample(at(s), decoded, dropped)) changes.push_back(*change);
  };
  for (int s = 0; s <= 10; ++s) second(s, 25, 0);  // keeping up: nothing said
  EXPECT_TRUE(changes.empty());
  for (int s = 11; s <= 30; ++s) second(s, 25, 18);  // analysing 7 of 25 frames/s
  ASSERT_EQ(changes.size(), 1u) << "one warning per episode";
  EXPECT_TRUE(changes[0].overloaded);
  EXPECT_TRUE(watch.overloaded());
  for (int s = 31; s <= 40; ++s) second(s, 25, 1);  // 4 %: between the thresholds, still overloaded
  EXPECT_EQ(changes.size(), 1u);
  for (int s = 41; s <= 50; ++s) second(s, 25, 0);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_FALSE(changes[1].overloaded);
  EXPECT_DOUBLE_EQ(changes[1].decoded_per_s, 25.0);
  EXPECT_GT(changes[1].lasted.count(), 20.0);
  EXPECT_GE(changes[1].dropped, 18u * 19u);
  // The start's rates: the first full window holding more than 10 % dropped frames.
  EXPECT_DOUBLE_EQ(changes[0].decoded_per_s, 25.0);
  EXPECT_LT(changes[0].analysed_per_s, 25.0 * 0.9);
}

TEST(OverloadWatch, TheFirstFullWindowOfAHeavyLoadGivesItsRates) {
  OverloadWatch watch(Seconds(5.0));
  std::optional<OverloadChange> change;
  for (int s = 0; s <= 5 && !change; ++s)
    change = watch.sample(at(s), static_cast<std::uint64_t>(25 * s), static_cast<std::uint64_t>(18 * s));
  ASSERT_TRUE(change);
  EXPECT_TRUE(change->overloaded);
  EXPECT_DOUBLE_EQ(change->decoded_per_s, 25.0);
  EXPECT_DOUBLE_EQ(change->analysed_per_s, 7.0);
}

TEST(OverloadWatch, NoFramesIsNoOverloadAndRestartedCountsStartAWindowAgain) {
  OverloadWatch watch(Seconds(2.0));
  for (int s = 0; s <= 10; ++s) EXPECT_FALSE(watch.sample(at(s), 100, 50)) << "an outage: nothing decoded";
  watch.reset();
  EXPECT_FALSE(watch.sample(at(11), 0, 0));
  EXPECT_FALSE(watch.sample(at(12), 10, 9)) << "one second is no full window";
  EXPECT_TRUE(watch.sample(at(13), 20, 18));
}

// Which of `times` (ns) the gate lets through, by index.
std::vector<int> admitted(RateGate& gate, const std::vector<std::int64_t>& times) {
  std::vector<int> out;
  for (std::size_t i = 0; i < times.size(); ++i)
    if (gate.admit(times[i])) out.push_back(static_cast<int>(i));
  return out;
}

std::vector<std::int64_t> frames_at(double fps, int count, std::int64_t start_ns = 0) {
  std::vector<std::int64_t> times;
  for (int i = 0; i < count; ++i) times.push_back(start_ns + static_cast<std::int64_t>(i * 1e9 / fps));
  return times;
}

TEST(RateGate, LetsThroughTheRateAskedEvenWhenItDoesNotDivideTheCamerasRate) {
  RateGate seven(7.0);
  const std::vector<int> seven_of_25 = admitted(seven, frames_at(25.0, 250));  // 10 s
  EXPECT_NEAR(static_cast<double>(seven_of_25.size()), 70.0, 1.0);
  for (std::size_t i = 1; i < seven_of_25.size(); ++i) {
    const int step = seven_of_25[i] - seven_of_25[i - 1];
    EXPECT_TRUE(step == 3 || step == 4) << "frames 120-160 ms apart, got " << step << " frames";
  }
  RateGate every(0.0);
  EXPECT_EQ(admitted(every, frames_at(25.0, 50)).size(), 50u) << "0: every frame";
  RateGate above(30.0);
  EXPECT_EQ(admitted(above, frames_at(25.0, 50)).size(), 50u) << "a rate above the camera's: every frame";
}

TEST(RateGate, AFewMillisecondsOfJitterDoNotShiftTheFramesLetThrough) {
  std::vector<std::int64_t> times = frames_at(25.0, 100);
  for (std::size_t i = 0; i < times.size(); ++i) times[i] += (i % 2 ? 4'000'000 : -4'000'000) + 4'000'000;
  RateGate five(5.0);
  const std::vector<int> got = admitted(five, times);
  ASSERT_EQ(got.size(), 20u);
  for (std::size_t k = 0; k < got.size(); ++k) EXPECT_EQ(got[k], static_cast<int>(5 * k)) << "every fifth frame";
}

TEST(RateGate, AfterAPauseANewSourceOrTimesGoingBackTheNextFrameGoesThroughAtOnce) {
  RateGate gate(2.0);
  EXPECT_TRUE(gate.admit(0));
  EXPECT_FALSE(gate.admit(100'000'000));
  EXPECT_TRUE(gate.admit(3'000'000'000)) << "3 s without frames: no catching up, no waiting";
  EXPECT_FALSE(gate.admit(3'200'000'000));
  EXPECT_TRUE(gate.admit(3'500'000'000)) << "half a second after the frame that restarted the schedule";
  gate.reset();
  EXPECT_TRUE(gate.admit(40'000'000)) << "a new source's times start again";
  EXPECT_FALSE(gate.admit(80'000'000));
  EXPECT_TRUE(gate.admit(10'000'000'000));
  EXPECT_TRUE(gate.admit(1'000'000'000)) << "times that went back start the schedule again, skip nothing";
  EXPECT_FALSE(gate.admit(1'040'000'000));
}

TEST(RateGate, ATinyRateWaitsAtMostAnHourAndNeverOverflows) {
  RateGate gate(1e-30);
  EXPECT_TRUE(gate.admit(0));
  EXPECT_FALSE(gate.admit(3'000'000'000'000));  // 50 minutes
  EXPECT_TRUE(gate.admit(3'600'000'000'000));
}

}  // namespace
