// taconitepublish method=mqtt against a real mosquitto broker on a free loopback port: one message
// per frame with faces, schema-valid, counted; the broker stopped mid-stream and restarted (frames
// keep flowing, messages held during the outage up to max-pending arrive afterwards, the rest are
// counted dropped, one warning per outage); an unreachable broker at start (error, or retried with
// retry-at-start); wrong credentials and bad TLS files (an error, or with retry-at-start a warning
// and more attempts); a broker that never answers (no state change waits for it); NaN and
// infinities in the metadata (standard JSON payloads); track events on their own topic. Each test
// skips when mosquitto is absent.
#include <glib/gstdio.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <future>
#include <set>
#include <thread>

#include "gst_test_support.hpp"
#include "mqtt_broker.hpp"
#include "publish_frames.hpp"

namespace {

using namespace gsttest;

// A temporary directory holding two CAs with a server certificate each ("site", "other"),
// removed with everything in it when the test ends.
class CertificateDir {
 public:
  CertificateDir() {
    gchar* scratch = g_dir_make_tmp("taconite-tls-XXXXXX", nullptr);
    if (!scratch) return;
    path_ = scratch;
    g_free(scratch);
    ok_ = write_test_certificates(path_, "site") && write_test_certificates(path_, "other");
  }
  ~CertificateDir() {
    if (path_.empty()) return;
    if (GDir* d = g_dir_open(path_.c_str(), 0, nullptr)) {
      while (const gchar* name = g_dir_read_name(d)) g_remove((path_ + "/" + name).c_str());
      g_dir_close(d);
    }
    g_rmdir(path_.c_str());
  }
  CertificateDir(const CertificateDir&) = delete;
  CertificateDir& operator=(const CertificateDir&) = delete;
  bool ok() const { return ok_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool ok_ = false;
};

// The texts of the warning and info messages on `bus` (popping discards every other message).
struct Notices {
  std::vector<std::string> warnings, infos;
};
Notices drain_notices(GstBus* bus) {
  Notices notices;
  while (GstMessage* m = gst_bus_pop_filtered(bus, static_cast<GstMessageType>(GST_MESSAGE_WARNING | GST_MESSAGE_INFO))) {
    GError* error = nullptr;
    const bool warning = GST_MESSAGE_TYPE(m) == GST_MESSAGE_WARNING;
    warning ? gst_message_parse_warning(m, &error, nullptr) : gst_message_parse_info(m, &error, nullptr);
    (warning ? notices.warnings : notices.infos).push_back(error->message);
    g_error_free(error);
    gst_message_unref(m);
  }
  return notices;
}

// Waits (hang guard `timeout_s`) until the counter reaches `n`; returns its value.
guint64 wait_counter(GstElement* element, const char* name, guint64 n, int timeout_s) {
  guint64 value = 0;
  for (int i = 0; i < timeout_s * 50 && (value = counter(element, name)) < n; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return value;
}

// Pops warnings (hang guard `timeout_s`) until one holds every one of `parts`; returns it, or ""
// with every warning seen in `seen`.
std::string wait_for_warning(GstBus* bus, const std::vector<std::string>& parts, int timeout_s,
                             std::vector<std::string>* seen) {
  const gint64 end = g_get_monotonic_time() + timeout_s * G_USEC_PER_SEC;
  for (gint64 now; (now = g_get_monotonic_time()) < end;) {
    GstMessage* m = gst_bus_timed_pop_filtered(bus, (end - now) * GST_USECOND, GST_MESSAGE_WARNING);
    if (!m) break;
    GError* error = nullptr;
    gst_message_parse_warning(m, &error, nullptr);
    const std::string text = error->message;
    g_error_free(error);
    gst_message_unref(m);
    seen->push_back(text);
    if (std::all_of(parts.begin(), parts.end(), [&](const std::string& p) { return text.find(p) != std::string::npos; }))
      return text;
  }
  return "";
}

// Runs `work` (a state change) with a hang guard of `timeout_s`: true when it returned in time.
template <typename Work>
bool returns_within(int timeout_s, Work work) {
  auto done = std::async(std::launch::async, work);
  return done.wait_for(std::chrono::seconds(timeout_s)) == std::future_status::ready;
}

// Pushes frames first..first+count-1 (`faces` faces each) and pulls each: frames out == frames in.
void push_frames(GstHarness* h, int first, int count, int faces) {
  for (int i = first; i < first + count; ++i) {
    ASSERT_EQ(gst_harness_push(h, face_frame(i, faces)), GST_FLOW_OK) << "frame " << i;
    GstBuffer* out = gst_harness_pull(h);
    ASSERT_NE(out, nullptr) << "frame " << i;
    gst_buffer_unref(out);
  }
}

std::string write_temp(const std::string& dir, const std::string& name, const std::string& contents) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << contents;
  return path;
}

class PublishMqttTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (mosquitto_program().empty()) GTEST_SKIP() << "mosquitto is not installed (apt-get install mosquitto)";
  }
  void TearDown() override {
    if (bus_) gst_bus_set_flushing(bus_, TRUE);  // queued messages hold the element: drop them
    if (h_) gst_harness_teardown(h_);
    if (bus_) gst_object_unref(bus_);
  }
  void start_harness(const std::vector<std::pair<std::string, std::string>>& properties) {
    bus_ = gst_bus_new();
    h_ = publish_harness(properties, bus_);
    ASSERT_NE(h_, nullptr);
  }
  std::vector<std::pair<std::string, std::string>> mqtt(const MosquittoBroker& broker,
                                                         std::vector<std::pair<std::string, std::string>> extra) {
    extra.insert(extra.begin(), {{"method", "mqtt"}, {"host", "127.0.0.1"}, {"port", std::to_string(broker.port())},
                                 {"topic", "cams/{stream}/faces"}, {"stream", "cam3"}});
    return extra;
  }
  GstHarness* h_ = nullptr;
  GstBus* bus_ = nullptr;
};

