// The ONNX model description parser (runtime/onnx/embedder_description): a valid description's
// fields, and every malformed field refused with the file and the field named.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "common/failure.hpp"
#include "onnx/embedder_description.hpp"
#include "onnx_test_files.hpp"

namespace {

using taconite::ErrorKind;
using taconite::Failure;
using taconite::onnx::parse_embedder_description;
using taconite::onnx::read_embedder_description;

// The issue's example, and one member of it replaced by `replacement` (a JSON member text, or "" to drop it).
const std::string kValid =
    R"({"format": "taconite-embedder/1", "name": "mobilefacenet-foamliu", )"
    R"("input": {"name": "input0", "width": 112, "height": 96, "channel_order": "RGB", )"
    R"("mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}, )"
    R"("output": {"name": "output0", "dim": 128}, "threshold": 0.33, "licence": "Apache-2.0"})";
constexpr const char* kInput =
    R"({"name": "input0", "width": 112, "height": 96, "channel_order": "RGB", )"
    R"("mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]})";

std::string replaced(const std::string& member, const std::string& replacement) {
  std::string text = kValid;
  const std::size_t at = text.find(member);
  EXPECT_NE(at, std::string::npos) << member;
  if (at != std::string::npos) text.replace(at, member.size(), replacement);
  return text;
}

std::string error_of(const std::string& text) {
  try {
    parse_embedder_description(text, "faces/model.json");
  } catch (const Failure& failure) {
    EXPECT_EQ(failure.error().kind, ErrorKind::Bundle) << failure.error().message;
    return failure.error().message;
  }
  return "(accepted)";
}

TEST(EmbedderDescription, ReadsEveryField) {
  const auto d = parse_embedder_description(kValid, "model.json");
  EXPECT_EQ(d.name, "mobilefacenet-foamliu");
  EXPECT_EQ(d.input_name, "input0");
  EXPECT_EQ(d.output_name, "output0");
  EXPECT_EQ(d.dim, 128);
  EXPECT_EQ(d.preprocessing.width, 112);
  EXPECT_EQ(d.preprocessing.height, 96);
  EXPECT_EQ(d.preprocessing.channel_order, taconite::PlaneOrder::Rgb);
  EXPECT_FLOAT_EQ(d.preprocessing.mean[0], 0.485f);
  EXPECT_FLOAT_EQ(d.preprocessing.mean[2], 0.406f);
  EXPECT_FLOAT_EQ(d.preprocessing.std_dev[1], 0.224f);
  ASSERT_TRUE(d.threshold.has_value());
  EXPECT_DOUBLE_EQ(*d.threshold, 0.33);
  const auto bgr = parse_embedder_description(replaced(R"("RGB")", R"("BGR")"), "m.json");
  EXPECT_EQ(bgr.preprocessing.channel_order, taconite::PlaneOrder::Bgr);
  const auto untuned = parse_embedder_description(replaced(R"(, "threshold": 0.33)", ""), "m.json");
  EXPECT_FALSE(untuned.threshold.has_value());
  // Integers are numbers too (mean 0, std 1: raw x/255).
  const auto integral = parse_embedder_description(
      replaced(R"("mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225])", R"("mean": [0, 0, 0], "std": [1, 1, 1])"),
      "m.json");
  EXPECT_FLOAT_EQ(integral.preprocessing.std_dev[0], 1.0f);
}

struct Malformed {
  const char* what;
  std::string text;
  const char* expected;  // in the message, after the file name
};

class MalformedDescription : public ::testing::TestWithParam<Malformed> {};

