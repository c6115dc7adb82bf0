// The one JSON writer (json/json_write.hpp) and the UTF-8 mending under it: numbers over the whole
// double range in round-trip shortest form, strings escaped per RFC 8259 with every class of
// ill-formed UTF-8 replaced by U+FFFD, repairs counted and located.
#include <gtest/gtest.h>
#include <json-glib/json-glib.h>

#include <bit>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "json_parse.hpp"
#include "json_write.hpp"
#include "utf8_repair.hpp"

namespace {

using taconite::json::JsonNodePtr;
using taconite::json::Repairs;
using taconite::json::write_json;

const std::string kFffd = "\xEF\xBF\xBD";

JsonNodePtr number_node(double value) {
  JsonNodePtr node(json_node_new(JSON_NODE_VALUE));
  json_node_set_double(node.get(), value);
  return node;
}

JsonNodePtr string_node(const std::string& value) {
  JsonNodePtr node(json_node_new(JSON_NODE_VALUE));
  json_node_set_string(node.get(), value.c_str());
  return node;
}

std::string number_text(double value) { return write_json(number_node(value).get()); }

// RFC 8259's number grammar, exactly.
bool strict_json_number(const std::string& text) {
  static const std::regex grammar(R"(-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)");
  return std::regex_match(text, grammar);
}

bool valid_utf8(const std::string& text) {
  return g_utf8_validate(text.data(), static_cast<gssize>(text.size()), nullptr);
}

TEST(JsonWrite, NumbersAreTheShortestTextThatReadsBackAsTheSameDouble) {
  const std::pair<double, const char*> expected[] = {
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {1.0, "1.0"},
      {-123.0, "-123.0"},
      {5e-324, "5e-324"},
      {1e-300, "1e-300"},
      {1e-7, "1e-07"},
      {0.1, "0.1"},
      {1.0 / 3.0, "0.3333333333333333"},
      {192.67, "192.67"},
      {0.83, "0.83"},
      {1e16, "1e+16"},
      {1e17, "1e+17"},  // json-glib 1.6: 1e+17.0
      {1e20, "1e+20"},
      {1e308, "1e+308"},
      {DBL_MAX, "1.7976931348623157e+308"},
      {-DBL_MAX, "-1.7976931348623157e+308"},
      {DBL_MIN, "2.2250738585072014e-308"},
      {123456789012345680.0, "123456789012345680.0"},  // fixed when shorter than 1.2345678901234568e+17
  };
  for (const auto& [value, text] : expected) {
    const std::string written = number_text(value);
    EXPECT_EQ(written, text) << value;
    EXPECT_TRUE(strict_json_number(written)) << written;
    double back = 0.0;
    std::from_chars(written.data(), written.data() + written.size(), back);
    EXPECT_EQ(std::bit_cast<std::uint64_t>(back), std::bit_cast<std::uint64_t>(value)) << written;
  }
}

TEST(JsonWrite, NonFiniteNumbersAreNull) {
  for (double value : {std::nan(""), -std::nan(""), HUGE_VAL, -HUGE_VAL}) EXPECT_EQ(number_text(value), "null");
}

TEST(JsonWrite, IntegersAreIntegers) {
  for (const auto& [value, text] : {std::pair<gint64, const char*>{0, "0"}, {-1, "-1"},
                                    {G_MAXINT64, "9223372036854775807"}, {G_MININT64, "-9223372036854775808"}}) {
    JsonNodePtr node(json_node_new(JSON_NODE_VALUE));
    json_node_set_int(node.get(), value);
    EXPECT_EQ(write_json(node.get()), text);
  }
}

TEST(JsonWrite, RandomDoublesOfEveryMagnitudeRoundTripExactly) {
  std::mt19937_64 bits(20261201);
  JsonNodePtr array(json_node_new(JSON_NODE_ARRAY));
  json_node_take_array(array.get(), json_array_new());
  std::vector<double> values;
  while (values.size() < 200000) {
    const double value = std::bit_cast<double>(bits());  // uniform over the bit patterns: every exponent
    if (!std::isfinite(value)) continue;
    values.push_back(value);
    json_array_add_double_element(json_node_get_array(array.get()), value);
  }
  const std::string text = write_json(array.get());
  ASSERT_EQ(text.front(), '[');
  ASSERT_EQ(text.back(), ']');
  std::size_t at = 1;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::size_t end = text.find_first_of(",]", at);
    const std::string token = text.substr(at, end - at);
    ASSERT_TRUE(strict_json_number(token)) << token;
    double back = 0.0;
    const std::from_chars_result read = std::from_chars(token.data(), token.data() + token.size(), back);
    ASSERT_EQ(read.ptr, token.data() + token.size()) << token;
    ASSERT_EQ(std::bit_cast<std::uint64_t>(back), std::bit_cast<std::uint64_t>(values[i])) << token;
    at = end + 1;
  }
  EXPECT_EQ(at, text.size());
}

