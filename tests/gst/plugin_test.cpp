// The built plugin file loads and describes itself the way gst-inspect users expect.
#include <gst/gst.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

class PluginTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    gst_init(nullptr, nullptr);
    GError* error = nullptr;
    plugin = gst_plugin_load_file(std::getenv("TACONITE_PLUGIN"), &error);
    if (error) g_error_free(error);
  }
  static GstPlugin* plugin;
};
GstPlugin* PluginTest::plugin = nullptr;

// The element's own properties (not its parents'), in installation order, after checking that each
// is described: a writable one's blurb states its default, an enum's type is marked plugin API.
std::vector<std::string> own_documented_properties(GstElement* element) {
  guint n = 0;
  GParamSpec** specs = g_object_class_list_properties(G_OBJECT_GET_CLASS(element), &n);
  std::vector<std::string> ours;
  for (guint i = 0; i < n; ++i) {
    if (specs[i]->owner_type != G_OBJECT_TYPE(element)) continue;
    ours.emplace_back(specs[i]->name);
    const std::string blurb = g_param_spec_get_blurb(specs[i]);
    EXPECT_GT(blurb.size(), 20u) << specs[i]->name;
    if (specs[i]->flags & G_PARAM_WRITABLE) {
      EXPECT_NE(blurb.find("Default:"), std::string::npos) << specs[i]->name << " blurb states its default";
    }
    if (G_IS_PARAM_SPEC_ENUM(specs[i])) {
      EXPECT_TRUE(gst_type_is_plugin_api(specs[i]->value_type, nullptr)) << specs[i]->name;
    }
  }
  g_free(specs);
  return ours;
}

// A new instance of `name`, checked to come from this plugin with the klass gst-inspect shows.
GstElement* create_element(const char* name, const char* klass) {
  GstElementFactory* factory = gst_element_factory_find(name);
  EXPECT_NE(factory, nullptr) << "plugin_init registers " << name;
  if (!factory) return nullptr;
  EXPECT_STREQ(gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS), klass);
  GstElement* element = gst_element_factory_create(factory, nullptr);
  gst_object_unref(factory);
  return element;
}

TEST_F(PluginTest, LoadsAndRegistersTheElement) {
  ASSERT_NE(plugin, nullptr) << "TACONITE_PLUGIN=" << std::getenv("TACONITE_PLUGIN");
  EXPECT_STREQ(gst_plugin_get_name(plugin), "taconite");
  GstElementFactory* factory = gst_element_factory_find("taconiteadaface");
  ASSERT_NE(factory, nullptr);
  EXPECT_STREQ(gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS), "Filter/Analyzer/Video");
  gst_object_unref(factory);
}

TEST_F(PluginTest, RegistersTaconitelandmarks) {
  ASSERT_NE(plugin, nullptr);
  GstElement* element = create_element("taconitelandmarks", "Filter/Analyzer/Video");
  ASSERT_NE(element, nullptr);
  EXPECT_EQ(own_documented_properties(element),
            (std::vector<std::string>{"model", "roi-type", "max-faces", "detect", "detect-interval", "detect-scale",
                                      "box-samples", "faces-skipped"}));
  gst_object_unref(element);
}

TEST_F(PluginTest, RegistersTaconitedetectWithDocumentedProperties) {
  ASSERT_NE(plugin, nullptr);
  GstElement* element = create_element("taconitedetect", "Filter/Analyzer/Video");
  ASSERT_NE(element, nullptr);
  EXPECT_EQ(own_documented_properties(element),
            (std::vector<std::string>{"model", "input-width", "input-height", "score-threshold", "nms-threshold",
                                      "min-face-size", "max-faces", "interval", "threads", "runtime",
                                      "active-runtime"}));
  GParamSpec* model = g_object_class_find_property(G_OBJECT_GET_CLASS(element), "model");
  EXPECT_TRUE(model->flags & GST_PARAM_MUTABLE_READY) << "the model loads at READY->PAUSED";
  gst_object_unref(element);
}

TEST_F(PluginTest, PropertiesAreDocumentedAndEngineOnesMutableOnlyInReady) {
  ASSERT_NE(plugin, nullptr);
  GstElement* element = gst_element_factory_make("taconiteadaface", nullptr);
  ASSERT_NE(element, nullptr);
  const int ours = static_cast<int>(own_documented_properties(element).size());
  const std::vector<const char*> expected = {
      "model", "model-proc", "bundle", "backend", "precision", "threads", "sessions", "input-mode", "roi-type", "min-face-size",
      "max-faces", "max-embeddings", "async-tracks", "margin",
      "channel-order", "max-queued", "post-messages", "batch-size", "batch-timeout", "leaky", "interval", "track-id-param",
      "reinfer-interval", "reinfer-growth", "track-best", "track-timeout", "reinfer-mode", "best-margin",
      "best-min-gap", "untracked", "frames-in", "frames-out",
      "faces-embedded", "faces-skipped", "faces-cached", "mean-latency-ms", "latency"};
  EXPECT_EQ(ours, static_cast<int>(expected.size())) << "a new property must be added to this list";
  for (const char* name : expected)
    EXPECT_NE(g_object_class_find_property(G_OBJECT_GET_CLASS(element), name), nullptr) << name;
  for (const char* name : {"bundle", "backend", "precision", "threads", "sessions", "batch-size", "batch-timeout"}) {
    GParamSpec* spec = g_object_class_find_property(G_OBJECT_GET_CLASS(element), name);
    ASSERT_NE(spec, nullptr);
    EXPECT_TRUE(spec->flags & GST_PARAM_MUTABLE_READY) << name;
  }
  for (const char* name : {"frames-in", "frames-out", "faces-embedded", "faces-skipped", "faces-cached", "mean-latency-ms"}) {
    GParamSpec* spec = g_object_class_find_property(G_OBJECT_GET_CLASS(element), name);
    ASSERT_NE(spec, nullptr);
    EXPECT_FALSE(spec->flags & G_PARAM_WRITABLE) << name << " is a read-only counter";
  }
  gst_object_unref(element);
}

