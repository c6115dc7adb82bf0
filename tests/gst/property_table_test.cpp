// PropertyTable: one declaration gives the spec (range, default, flags), set/get, and the one rule
// for changes while running. Driven through a small test element in a real pipeline.
#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>
#include <gtest/gtest.h>

#include <string>

#include "property_table.hpp"

namespace {

using namespace taconite::gst;

enum class Mode : int { First = 0, Second = 1 };

GType mode_get_type() {
  static gsize type = 0;
  static const GEnumValue values[] = {{0, "First", "first"}, {1, "Second", "second"}, {0, nullptr, nullptr}};
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("TaconiteTestTableMode", values));
  return static_cast<GType>(type);
}

struct Settings {
  std::string name = "initial";
  guint count = 7;
  double ratio = 0.25;
  bool flag = true;
  Mode mode = Mode::Second;
  std::string path;
};

struct TestElement {
  GstBaseTransform parent;
  Settings* settings;
  guint64 reads;  // what the read-only property shows
};
struct TestElementClass {
  GstBaseTransformClass parent_class;
};

G_DEFINE_TYPE(TestElement, test_element, GST_TYPE_BASE_TRANSFORM)

static void declare_properties(PropertyTable<TestElement, Settings>& t) {
  t.string("label", "Label", "any time", &Settings::name, Mutable::AnyTime);
  t.uint("count", "Count", "ready only", 1, 100, &Settings::count, Mutable::ReadyOnly);
  t.real("ratio", "Ratio", "next start", 0.0, 1.0, &Settings::ratio, Mutable::NextStart);
  t.boolean("flag", "Flag", "any time", &Settings::flag, Mutable::AnyTime);
  t.enumeration("mode", "Mode", "any time", mode_get_type, &Settings::mode, Mutable::AnyTime);
  t.optional_string("path", "Path", "unset is NULL", &Settings::path, Mutable::ReadyOnly);
  t.read_only([](GParamFlags flags) { return g_param_spec_uint64("reads", "Reads", "read only", 0, 99, 0, flags); },
              [](TestElement& self, const Settings&, GValue* v) { g_value_set_uint64(v, self.reads); });
}

void test_element_init(TestElement* self) {
  self->settings = new Settings();
  self->reads = 42;
  gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(self), TRUE);
}

void test_element_finalize(GObject* object) {
  delete reinterpret_cast<TestElement*>(object)->settings;
  G_OBJECT_CLASS(test_element_parent_class)->finalize(object);
}

void test_element_class_init(TestElementClass* klass) {
  G_OBJECT_CLASS(klass)->finalize = test_element_finalize;
  PropertyTable<TestElement, Settings>::install(G_OBJECT_CLASS(klass), &TestElement::settings, declare_properties);
  static GstStaticPadTemplate sink = GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
  static GstStaticPadTemplate src = GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS_ANY);
  gst_element_class_add_static_pad_template(GST_ELEMENT_CLASS(klass), &sink);
  gst_element_class_add_static_pad_template(GST_ELEMENT_CLASS(klass), &src);
  gst_element_class_set_static_metadata(GST_ELEMENT_CLASS(klass), "test", "Filter", "PropertyTable test", "tests");
}

GParamSpec* spec(GObject* object, const char* name) {
  return g_object_class_find_property(G_OBJECT_GET_CLASS(object), name);
}

class PropertyTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gst_init(nullptr, nullptr);
    element = GST_ELEMENT(g_object_ref_sink(g_object_new(test_element_get_type(), "name", "table", nullptr)));
  }
  void TearDown() override {
    gst_element_set_state(element, GST_STATE_NULL);
    gst_object_unref(element);
  }
  GstElement* element = nullptr;
};