TEST_P(MalformedDescription, IsRefusedNamingTheFileAndTheField) {
  const std::string message = error_of(GetParam().text);
  EXPECT_EQ(message.rfind("faces/model.json: ", 0), 0u) << message;
  EXPECT_NE(message.find(GetParam().expected), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    EveryField, MalformedDescription,
    ::testing::Values(
        Malformed{"NotJson", "{\"format\": ", "not valid JSON"},
        Malformed{"NotAnObject", "[1, 2]", "expected a JSON object"},
        // json-glib recurses per level: a million '[' overflowed the stack before the depth bound.
        Malformed{"NestedAMillionDeep", std::string(1000000, '['), "nested more than 16 levels deep"},
        Malformed{"NestedInAMember", replaced("0.33", std::string(17, '[') + std::string(17, ']')),
                  "nested more than 16 levels deep"},
        Malformed{"FormatMissing", replaced(R"("format": "taconite-embedder/1", )", ""), "format: missing"},
        Malformed{"FormatOther", replaced("taconite-embedder/1", "taconite-embedder/2"),
                  "format: expected \"taconite-embedder/1\", got \"taconite-embedder/2\""},
        Malformed{"FormatNumber", replaced(R"("taconite-embedder/1")", "1"), "format: expected a string, got an integer"},
        Malformed{"NameMissing", replaced(R"("name": "mobilefacenet-foamliu", )", ""), "name: missing"},
        Malformed{"NameEmpty", replaced(R"("mobilefacenet-foamliu")", R"("")"), "name: expected 1..256 characters, got 0"},
        Malformed{"NameTooLong", replaced("mobilefacenet-foamliu", std::string(300, 'x')), "name: expected 1..256"},
        Malformed{"InputMissing", replaced(std::string(R"("input": )") + kInput + ", ", ""), "input: missing"},
        Malformed{"InputNotObject", replaced(kInput, "\"input0\""), "input: expected an object, got a string"},
        Malformed{"InputNameMissing", replaced(R"("name": "input0", )", ""), "input.name: missing"},
        Malformed{"InputNameNull", replaced(R"("input0")", "null"), "input.name: expected a string, got null"},
        Malformed{"WidthMissing", replaced(R"("width": 112, )", ""), "input.width: missing"},
        Malformed{"WidthString", replaced(R"("width": 112)", R"("width": "112")"), "input.width: expected an integer, got a string"},
        Malformed{"WidthFraction", replaced(R"("width": 112)", R"("width": 112.5)"), "input.width: expected an integer, got a number"},
        Malformed{"WidthTooSmall", replaced(R"("width": 112)", R"("width": 15)"), "input.width: expected 16..1024, got 15"},
        Malformed{"HeightTooLarge", replaced(R"("height": 96)", R"("height": 1025)"), "input.height: expected 16..1024, got 1025"},
        Malformed{"HeightHuge", replaced(R"("height": 96)", R"("height": 99999999999)"), "input.height: expected 16..1024"},
        Malformed{"HeightNegative", replaced(R"("height": 96)", R"("height": -96)"), "input.height: expected 16..1024, got -96"},
        Malformed{"OrderMissing", replaced(R"("channel_order": "RGB",)", ""), "input.channel_order: missing"},
        Malformed{"OrderOther", replaced(R"("RGB")", R"("RGBA")"), "input.channel_order: expected \"RGB\" or \"BGR\", got \"RGBA\""},
        Malformed{"OrderLowerCase", replaced(R"("RGB")", R"("rgb")"), "input.channel_order: expected \"RGB\" or \"BGR\""},
        Malformed{"MeanMissing", replaced(R"("mean": [0.485, 0.456, 0.406], )", ""), "input.mean: missing"},
        Malformed{"MeanNumber", replaced("[0.485, 0.456, 0.406]", "0.5"), "input.mean: expected an array of 3 numbers, got a number"},
        Malformed{"MeanTwo", replaced("[0.485, 0.456, 0.406]", "[0.485, 0.456]"), "input.mean: expected 3 numbers (one per colour plane), got 2"},
        Malformed{"MeanFour", replaced("[0.485, 0.456, 0.406]", "[0.4, 0.4, 0.4, 0.4]"), "input.mean: expected 3 numbers"},
        Malformed{"MeanString", replaced("[0.485, 0.456, 0.406]", R"([0.485, "x", 0.406])"), "input.mean[1]: expected a number, got a string"},
        Malformed{"MeanHuge", replaced("[0.485, 0.456, 0.406]", "[0.485, 0.456, 1e300]"), "input.mean[2]: expected a value within +-1e6"},
        Malformed{"StdMissing", replaced(R"(, "std": [0.229, 0.224, 0.225])", ""), "input.std: missing"},
        Malformed{"StdZero", replaced("[0.229, 0.224, 0.225]", "[0.229, 0, 0.225]"), "input.std[1]: expected a positive number"},
        Malformed{"StdNegative", replaced("[0.229, 0.224, 0.225]", "[0.229, 0.224, -0.5]"), "input.std[2]: expected a positive number"},
        Malformed{"StdObject", replaced("[0.229, 0.224, 0.225]", "{}"), "input.std: expected an array of 3 numbers, got an object"},
        Malformed{"OutputMissing", replaced(R"("output": {"name": "output0", "dim": 128}, )", ""), "output: missing"},
        Malformed{"OutputArray", replaced(R"({"name": "output0", "dim": 128})", "[]"), "output: expected an object, got an array"},
        Malformed{"OutputNameMissing", replaced(R"("name": "output0", )", ""), "output.name: missing"},
        Malformed{"OutputNameNumber", replaced(R"("output0")", "7"), "output.name: expected a string, got an integer"},
        Malformed{"DimMissing", replaced(R"(, "dim": 128)", ""), "output.dim: missing"},
        Malformed{"DimZero", replaced(R"("dim": 128)", R"("dim": 0)"), "output.dim: expected 1..65536, got 0"},
        Malformed{"DimTooLarge", replaced(R"("dim": 128)", R"("dim": 65537)"), "output.dim: expected 1..65536, got 65537"},
        Malformed{"DimBoolean", replaced(R"("dim": 128)", R"("dim": true)"), "output.dim: expected an integer, got a boolean"},
        Malformed{"ThresholdString", replaced("0.33", R"("0.33")"), "threshold: expected a number, got a string"},
        Malformed{"ThresholdAboveOne", replaced("0.33", "1.5"), "threshold: expected a cosine similarity in -1..1"}),
    [](const ::testing::TestParamInfo<Malformed>& info) { return info.param.what; });

TEST(EmbedderDescriptionFile, AMissingDirectoryOrOversizedFileIsRefusedByName) {
  const std::filesystem::path dir = taconite::onnx_tests::scratch_dir("description-files");
  try {
    read_embedder_description(dir / "absent.json");
    ADD_FAILURE() << "a missing description was accepted";
  } catch (const Failure& failure) {
    EXPECT_EQ(failure.error().kind, ErrorKind::Io);
    EXPECT_NE(failure.error().message.find("absent.json: does not exist"), std::string::npos) << failure.error().message;
  }
  try {
    read_embedder_description(dir);
    ADD_FAILURE() << "a directory was accepted";
  } catch (const Failure& failure) {
    EXPECT_NE(failure.error().message.find("is a directory"), std::string::npos) << failure.error().message;
  }
  const std::filesystem::path big = dir / "big.json";
  std::ofstream(big) << std::string((2u << 20), ' ');
  try {
    read_embedder_description(big);
    ADD_FAILURE() << "a 2 MiB description was accepted";
  } catch (const Failure& failure) {
    EXPECT_EQ(failure.error().kind, ErrorKind::Bundle);
    EXPECT_NE(failure.error().message.find("big.json: 2097152 bytes, more than a model description may hold"),
              std::string::npos)
        << failure.error().message;
  }
  const std::filesystem::path good = dir / "good.json";
  std::ofstream(good) << kValid;
  EXPECT_EQ(read_embedder_description(good).dim, 128);
  std::filesystem::remove_all(dir);
}

}  // namespace