TEST_F(PluginTest, RegistersTaconitetrackWithDocumentedProperties) {
  ASSERT_NE(plugin, nullptr);
  GstElement* element = create_element("taconitetrack", "Filter/Analyzer/Video");
  ASSERT_NE(element, nullptr);
  const std::vector<std::string> ours = own_documented_properties(element);
  EXPECT_EQ(ours, (std::vector<std::string>{"roi-type", "iou-threshold", "max-age", "min-hits", "max-rois", "track-threshold",
                                                 "low-threshold", "scene-cut-threshold"}));
  gst_object_unref(element);
}

TEST_F(PluginTest, RegistersTaconitepublishWithDocumentedProperties) {
  ASSERT_NE(plugin, nullptr);
  GstElement* element = create_element("taconitepublish", "Filter/Metadata/Video");
  ASSERT_NE(element, nullptr);
  EXPECT_EQ(own_documented_properties(element),
            (std::vector<std::string>{"method", "location", "stream", "roi-type", "embedding", "publish-empty", "host",
                                      "port", "topic", "client-id", "qos", "credentials", "tls-ca", "tls-cert",
                                      "tls-key", "max-pending", "retry-at-start", "messages", "tracks-topic",
                                      "track-timeout", "max-tracks", "best-face", "best-face-dir",
                                      "best-face-max-files", "best-face-max-bytes", "messages-published",
                                      "messages-dropped", "tracks-evicted", "best-faces-dropped", "strings-repaired"}));
  gst_object_unref(element);
}

TEST_F(PluginTest, RegistersTaconiteidentifyWithDocumentedProperties) {
  ASSERT_NE(plugin, nullptr);
  GstElement* element = create_element("taconiteidentify", "Filter/Analyzer/Video");
  ASSERT_NE(element, nullptr);
  const std::vector<std::string> ours = own_documented_properties(element);
  EXPECT_EQ(ours, (std::vector<std::string>{"gallery", "model", "bundle", "model-proc", "threshold", "top-k",
                                            "vote-window", "min-votes",
                                            "stream", "track-id-param", "track-timeout", "poll-interval",
                                            "approximate-above", "ef-search", "post-messages", "search-budget",
                                            "keep-unknowns", "unknowns-max-count", "unknowns-max-age",
                                            "unknowns-kept", "unknowns-dropped"}));
  // keep-unknowns' retention as documented: 1..100000 faces (gallery::kMaxUnknownFaces), 1 s..100 years.
  GParamSpecUInt* max_count =
      G_PARAM_SPEC_UINT(g_object_class_find_property(G_OBJECT_GET_CLASS(element), "unknowns-max-count"));
  EXPECT_EQ(max_count->minimum, 1u);
  EXPECT_EQ(max_count->maximum, 100000u);
  EXPECT_EQ(max_count->default_value, 10000u);
  GParamSpecUInt64* max_age =
      G_PARAM_SPEC_UINT64(g_object_class_find_property(G_OBJECT_GET_CLASS(element), "unknowns-max-age"));
  EXPECT_EQ(max_age->minimum, 1u);
  EXPECT_EQ(max_age->default_value, 2592000u);
  GParamSpecUInt64* budget =
      G_PARAM_SPEC_UINT64(g_object_class_find_property(G_OBJECT_GET_CLASS(element), "search-budget"));
  EXPECT_EQ(budget->default_value, 2000000u);  // as documented (docs/gstreamer.md)
  GParamSpecUInt* ef = G_PARAM_SPEC_UINT(g_object_class_find_property(G_OBJECT_GET_CLASS(element), "ef-search"));
  EXPECT_EQ(ef->minimum, 1u);
  EXPECT_EQ(ef->maximum, 65536u);  // gallery::kMaxEfSearch, as documented
  EXPECT_EQ(ef->default_value, 128u);
  EXPECT_NE(g_signal_lookup("reload", G_OBJECT_TYPE(element)), 0u) << "the reload action signal";
  gst_object_unref(element);
}

TEST_F(PluginTest, RegistersTaconiteoverlayWithDocumentedProperties) {
  ASSERT_NE(plugin, nullptr);
  GstElement* element = create_element("taconiteoverlay", "Filter/Effect/Video");
  ASSERT_NE(element, nullptr);
  EXPECT_EQ(own_documented_properties(element),
            (std::vector<std::string>{"roi-type", "enabled", "draw-landmarks", "draw-labels", "line-width",
                                      "font-scale", "max-rois"}));
  GParamSpecUInt* line = G_PARAM_SPEC_UINT(g_object_class_find_property(G_OBJECT_GET_CLASS(element), "line-width"));
  EXPECT_EQ(line->maximum, 16u);  // as documented (docs/gstreamer.md)
  GParamSpecUInt* rois = G_PARAM_SPEC_UINT(g_object_class_find_property(G_OBJECT_GET_CLASS(element), "max-rois"));
  EXPECT_EQ(rois->maximum, 256u);
  gst_object_unref(element);
}

}  // namespace