TEST_F(PublishMqttTest, OneMessagePerFrameWithFacesCountedAsPublished) {
  MosquittoBroker broker({});
  std::string error;
  ASSERT_TRUE(broker.start(&error)) << error;
  MqttSubscriber subscriber(broker, "cams/#", "cams/probe", "sub-count");
  ASSERT_TRUE(subscriber.ready());
  start_harness(mqtt(broker, {{"qos", "1"}, {"embedding", "base64"}}));
  std::set<gint64> with_faces;
  for (int i = 0; i < 24; ++i) {
    const int faces = i % 4 == 3 ? 0 : 1 + i % 3;
    if (faces) with_faces.insert(i);
    push_frames(h_, i, 1, faces);
  }
  ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_eos()));  // waits for the pending messages
  EXPECT_EQ(wait_counter(h_->element, "messages-published", with_faces.size(), 30), with_faces.size());
  ASSERT_EQ(subscriber.wait_for(with_faces.size(), 30), with_faces.size());
  std::set<gint64> received;
  for (const auto& [topic, payload] : subscriber.messages()) {
    EXPECT_EQ(topic, "cams/cam3/faces");
    JsonNode* node = parse_document(payload);
    ASSERT_NE(node, nullptr);
    JsonObject* doc = json_node_get_object(node);
    const gint64 frame = json_object_get_int_member(doc, "frame");
    received.insert(frame);
    JsonArray* faces = json_object_get_array_member(doc, "faces");
    EXPECT_EQ(json_array_get_length(faces), static_cast<guint>(1 + frame % 3)) << "frame " << frame;
    EXPECT_TRUE(json_object_has_member(json_array_get_object_element(faces, 0), "embedding"));
    json_node_unref(node);
  }
  EXPECT_EQ(received, with_faces);
  EXPECT_EQ(subscriber.messages().size(), counter(h_->element, "messages-published"));
  EXPECT_EQ(counter(h_->element, "messages-dropped"), 0u);
}