TEST(JsonWrite, StringsAreEscapedPerRfc8259) {
  std::string all_controls;
  for (int c = 1; c < 0x20; ++c) all_controls += static_cast<char>(c);
  EXPECT_EQ(write_json(string_node(all_controls).get()),
            "\"\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f"
            "\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c"
            "\\u001d\\u001e\\u001f\"");
  EXPECT_EQ(write_json(string_node("a \"quoted\" \\ path/ \x7f").get()), "\"a \\\"quoted\\\" \\\\ path/ \x7f\"");
  // Well-formed characters of every length pass as they are, up to U+10FFFF.
  const std::string well_formed = "\x24 \xC2\xA2 \xE2\x82\xAC \xED\x9F\xBF \xEE\x80\x80 \xF0\x90\x8D\x88 \xF4\x8F\xBF\xBF";
  Repairs repairs;
  EXPECT_EQ(write_json(string_node(well_formed).get(), &repairs), "\"" + well_formed + "\"");
  EXPECT_EQ(repairs.strings, 0u);
}

TEST(JsonWrite, EveryClassOfIllFormedUtf8BecomesOneReplacementPerMaximalSubpart) {
  const std::pair<std::string, std::string> cases[] = {
      {"\x80", kFffd},                                  // lone continuation bytes
      {"a\xBF" "b", "a" + kFffd + "b"},
      {"\x80\x80", kFffd + kFffd},
      {"\xC3", kFffd},                                  // truncated sequences, at the end and inside
      {"\xC3" "A", kFffd + "A"},
      {"\xE2\x82", kFffd},
      {"\xE2\x82" "A", kFffd + "A"},
      {"\xF0\x9F\x98", kFffd},
      {"\xF0\x9F\x98" "A", kFffd + "A"},
      {"\xC0\xAF", kFffd + kFffd},                      // overlong forms
      {"\xC1\xBF", kFffd + kFffd},
      {"\xE0\x80\xAF", kFffd + kFffd + kFffd},
      {"\xE0\x9F\xBF", kFffd + kFffd + kFffd},
      {"\xF0\x80\x80\xAF", kFffd + kFffd + kFffd + kFffd},
      {"\xF0\x8F\xBF\xBF", kFffd + kFffd + kFffd + kFffd},
      {"\xED\xA0\x80", kFffd + kFffd + kFffd},          // UTF-16 surrogates (U+D800, U+DFFF)
      {"\xED\xBF\xBF", kFffd + kFffd + kFffd},
      {"\xF4\x90\x80\x80", kFffd + kFffd + kFffd + kFffd},  // above U+10FFFF
      {"\xF5\x80\x80\x80", kFffd + kFffd + kFffd + kFffd},
      {"\xF7\xBF\xBF\xBF", kFffd + kFffd + kFffd + kFffd},
      {"\xF8\x88\x80\x80\x80", kFffd + kFffd + kFffd + kFffd + kFffd},
      {"\xFE", kFffd},
      {"\xFF", kFffd},
      {"\xff\xfe\xfd", kFffd + kFffd + kFffd},           // the issue's label
      {"caf\xC3\xA9\xC3", "caf\xC3\xA9" + kFffd},
  };
  for (const auto& [bytes, mended] : cases) {
    Repairs repairs;
    const std::string written = write_json(string_node(bytes).get(), &repairs);
    EXPECT_EQ(written, "\"" + mended + "\"") << testing::PrintToString(bytes);
    EXPECT_TRUE(valid_utf8(written));
    EXPECT_EQ(repairs.strings, 1u);
    EXPECT_EQ(repairs.first, "");
    std::size_t replaced = 0;
    EXPECT_EQ(taconite::json::repaired_utf8(bytes, &replaced), mended);
    std::size_t expected = 0;
    for (std::size_t at = mended.find(kFffd); at != std::string::npos; at = mended.find(kFffd, at + 1)) ++expected;
    EXPECT_EQ(replaced, expected) << testing::PrintToString(bytes);
  }
}

