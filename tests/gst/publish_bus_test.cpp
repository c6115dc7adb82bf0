// taconitepublish method=bus through GstHarness: each document is one taconite-publish element
// message (kind, stream, document) holding the JSON text method=file writes for the same frames;
// the end events of a stop without EOS are posted before the stop returns; without a bus the
// documents are counted dropped.
#include <glib/gstdio.h>

#include <string>
#include <utility>
#include <vector>

#include "gst_test_support.hpp"
#include "gsttaconitepublish.h"
#include "publish_frames.hpp"

namespace {

using namespace gsttest;

struct Posted {
  std::string kind, stream, document;
};

std::vector<Posted> pop_documents(GstBus* bus) {
  std::vector<Posted> posted;
  while (GstMessage* message = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT)) {
    const GstStructure* s = gst_message_get_structure(message);
    if (gst_structure_has_name(s, GST_TACONITE_PUBLISH_MESSAGE_NAME)) {
      const char* kind = gst_structure_get_string(s, "kind");
      const char* stream = gst_structure_get_string(s, "stream");
      const char* document = gst_structure_get_string(s, "document");
      EXPECT_TRUE(kind && stream && document);
      if (kind && stream && document) posted.push_back({kind, stream, document});
    }
    gst_message_unref(message);
  }
  return posted;
}

// The document without its wall-clock members (which differ between two runs).
std::string without_clock(const std::string& document) {
  JsonNode* node = json_from_string(document.c_str(), nullptr);
  EXPECT_NE(node, nullptr) << document;
  if (!node) return "";
  JsonObject* object = json_node_get_object(node);
  for (const char* member : {"utc", "first_utc", "last_utc", "epoch_s", "first_epoch_s", "last_epoch_s", "uid"})
    json_object_remove_member(object, member);
  gchar* text = json_to_string(node, FALSE);
  std::string result = text;
  g_free(text);
  json_node_unref(node);
  return result;
}

// Drops what the bus still holds: the state changes of the teardown are messages holding the element,
// which holds the bus (a cycle that leaks both otherwise).
void release_bus_messages(GstBus* bus) { gst_bus_set_flushing(bus, TRUE); }

// Pushes frames with {2, 0, 1} faces through `h` and sends EOS.
void push_frames(GstHarness* h) {
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(gst_harness_push(h, face_frame(i, i == 0 ? 2 : i == 1 ? 0 : 1)), GST_FLOW_OK);
    gst_buffer_unref(gst_harness_pull(h));
  }
}

TEST(PublishBusTest, EachDocumentIsAnElementMessageWithTheFileMethodsText) {
  GstBus* bus = gst_bus_new();
  GstHarness* h = publish_harness({{"method", "bus"}, {"messages", "both"}, {"stream", "door"}}, bus);
  ASSERT_NE(h, nullptr);
  push_frames(h);
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_eos()));
  const std::vector<Posted> posted = pop_documents(bus);
  EXPECT_EQ(counter(h->element, "messages-published"), posted.size());
  EXPECT_EQ(counter(h->element, "messages-dropped"), 0u);
  gst_harness_teardown(h);
  release_bus_messages(bus);

  // The same frames with method=file.
  gchar* dir = g_dir_make_tmp("taconite-publish-bus-XXXXXX", nullptr);
  ASSERT_NE(dir, nullptr);
  const std::string path = std::string(dir) + "/faces.jsonl";
  GstHarness* file = publish_harness({{"method", "file"}, {"messages", "both"}, {"stream", "door"},
                                      {"location", path}});
  ASSERT_NE(file, nullptr);
  push_frames(file);
  ASSERT_TRUE(gst_harness_push_event(file, gst_event_new_eos()));
  gst_harness_teardown(file);
  const std::vector<std::string> lines = file_lines(path);
  g_remove(path.c_str());
  g_rmdir(dir);
  g_free(dir);

  ASSERT_EQ(posted.size(), lines.size());
  std::size_t faces = 0, tracks = 0;
  for (std::size_t i = 0; i < posted.size(); ++i) {
    EXPECT_EQ(posted[i].stream, "door");
    const bool is_tracks = posted[i].document.find("\"schema\":\"taconite-tracks/1\"") != std::string::npos;
    EXPECT_EQ(posted[i].kind, is_tracks ? "tracks" : "faces") << posted[i].document;
    (is_tracks ? tracks : faces) += 1;
    EXPECT_EQ(posted[i].document.find('\n'), std::string::npos);
    EXPECT_EQ(without_clock(posted[i].document), without_clock(lines[i])) << "document " << i;
  }
  EXPECT_EQ(faces, 2u) << "frames with faces";
  EXPECT_EQ(tracks, 4u) << "two tracks: a new each, an end each at EOS";
  EXPECT_EQ(strict_json_problem(lines), "");
  gst_object_unref(bus);
}

TEST(PublishBusTest, AStopWithoutEosPostsTheEndEventsBeforeItReturns) {
  GstBus* bus = gst_bus_new();
  GstHarness* h = publish_harness({{"method", "bus"}, {"messages", "tracks"}, {"stream", "door"}}, bus);
  ASSERT_NE(h, nullptr);
  ASSERT_EQ(gst_harness_push(h, face_frame(0, 2)), GST_FLOW_OK);
  gst_buffer_unref(gst_harness_pull(h));
  EXPECT_EQ(pop_documents(bus).size(), 2u) << "two new events";
  ASSERT_EQ(gst_element_set_state(h->element, GST_STATE_NULL), GST_STATE_CHANGE_SUCCESS);
  const std::vector<Posted> ends = pop_documents(bus);
  ASSERT_EQ(ends.size(), 2u);
  for (const Posted& end : ends) {
    EXPECT_EQ(end.kind, "tracks");
    EXPECT_NE(end.document.find("\"event\":\"end\""), std::string::npos) << end.document;
    EXPECT_NE(end.document.find("\"reason\":\"stopped\""), std::string::npos) << end.document;
  }
  gst_harness_teardown(h);
  release_bus_messages(bus);
  gst_object_unref(bus);
}

TEST(PublishBusTest, WithoutABusTheDocumentsAreCountedDropped) {
  GstHarness* h = publish_harness({{"method", "bus"}, {"stream", "door"}});
  ASSERT_NE(h, nullptr);
  ASSERT_EQ(gst_harness_push(h, face_frame(0, 1)), GST_FLOW_OK);
  gst_buffer_unref(gst_harness_pull(h));
  EXPECT_EQ(counter(h->element, "messages-published"), 0u);
  EXPECT_EQ(counter(h->element, "messages-dropped"), 1u);
  gst_harness_teardown(h);
}

}  // namespace