// messages=both: the frame documents on `topic`, the track events on `tracks-topic`.
TEST_F(PublishMqttTest, TrackEventsGoToTheirOwnTopic) {
  MosquittoBroker broker({});
  std::string error;
  ASSERT_TRUE(broker.start(&error)) << error;
  MqttSubscriber subscriber(broker, "cams/#", "cams/probe", "sub-tracks");
  ASSERT_TRUE(subscriber.ready());
  start_harness(mqtt(broker, {{"messages", "both"}, {"tracks-topic", "cams/{stream}/tracks"}}));
  push_frames(h_, 0, 3, 1);
  ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_eos()));  // ends the track, waits for the pending messages
  ASSERT_EQ(subscriber.wait_for(5, 30), 5u);
  std::vector<std::string> events;
  std::size_t frames = 0;
  for (const auto& [topic, payload] : subscriber.messages()) {
    if (topic == "cams/cam3/faces") {
      ++frames;
      EXPECT_NE(payload.find("\"schema\":\"taconite-faces/1\""), std::string::npos) << payload;
      continue;
    }
    EXPECT_EQ(topic, "cams/cam3/tracks");
    EXPECT_NE(payload.find("\"schema\":\"taconite-tracks/1\""), std::string::npos) << payload;
    EXPECT_NE(payload.find("\"track_id\":100"), std::string::npos) << payload;
    events.push_back(payload.find("\"event\":\"new\"") != std::string::npos ? "new"
                     : payload.find("\"event\":\"end\"") != std::string::npos ? "end"
                                                                                 : "other");
  }
  EXPECT_EQ(frames, 3u);
  EXPECT_EQ(events, (std::vector<std::string>{"new", "end"}));
  EXPECT_EQ(wait_counter(h_->element, "messages-published", 5, 30), 5u);
}

