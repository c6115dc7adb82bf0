// manifest.txt grammar (spec §2): whitespace records, skipped blank/comment lines, k=v fields
// split at the first '=', 0/1 flags, container records, 1-based line numbers in every error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "bundle/manifest.hpp"
#include "common/failure.hpp"

namespace taconite::bundle {
namespace {

using ::testing::HasSubstr;

// The error parse_manifest (or a record accessor) raises; fails the test if none.
template <typename Fn>
Error failure_of(Fn&& fn) {
  try {
    fn();
  } catch (const Failure& failure) {
    return failure.error();
  }
  ADD_FAILURE() << "expected a Failure";
  return {ErrorKind::Io, ""};
}

TEST(Manifest, SkipsBlankAndCommentLinesAndCountsLinesFromOne) {
  const Manifest m = parse_manifest(
      "# a comment\n"
      "\n"
      "   \t  \n"
      "version 1\n"
      "   # an indented comment\n"
      "#tag-like comment buf=1\n"
      "input buf=0 c=8 h=2 w=2 tensor=t\n");
  EXPECT_EQ(m.version, 1);
  ASSERT_EQ(m.steps.size(), 1u);
  EXPECT_EQ(m.steps[0].line, 7);
  EXPECT_EQ(m.steps[0].tag, "input");
  EXPECT_EQ(m.steps[0].text, "input buf=0 c=8 h=2 w=2 tensor=t");
  EXPECT_EQ(m.steps[0].fields.size(), 5u);
}

TEST(Manifest, SplitsOnAnyAsciiWhitespaceAndHandlesCrlf) {
  const Manifest m = parse_manifest("version 1\r\nbias\tbuf=3 \t c=16\vh=8\fw=8   bias=b\r\n");
  ASSERT_EQ(m.steps.size(), 1u);
  EXPECT_EQ(m.steps[0].line, 2);
  EXPECT_EQ(m.steps[0].tag, "bias");
  EXPECT_EQ(m.steps[0].fields, (std::vector<std::string>{"buf=3", "c=16", "h=8", "w=8", "bias=b"}));
}

TEST(Manifest, HashInsideATokenIsNotAComment) {
  const Manifest m = parse_manifest("version 1\nstep#1 a=b#c\n");
  ASSERT_EQ(m.steps.size(), 1u);
  EXPECT_EQ(m.steps[0].tag, "step#1");
  EXPECT_EQ(m.steps[0].require("a"), "b#c");
}

TEST(Manifest, KeyValueSplitsAtTheFirstEquals) {
  const Manifest m = parse_manifest("version 1\nx tensor=a=b=c empty= =novalue plain insts=k/x.bin\n");
  const ManifestRecord& r = m.steps.at(0);
  EXPECT_EQ(r.require("tensor"), "a=b=c");
  EXPECT_EQ(r.require("empty"), "");
  EXPECT_EQ(r.require("insts"), "k/x.bin");
  EXPECT_EQ(r.find("plain"), nullptr);  // a field without '=' is not addressable by key
  EXPECT_EQ(r.find("tensor=a"), nullptr);
  EXPECT_EQ(r.find("in"), nullptr);     // keys match whole, not by prefix of "insts"
}

TEST(Manifest, FirstOccurrenceOfAKeyWins) {
  const Manifest m = parse_manifest("version 1\nx k=1 k=2\n");
  EXPECT_EQ(m.steps.at(0).require("k"), "1");
}

TEST(Manifest, MissingKeyNamesLineAndQuotesIt) {
  const Manifest m = parse_manifest("version 1\n\nbias buf=3 c=16\n");
  const Error e = failure_of([&] { (void)m.steps.at(0).require("bias"); });
  EXPECT_EQ(e.kind, ErrorKind::Bundle);
  EXPECT_THAT(e.message, HasSubstr("manifest.txt:3: "));
  EXPECT_THAT(e.message, HasSubstr("missing key 'bias' in bias record"));
  EXPECT_THAT(e.message, HasSubstr("\"bias buf=3 c=16\""));
}

TEST(Manifest, FlagsAreZeroOrOneOnly) {
  const Manifest m = parse_manifest("version 1\nconv a=0 b=1 c=2 d=01 e=true f= g=-1 h=1.0\n");
  const ManifestRecord& r = m.steps.at(0);
  EXPECT_FALSE(r.require_flag("a"));
  EXPECT_TRUE(r.require_flag("b"));
  for (const char* key : {"c", "d", "e", "f", "g", "h"}) {
    const Error e = failure_of([&] { (void)r.require_flag(key); });
    EXPECT_THAT(e.message, HasSubstr(std::string("flag '") + key + "' must be 0 or 1")) << key;
    EXPECT_THAT(e.message, HasSubstr("manifest.txt:2:")) << key;
  }
}

TEST(Manifest, IntegersAreCheckedForSyntaxRangeAndOverflow) {
  const Manifest m = parse_manifest(
      "version 1\nx a=42 b=-7 c=+3 d=1e3 e=0x10 f=99999999999999999999999 g=9223372036854775807 h=-9223372036854775807 "
      "i=12abc j=-\n");
  const ManifestRecord& r = m.steps.at(0);
  EXPECT_EQ(r.require_int("a", 0, 100), 42);
  EXPECT_EQ(r.require_int("b", -10, 10), -7);
  EXPECT_EQ(r.require_int("g", 0, INT64_MAX), INT64_MAX);
  EXPECT_EQ(r.require_int("h", -INT64_MAX, 0), -INT64_MAX);
  for (const char* key : {"c", "d", "e", "f", "i", "j"}) {
    const Error e = failure_of([&] { (void)r.require_int(key, -100, 100); });
    EXPECT_THAT(e.message, HasSubstr(std::string("key '") + key + "' must be an integer")) << key;
  }
  const Error range = failure_of([&] { (void)r.require_int("a", 0, 41); });
  EXPECT_THAT(range.message, HasSubstr("key 'a' = 42 is out of range [0, 41]"));
}

TEST(Manifest, UnknownExtraKeysAreKeptButIgnored) {
  const Manifest m = parse_manifest("version 1\nbias buf=3 future_key=zzz c=16\n");
  EXPECT_EQ(m.steps.at(0).require("c"), "16");
  EXPECT_EQ(m.steps.at(0).require("future_key"), "zzz");
}

TEST(Manifest, ParamValueKeepsInnerSpacing) {
  const Manifest m = parse_manifest(
      "version 1\n"
      "param model IR-101\n"
      "param note   two  spaces\tand a tab   \n"
      "param empty\n"
      "param param x\n"
      "  param   am   value v\n");
  EXPECT_EQ(m.params.at("model").value, "IR-101");
  EXPECT_EQ(m.params.at("model").line, 2);
  EXPECT_EQ(m.params.at("note").value, "two  spaces\tand a tab");
  EXPECT_EQ(m.params.at("empty").value, "");
  EXPECT_EQ(m.params.at("param").value, "x");
  EXPECT_EQ(m.params.at("am").value, "value v");
  EXPECT_TRUE(m.steps.empty());
}

TEST(Manifest, XclbinRecordsAreKeyedAndKeepTheirLine) {
  const Manifest m = parse_manifest("version 1\nxclbin k3 kernels/a.xclbin conv2dk3_bf16 extra\n");
  const XclbinRecord& x = m.xclbins.at("k3");
  EXPECT_EQ(x.file, "kernels/a.xclbin");
  EXPECT_EQ(x.kernel_name, "conv2dk3_bf16");
  EXPECT_EQ(x.line, 2);
  EXPECT_EQ(x.text, "xclbin k3 kernels/a.xclbin conv2dk3_bf16 extra");
}

TEST(Manifest, VersionRules) {
  EXPECT_THAT(failure_of([] { parse_manifest("input buf=0\n"); }).message, HasSubstr("no version record"));
  const Error v2 = failure_of([] { parse_manifest("# c\nversion 2\n"); });
  EXPECT_EQ(v2.kind, ErrorKind::Bundle);
  EXPECT_THAT(v2.message, HasSubstr("manifest.txt:2: version 2, this runtime reads version 1; re-export the bundle"));
  EXPECT_THAT(failure_of([] { parse_manifest("version 1\nversion 1\n"); }).message,
              HasSubstr("manifest.txt:2: second version record (the first is at line 1)"));
  EXPECT_THAT(failure_of([] { parse_manifest("version\n"); }).message, HasSubstr("manifest.txt:1:"));
  EXPECT_THAT(failure_of([] { parse_manifest("version 1 1\n"); }).message, HasSubstr("exactly one value"));
  EXPECT_THAT(failure_of([] { parse_manifest("version 99999999999999999999999\n"); }).message, HasSubstr("version"));
}

TEST(Manifest, DuplicatesNameBothLines) {
  EXPECT_THAT(failure_of([] { parse_manifest("version 1\nparam a 1\n\nparam a 2\n"); }).message,
              HasSubstr("manifest.txt:4: param 'a' defined twice (first at line 2)"));
  EXPECT_THAT(failure_of([] { parse_manifest("version 1\nxclbin k f n\nxclbin k g n\n"); }).message,
              HasSubstr("manifest.txt:3: xclbin 'k' defined twice (first at line 2)"));
}

TEST(Manifest, LongLinesAreQuotedShortenedAndControlCharactersMasked) {
  const std::string long_line = "bias " + std::string(300, 'x');
  const Manifest m = parse_manifest("version 1\n" + long_line + "\n");
  const Error e = failure_of([&] { (void)m.steps.at(0).require("buf"); });
  // Built by appending: `"\"" + std::string&&` trips GCC 12's -Wrestrict false positive at -O3.
  EXPECT_THAT(e.message, HasSubstr(std::string("\"").append(long_line, 0, 160).append("...\"")));
  EXPECT_LT(e.message.size(), 300u);
  const Manifest ctrl = parse_manifest("version 1\nbias \x01x\n");
  EXPECT_THAT(failure_of([&] { (void)ctrl.steps.at(0).require("buf"); }).message, HasSubstr("\"bias ?x\""));
}

}  // namespace
}  // namespace taconite::bundle