TEST(JsonWrite, ALongStringEndingInABadByteIsKeptWholeWithTheByteReplaced) {
  const std::string long_label = std::string(70000, 'a') + "\xff";
  Repairs repairs;
  const std::string written = write_json(string_node(long_label).get(), &repairs);
  EXPECT_EQ(written, "\"" + std::string(70000, 'a') + kFffd + "\"");
  EXPECT_EQ(repairs.strings, 1u);
}

TEST(JsonWrite, RepairsAreCountedAndTheFirstIsNamedByItsPath) {
  JsonBuilder* b = json_builder_new();
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "stream");
  json_builder_add_string_value(b, "door");
  json_builder_set_member_name(b, "faces");
  json_builder_begin_array(b);
  for (const char* label : {"alice", "\xC3", "\xff\xfe\xfd"}) {
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "label");
    json_builder_add_string_value(b, label);
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
  json_builder_set_member_name(b, "\x80name");
  json_builder_add_int_value(b, 1);
  json_builder_end_object(b);
  JsonNodePtr root(json_builder_get_root(b));
  g_object_unref(b);

  Repairs repairs;
  const std::string text = write_json(root.get(), &repairs);
  EXPECT_EQ(text, "{\"stream\":\"door\",\"faces\":[{\"label\":\"alice\"},{\"label\":\"" + kFffd +
                      "\"},{\"label\":\"" + kFffd + kFffd + kFffd + "\"}],\"" + kFffd + "name\":1}");
  EXPECT_EQ(repairs.strings, 3u);
  EXPECT_EQ(repairs.first, "faces[1].label");
  write_json(root.get(), &repairs);  // the same Repairs sums several writes and keeps the first place
  EXPECT_EQ(repairs.strings, 6u);
  EXPECT_EQ(repairs.first, "faces[1].label");
}

TEST(JsonParse, IntegersBeyond64BitsAreRefusedNotReadAsMinusOne) {
  for (const char* text : {"[99999999999999999999]", "{\"a\":-9223372036854775809}"}) {
    taconite::Result<JsonNodePtr> parsed = taconite::json::parse_json(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_NE(parsed.error().message.find("beyond 64 bits"), std::string::npos) << parsed.error().message;
  }
  taconite::Result<JsonNodePtr> edge = taconite::json::parse_json("[9223372036854775807,-9223372036854775808,1e20,\"99999999999999999999\"]");
  ASSERT_TRUE(edge.ok()) << edge.error().message;
  EXPECT_EQ(write_json(edge.value().get()), "[9223372036854775807,-9223372036854775808,1e+20,\"99999999999999999999\"]");
}

TEST(JsonWrite, WhatItWritesParsesBackToTheSameText) {
  const std::string text =
      R"({"a":1e+20,"b":1e-300,"c":[1e+17,5e-324,-0.0,0.1,1.0,-7],"d":{"e":"\u0001\"","f":null,"g":true}})";
  taconite::Result<JsonNodePtr> parsed = taconite::json::parse_json(text);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(write_json(parsed.value().get()), text);
  EXPECT_EQ(write_json(nullptr), "null");
}

}  // namespace