// Issue 29: stopped without EOS (set to NULL), the open track still ends: its `end` event (reason
// "stopped") reaches the broker before the connection closes.
TEST_F(PublishMqttTest, AStopWithoutEosSendsTheEndOfEveryOpenTrack) {
  MosquittoBroker broker({});
  std::string error;
  ASSERT_TRUE(broker.start(&error)) << error;
  MqttSubscriber subscriber(broker, "cams/#", "cams/probe", "sub-stop");
  ASSERT_TRUE(subscriber.ready());
  start_harness(mqtt(broker, {{"messages", "tracks"}, {"tracks-topic", "cams/{stream}/tracks"}}));
  push_frames(h_, 0, 3, 2);
  ASSERT_EQ(subscriber.wait_for(2, 30), 2u) << "the two new events";
  ASSERT_EQ(gst_element_set_state(h_->element, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  ASSERT_EQ(subscriber.wait_for(4, 30), 4u);
  int stopped = 0;
  for (const auto& [topic, payload] : subscriber.messages())
    stopped += payload.find("\"event\":\"end\"") != std::string::npos &&
               payload.find("\"reason\":\"stopped\"") != std::string::npos;
  EXPECT_EQ(stopped, 2) << "both tracks ended";
}

TEST_F(PublishMqttTest, BrokerRestartDeliversHeldMessagesUpToMaxPendingAndCountsTheRest) {
  MosquittoBroker broker({.persistence = true, .user = "", .password = "", .tls_ca = "", .tls_cert = "", .tls_key = ""});
  std::string error;
  ASSERT_TRUE(broker.start(&error)) << error;
  MqttSubscriber subscriber(broker, "cams/#", "cams/probe", "sub-restart");
  ASSERT_TRUE(subscriber.ready());
  start_harness(mqtt(broker, {{"qos", "1"}, {"max-pending", "20"}, {"client-id", "publisher-restart"}}));

  push_frames(h_, 0, 15, 1);  // fewer than max-pending: none dropped
  ASSERT_EQ(wait_counter(h_->element, "messages-published", 15, 30), 15u);
  EXPECT_EQ(counter(h_->element, "messages-dropped"), 0u);

  broker.stop();
  GstMessage* warning = gst_bus_timed_pop_filtered(bus_, 30 * GST_SECOND, GST_MESSAGE_WARNING);  // hang guard
  ASSERT_NE(warning, nullptr) << "no warning for the lost connection";
  gst_message_unref(warning);
  // The outage: frames flow on (each push returns), 20 of the 50 documents are held.
  push_frames(h_, 15, 50, 1);
  EXPECT_EQ(counter(h_->element, "messages-published"), 15u);
  EXPECT_EQ(counter(h_->element, "messages-dropped"), 30u);

  ASSERT_TRUE(broker.start(&error)) << error;
  EXPECT_EQ(wait_counter(h_->element, "messages-published", 35, 60), 35u);  // backoff: up to 16 s per try
  ASSERT_TRUE(gst_harness_push_event(h_, gst_event_new_eos()));
  EXPECT_EQ(counter(h_->element, "messages-dropped"), 30u);

  std::set<gint64> expected;
  for (gint64 f = 0; f < 15; ++f) expected.insert(f);
  for (gint64 f = 45; f < 65; ++f) expected.insert(f);  // the newest 20 of the outage
  std::set<gint64> received;
  for (int i = 0; i < 1500 && received.size() < expected.size(); ++i) {  // hang guard: 30 s
    received.clear();
    for (const auto& [topic, payload] : subscriber.messages()) {
      JsonNode* node = parse_document(payload);
      ASSERT_NE(node, nullptr);
      received.insert(json_object_get_int_member(json_node_get_object(node), "frame"));  // QoS 1: maybe twice
      json_node_unref(node);
    }
    if (received.size() < expected.size()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(received, expected);
  const Notices notices = drain_notices(bus_);
  EXPECT_TRUE(notices.warnings.empty()) << "one warning per outage";
  ASSERT_EQ(notices.infos.size(), 1u);
  EXPECT_NE(notices.infos[0].find("30 messages dropped during the outage"), std::string::npos) << notices.infos[0];
}

TEST_F(PublishMqttTest, UnreachableBrokerAtStartIsAnErrorUnlessRetried) {
  MosquittoBroker broker({});  // not started yet: its port refuses connections
  GstElement* element = gst_element_factory_make("taconitepublish", nullptr);
  for (const auto& [name, value] : mqtt(broker, {})) gst_util_set_object_arg(G_OBJECT(element), name.c_str(), value.c_str());
  const StartFailure failure = start_paused(element);
  EXPECT_EQ(failure.state_change, GST_STATE_CHANGE_FAILURE);
  EXPECT_NE(failure.message.find("cannot connect to the MQTT broker 127.0.0.1:" + std::to_string(broker.port())),
            std::string::npos)
      << failure.message;
  EXPECT_NE(failure.message.find("Connection refused"), std::string::npos) << failure.message;

  start_harness(mqtt(broker, {{"retry-at-start", "true"}, {"max-pending", "100"}}));
  push_frames(h_, 0, 5, 1);
  std::string error;
  ASSERT_TRUE(broker.start(&error)) << error;
  EXPECT_EQ(wait_counter(h_->element, "messages-published", 5, 60), 5u);
  const Notices notices = drain_notices(bus_);
  ASSERT_EQ(notices.warnings.size(), 1u);
  EXPECT_NE(notices.warnings[0].find("cannot connect to the MQTT broker 127.0.0.1:" + std::to_string(broker.port()) +
                                    " at start (Connection refused); retrying"),
            std::string::npos)
      << notices.warnings[0];
}

TEST_F(PublishMqttTest, WrongCredentialsAreAClearErrorAndRightOnesConnect) {
  MosquittoBroker broker(
      {.persistence = false, .user = "camera", .password = "s3cret", .tls_ca = "", .tls_cert = "", .tls_key = ""});
  std::string error;
  ASSERT_TRUE(broker.start(&error)) << error;
  const std::string wrong = write_temp(broker.dir(), "wrong", "camera\nguess\n");
  const std::string right = write_temp(broker.dir(), "right", "camera\ns3cret\n");

  GstElement* element = gst_element_factory_make("taconitepublish", nullptr);
  for (const auto& [name, value] : mqtt(broker, {{"credentials", wrong}}))
    gst_util_set_object_arg(G_OBJECT(element), name.c_str(), value.c_str());
  const StartFailure failure = start_paused(element);
  EXPECT_EQ(failure.state_change, GST_STATE_CHANGE_FAILURE);
  EXPECT_NE(failure.message.find("refused the connection"), std::string::npos) << failure.message;
  EXPECT_NE(failure.message.find("not authorised"), std::string::npos) << failure.message;
  EXPECT_NE(failure.message.find("credentials file"), std::string::npos) << failure.message;

  start_harness(mqtt(broker, {{"credentials", right}}));
  push_frames(h_, 0, 3, 1);
  EXPECT_EQ(wait_counter(h_->element, "messages-published", 3, 30), 3u);
}

// Hostile input: NaN and infinities in the metadata still give payloads a strict parser accepts.
TEST_F(PublishMqttTest, NonFiniteNumbersArriveAsNullInThePayload) {
  MosquittoBroker broker({});
  std::string error;
  ASSERT_TRUE(broker.start(&error)) << error;
  MqttSubscriber subscriber(broker, "cams/#", "cams/probe", "sub-nonfinite");
  ASSERT_TRUE(subscriber.ready());
  start_harness(mqtt(broker, {{"embedding", "array"}}));
  ASSERT_EQ(gst_harness_push(h_, non_finite_face_frame(0)), GST_FLOW_OK);
  gst_buffer_unref(gst_harness_pull(h_));
  ASSERT_EQ(subscriber.wait_for(1, 30), 1u);
  const auto [topic, payload] = subscriber.messages()[0];
  EXPECT_EQ(strict_json_problem({payload}), "");
  JsonNode* node = parse_document(payload);
  ASSERT_NE(node, nullptr);
  expect_non_finite_values_null(json_node_get_object(node));
  json_node_unref(node);
}

// retry-at-start=true and a wrong password: a warning naming the refusal (not silence), and the
// element keeps trying: once the broker accepts that password, the documents go out.
TEST_F(PublishMqttTest, ARefusalWithRetryAtStartIsAWarningAndRetried) {
  MosquittoBroker strict(
      {.persistence = false, .user = "camera", .password = "s3cret", .tls_ca = "", .tls_cert = "", .tls_key = ""});
  std::string error;
  ASSERT_TRUE(strict.start(&error)) << error;
  const std::string guess = write_temp(strict.dir(), "guess", "camera\nguess\n");
  start_harness(mqtt(strict, {{"credentials", guess}, {"retry-at-start", "true"}}));
  push_frames(h_, 0, 3, 1);
  std::vector<std::string> seen;
  const std::string warning = wait_for_warning(bus_, {"refused the connection", "not authorised"}, 60, &seen);
  EXPECT_NE(warning, "") << "warnings: " << ::testing::PrintToString(seen);
  EXPECT_NE(warning.find("credentials file"), std::string::npos) << warning;
  EXPECT_EQ(counter(h_->element, "messages-published"), 0u);

  strict.stop();  // the same port, now a broker that takes the guess
  MosquittoBroker lenient({.persistence = false, .user = "camera", .password = "guess", .tls_ca = "", .tls_cert = "",
                           .tls_key = "", .port = strict.port()});
  ASSERT_TRUE(lenient.start(&error)) << error;
  EXPECT_EQ(wait_counter(h_->element, "messages-published", 3, 60), 3u);  // backoff: up to 16 s per try
}

// retry-at-start=true and a broker certificate tls-ca did not sign: a warning with OpenSSL's
// reason, and the element keeps trying like in any outage (libmosquitto's own loop gives up on a
// TLS error): once a broker with a certificate that CA signed listens there, the documents go out.
TEST_F(PublishMqttTest, AnUntrustedCertificateWithRetryAtStartIsAWarningAndRetried) {
  const CertificateDir certificates;
  if (!certificates.ok()) GTEST_SKIP() << "openssl could not write test certificates (apt-get install openssl)";
  const std::string& dir = certificates.path();
  {
    MosquittoBroker site({.persistence = false, .user = "", .password = "", .tls_ca = dir + "/site-ca.pem",
                          .tls_cert = dir + "/site-server.pem", .tls_key = dir + "/site-server.key"});
    std::string error;
    ASSERT_TRUE(site.start(&error)) << error;
    start_harness(mqtt(site, {{"tls-ca", dir + "/other-ca.pem"}, {"retry-at-start", "true"}}));
    push_frames(h_, 0, 3, 1);
    std::vector<std::string> seen;
    const std::string warning = wait_for_warning(bus_, {"certificate verify failed"}, 60, &seen);
    EXPECT_NE(warning, "") << "warnings: " << ::testing::PrintToString(seen);

    site.stop();
    MosquittoBroker other({.persistence = false, .user = "", .password = "", .tls_ca = dir + "/other-ca.pem",
                           .tls_cert = dir + "/other-server.pem", .tls_key = dir + "/other-server.key",
                           .port = site.port()});
    ASSERT_TRUE(other.start(&error)) << error;
    EXPECT_EQ(wait_counter(h_->element, "messages-published", 3, 60), 3u);
    gst_bus_set_flushing(bus_, TRUE);
    gst_harness_teardown(h_);
    h_ = nullptr;
  }
}

// A broker that never answers (its connects stay pending): with retry-at-start=true the start
// does not wait for it, and each attempt is given up after connect_timeout (a warning); without,
// the start fails within that bound. No timing is asserted: the limits are hang guards.
TEST_F(PublishMqttTest, ABrokerThatNeverAnswersHoldsNoStateChange) {
  BlackholeListener hole;
  ASSERT_TRUE(hole.ready());
  const std::vector<std::pair<std::string, std::string>> properties = {
      {"method", "mqtt"}, {"host", "127.0.0.1"}, {"port", std::to_string(hole.port())}};
  GstElement* element = gst_element_factory_make("taconitepublish", nullptr);
  for (const auto& [name, value] : properties) gst_util_set_object_arg(G_OBJECT(element), name.c_str(), value.c_str());
  StartFailure failure;
  ASSERT_TRUE(returns_within(120, [&] { failure = start_paused(element); }));
  EXPECT_EQ(failure.state_change, GST_STATE_CHANGE_FAILURE);
  EXPECT_NE(failure.message.find("no answer within 10000 ms"), std::string::npos) << failure.message;

  auto retrying = properties;
  retrying.emplace_back("retry-at-start", "true");
  ASSERT_TRUE(returns_within(120, [&] { start_harness(retrying); }));
  push_frames(h_, 0, 2, 1);
  std::vector<std::string> seen;
  EXPECT_NE(wait_for_warning(bus_, {"at start", "no answer within 10000 ms"}, 60, &seen), "")
      << "warnings: " << ::testing::PrintToString(seen);
  EXPECT_TRUE(returns_within(120, [&] { gst_element_set_state(h_->element, GST_STATE_NULL); }));
  EXPECT_EQ(counter(h_->element, "messages-dropped"), 2u);
}

// Stopping while a reconnection attempt is pending (the broker's host stopped answering) does not
// wait for that attempt: libmosquitto's own blocking connect would hold it for the kernel's ~2
// minutes of SYN retries.
TEST_F(PublishMqttTest, StopDuringAPendingReconnectionDoesNotWaitForIt) {
  MosquittoBroker broker({});
  std::string error;
  ASSERT_TRUE(broker.start(&error)) << error;
  start_harness(mqtt(broker, {}));
  push_frames(h_, 0, 1, 1);
  ASSERT_EQ(wait_counter(h_->element, "messages-published", 1, 30), 1u);
  broker.stop();
  BlackholeListener hole(broker.port());
  ASSERT_TRUE(hole.ready());
  bool pending = false;
  for (int i = 0; i < 3000 && !(pending = connect_attempt_pending(broker.port())); ++i)  // hang guard: 60 s
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(pending) << "the element never tried to reconnect";
  EXPECT_TRUE(returns_within(60, [&] { gst_element_set_state(h_->element, GST_STATE_NULL); }))
      << "stop waited for a pending connection attempt";
}

TEST_F(PublishMqttTest, BadTlsFilesAreAClearError) {
  MosquittoBroker broker({});
  std::string error;
  ASSERT_TRUE(broker.start(&error)) << error;
  const std::string not_pem = write_temp(broker.dir(), "ca.pem", "this is not a certificate\n");
  GstElement* element = gst_element_factory_make("taconitepublish", nullptr);
  for (const auto& [name, value] : mqtt(broker, {{"tls-ca", not_pem}}))
    gst_util_set_object_arg(G_OBJECT(element), name.c_str(), value.c_str());
  const StartFailure failure = start_paused(element);
  EXPECT_EQ(failure.state_change, GST_STATE_CHANGE_FAILURE);
  EXPECT_NE(failure.message.find("cannot connect to the MQTT broker"), std::string::npos) << failure.message;
  EXPECT_NE(failure.message.find("TLS"), std::string::npos) << failure.message;
}

// A TLS listener: the CA that signed the broker's certificate connects; another CA, or a client
// key that does not belong to the client certificate, fails the start with OpenSSL's reason.
TEST_F(PublishMqttTest, TlsConnectsWithTheRightCaAndNamesWhatIsWrongOtherwise) {
  const CertificateDir certificates;
  if (!certificates.ok()) GTEST_SKIP() << "openssl could not write test certificates (apt-get install openssl)";
  const std::string& dir = certificates.path();
  {
    MosquittoBroker broker({.persistence = false, .user = "", .password = "", .tls_ca = dir + "/site-ca.pem",
                            .tls_cert = dir + "/site-server.pem", .tls_key = dir + "/site-server.key"});
    std::string error;
    ASSERT_TRUE(broker.start(&error)) << error;

    const auto start_error = [&](std::vector<std::pair<std::string, std::string>> tls) {
      GstElement* element = gst_element_factory_make("taconitepublish", nullptr);
      for (const auto& [name, value] : mqtt(broker, std::move(tls)))
        gst_util_set_object_arg(G_OBJECT(element), name.c_str(), value.c_str());
      const StartFailure failure = start_paused(element);
      EXPECT_EQ(failure.state_change, GST_STATE_CHANGE_FAILURE);
      return failure.message;
    };
    std::string message = start_error({{"tls-ca", dir + "/other-ca.pem"}});
    EXPECT_NE(message.find("certificate verify failed"), std::string::npos) << message;
    message = start_error(
        {{"tls-ca", dir + "/site-ca.pem"}, {"tls-cert", dir + "/site-server.pem"}, {"tls-key", dir + "/other-ca.key"}});
    EXPECT_NE(message.find("key values mismatch"), std::string::npos) << message;

    start_harness(mqtt(broker, {{"tls-ca", dir + "/site-ca.pem"}}));
    push_frames(h_, 0, 3, 1);
    EXPECT_EQ(wait_counter(h_->element, "messages-published", 3, 30), 3u);
    gst_bus_set_flushing(bus_, TRUE);
    gst_harness_teardown(h_);
    h_ = nullptr;
  }
}

}  // namespace
