// Person and camera names made safe for MQTT topics and Home Assistant ids (app/mqtt/topic_names),
// and the discovery documents' topics and ids built from them.
#include "topic_names.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "discovery.hpp"

namespace {

using taconite::app::camera_name_problem;
using taconite::app::slug;

const std::regex kSlug("^[a-z0-9_]{1,41}$");

TEST(Slug, ACleanNameStaysItself) {
  EXPECT_EQ(slug("alice"), "alice");
  EXPECT_EQ(slug("door_2"), "door_2");
}

TEST(Slug, OtherNamesGetAHashOfTheExactName) {
  const std::string picard = slug("Jean-Luc Picard");
  EXPECT_EQ(picard.substr(0, 16), "jean_luc_picard_");
  EXPECT_TRUE(std::regex_match(picard, kSlug)) << picard;
  EXPECT_NE(slug("Alice"), slug("alice")) << "case alone must not merge two people";
  EXPECT_NE(slug("Jean Luc"), slug("Jean-Luc"));
  EXPECT_EQ(slug("Jean-Luc Picard"), picard) << "stable: the same name keeps its topics";
}

TEST(Slug, ReservedLevelsAreNeverTakenAsTheyAre) {
  EXPECT_EQ(slug("events"), "events");
  const std::string s = slug("events", "available,events,person");
  EXPECT_NE(s, "events");
  EXPECT_EQ(s.substr(0, 7), "events_");
}

TEST(Slug, HostileNamesAreBoundedAndSafe) {
  const std::vector<std::string> names = {
      "",     "   ",        "../#+", std::string(10000, 'a'), std::string("\0\x01\xff", 3), "Zoë 😀", "a/b/c",
      "$SYS", "Ａｌｉｃｅ", "\n"};
  std::set<std::string> seen;
  for (const std::string& name : names) {
    const std::string s = slug(name);
    EXPECT_TRUE(std::regex_match(s, kSlug)) << "'" << s << "' of a " << name.size() << "-byte name";
    EXPECT_TRUE(seen.insert(s).second) << "two of these names share '" << s << "'";
  }
  EXPECT_NE(slug(std::string(10000, 'a')), slug(std::string(10001, 'a'))) << "cut names still differ";
}

TEST(CameraName, TopicLevelRules) {
  EXPECT_EQ(camera_name_problem("door 1"), "");
  EXPECT_EQ(camera_name_problem("Türe"), "");
  const std::vector<std::string> bad_names = {"", "a/b", "a+", "#", "tab\there", std::string(65, 'c'), "\xff\xfe"};
  for (const std::string& bad : bad_names) EXPECT_NE(camera_name_problem(bad), "") << bad;
}

TEST(Printable, HostileNamesCannotSplitOrFloodLogLines) {
  EXPECT_EQ(taconite::app::printable("alice"), "alice");
  EXPECT_EQ(taconite::app::printable("a\nwarning: forged\r\x1b[2J"), "a?warning: forged??[2J");
  EXPECT_EQ(taconite::app::printable(std::string(1000, 'x'), 8), "xxxxxxxx...");
}

TEST(Discovery, TopicsAndIdsFollowHomeAssistantsLayout) {
  const taconite::app::DiscoveryNames names{"taconite", "homeassistant", "taconite", "1.0", 30};
  const taconite::app::CameraNames door{"door 1", slug("door 1")};
  const auto person = taconite::app::person_binary_sensor(names, door, "Zoë", slug("Zoë"));
  EXPECT_TRUE(std::regex_match(person.topic, std::regex("^homeassistant/binary_sensor/taconite/[a-z0-9_]+/config$")))
      << person.topic;
  EXPECT_NE(person.payload.find("\"name\":\"Zoë\""), std::string::npos) << person.payload;
  EXPECT_NE(person.payload.find("\"state_topic\":\"taconite/door 1/" + slug("Zoë") + "\""), std::string::npos);
  EXPECT_NE(person.payload.find("\"off_delay\":30"), std::string::npos);
  const auto image = taconite::app::snapshot_image(names, door);
  EXPECT_NE(image.payload.find("\"image_topic\":\"taconite/door 1/snapshot\""), std::string::npos);
}

}  // namespace