TEST_F(PropertyTableTest, SpecsCarryTheSettingsDefaultsRangesAndMutability) {
  GObject* object = G_OBJECT(element);
  EXPECT_STREQ(G_PARAM_SPEC_STRING(spec(object, "label"))->default_value, "initial");
  EXPECT_EQ(G_PARAM_SPEC_UINT(spec(object, "count"))->default_value, 7u);
  EXPECT_EQ(G_PARAM_SPEC_UINT(spec(object, "count"))->minimum, 1u);
  EXPECT_EQ(G_PARAM_SPEC_UINT(spec(object, "count"))->maximum, 100u);
  EXPECT_DOUBLE_EQ(G_PARAM_SPEC_DOUBLE(spec(object, "ratio"))->default_value, 0.25);
  EXPECT_TRUE(G_PARAM_SPEC_BOOLEAN(spec(object, "flag"))->default_value);
  EXPECT_EQ(G_PARAM_SPEC_ENUM(spec(object, "mode"))->default_value, 1);
  EXPECT_EQ(G_PARAM_SPEC_STRING(spec(object, "path"))->default_value, nullptr);

  EXPECT_TRUE(spec(object, "label")->flags & GST_PARAM_MUTABLE_PLAYING);
  EXPECT_TRUE(spec(object, "count")->flags & GST_PARAM_MUTABLE_READY);
  EXPECT_TRUE(spec(object, "ratio")->flags & GST_PARAM_MUTABLE_PLAYING);
  EXPECT_FALSE(spec(object, "reads")->flags & G_PARAM_WRITABLE);
}

TEST_F(PropertyTableTest, SetAndGetGoThroughTheSettings) {
  g_object_set(element, "label", "other", "count", 9u, "ratio", 0.5, "flag", FALSE, "mode", 0, "path", "/x", nullptr);
  const Settings& s = *reinterpret_cast<TestElement*>(element)->settings;
  EXPECT_EQ(s.name, "other");
  EXPECT_EQ(s.count, 9u);
  EXPECT_DOUBLE_EQ(s.ratio, 0.5);
  EXPECT_FALSE(s.flag);
  EXPECT_EQ(s.mode, Mode::First);
  EXPECT_EQ(s.path, "/x");

  gchar* name = nullptr;
  guint64 reads = 0;
  g_object_get(element, "label", &name, "reads", &reads, nullptr);
  EXPECT_STREQ(name, "other");
  EXPECT_EQ(reads, 42u);
  g_free(name);
}

TEST_F(PropertyTableTest, NullStringsGoBackToTheDefault) {
  g_object_set(element, "label", "other", "path", "/x", nullptr);
  g_object_set(element, "label", nullptr, "path", nullptr, nullptr);
  gchar* name = nullptr;
  gchar* path = nullptr;
  g_object_get(element, "label", &name, "path", &path, nullptr);
  EXPECT_STREQ(name, "initial");
  EXPECT_EQ(path, nullptr);
  g_free(name);
  g_free(path);
}

TEST_F(PropertyTableTest, WhilePlayingReadyOnlyIsRefusedAndNextStartIsStored) {
  GstElement* pipeline = gst_pipeline_new(nullptr);
  GstElement* source = gst_element_factory_make("fakesrc", nullptr);
  GstElement* sink = gst_element_factory_make("fakesink", nullptr);
  ASSERT_TRUE(source && sink);
  g_object_set(source, "is-live", TRUE, nullptr);
  ASSERT_TRUE(gst_bin_add(GST_BIN(pipeline), element));  // adds its own reference: the fixture keeps its one
  gst_bin_add_many(GST_BIN(pipeline), source, sink, nullptr);
  ASSERT_TRUE(gst_element_link_many(source, element, sink, nullptr));
  ASSERT_NE(gst_element_set_state(pipeline, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  ASSERT_NE(gst_element_get_state(element, nullptr, nullptr, 10 * GST_SECOND), GST_STATE_CHANGE_FAILURE);

  g_object_set(element, "count", 50u, "ratio", 0.75, "label", "live", nullptr);
  const Settings& s = *reinterpret_cast<TestElement*>(element)->settings;
  EXPECT_EQ(s.count, 7u);  // READY only: refused
  EXPECT_DOUBLE_EQ(s.ratio, 0.75);  // next start: stored now
  EXPECT_EQ(s.name, "live");  // any time

  gst_element_set_state(pipeline, GST_STATE_NULL);
  g_object_set(element, "count", 50u, nullptr);
  EXPECT_EQ(s.count, 50u);
  gst_object_unref(pipeline);
}

}  // namespace
