// The malformed-bundle suite: one defect per case, written into the fixture bundle; loading must
// fail with the right Error kind and a message naming the right file and line (and quoting it).
// Runs under valgrind too (suite unit-valgrind): no crash, hang, invalid access or leak.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bundle_fixture.hpp"
#include "taconite/embedder.hpp"

namespace taconite::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct Expected {
  ErrorKind kind = ErrorKind::Bundle;
  std::string location;               // e.g. "manifest.txt:7:" (or just the file when no line applies)
  std::string quote;                  // the offending line, as the message must quote it ("" = none)
  std::vector<std::string> mentions;  // further text the message must contain
};

struct Defect {
  std::string name;
  std::function<Expected(BundleFixture&)> apply;
};

// gtest prints a failing parameter with this (instead of its bytes).
void PrintTo(const Defect& defect, std::ostream* out) { *out << defect.name; }

// Line numbers of the fixture's manifest records, found by content so the fixture may grow.
int line_of(const BundleFixture& f, std::string_view needle) { return f.manifest_line_of(needle); }

Expected at_manifest(const BundleFixture& f, int line, std::vector<std::string> mentions = {}) {
  return {ErrorKind::Bundle, "manifest.txt:" + std::to_string(line) + ":", f.manifest_line(line), std::move(mentions)};
}

Expected at_tensors(const BundleFixture& f, int line, std::vector<std::string> mentions = {}) {
  return {ErrorKind::Bundle, "tensors.txt:" + std::to_string(line) + ":", f.tensor_line(line), std::move(mentions)};
}

// Sets key=value on the record containing `needle`; the error must name that record.
Defect field_defect(std::string name, std::string needle, std::string key, std::string value,
                    std::vector<std::string> mentions) {
  return {std::move(name), [=](BundleFixture& f) {
            const int line = line_of(f, needle);
            f.set_field(line, key, value);
            return at_manifest(f, line, mentions);
          }};
}

Defect missing_key_defect(std::string name, std::string needle, std::string key) {
  return {std::move(name), [=](BundleFixture& f) {
            const int line = line_of(f, needle);
            f.remove_field(line, key);
            return at_manifest(f, line, {"missing key '" + key + "'"});
          }};
}

// Replaces field `index` (0-based) of a tensors.txt line.
Defect tensor_field_defect(std::string name, std::string tensor, int index, std::function<std::string(const BundleFixture&)> value,
                           std::vector<std::string> mentions) {
  return {std::move(name), [=](BundleFixture& f) {
            const int line = f.tensor_line_of(tensor);
            std::istringstream in(f.tensor_line(line));
            std::vector<std::string> fields;
            for (std::string field; in >> field;) fields.push_back(field);
            fields.at(static_cast<std::size_t>(index)) = value(f);
            std::string text;
            for (const std::string& field : fields) text += (text.empty() ? "" : " ") + field;
            f.replace_tensor_line(line, text);
            return at_tensors(f, line, mentions);
          }};
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

// Replaces a bundle file by a directory or a FIFO: an Io error, never an empty read or a hang.
Defect special_file_defect(std::string name, std::string file, bool fifo) {
  return {std::move(name), [=](BundleFixture& f) {
            const fs::path path = f.dir() / file;
            fs::remove(path);
            if (fifo) {
              if (::mkfifo(path.c_str(), 0600) != 0) throw std::runtime_error("mkfifo failed");
            } else {
              fs::create_directory(path);
            }
            return Expected{ErrorKind::Io, file, "", {fifo ? "is a FIFO, not a regular file" : "is a directory, not a regular file"}};
          }};
}

// Replaces a bundle file by a symlink to a file that does not exist.
Defect dangling_symlink_defect(std::string name, std::string file) {
  return {std::move(name), [=](BundleFixture& f) {
            fs::remove(f.dir() / file);
            fs::create_symlink("no-such-target", f.dir() / file);
            return Expected{ErrorKind::Io, file, "", {"is a dangling symlink"}};
          }};
}

// Grows a text file to `bytes` without writing them (a sparse file): refused from its size alone.
Defect oversized_text_defect(std::string name, std::string file, std::uint64_t bytes) {
  return {std::move(name), [=](BundleFixture& f) {
            if (::truncate((f.dir() / file).c_str(), static_cast<off_t>(bytes)) != 0)
              throw std::runtime_error("truncate failed");
            return Expected{ErrorKind::Bundle, file, "",
                            {std::to_string(bytes) + " bytes", "at most 16777216 bytes (16 MiB)"}};
          }};
}

std::vector<Defect> file_defects() {
  return {
      {"MissingManifest",
       [](BundleFixture& f) {
         fs::remove(f.dir() / "manifest.txt");
         return Expected{ErrorKind::Io, "manifest.txt", "", {"does not exist"}};
       }},
      {"MissingTensorIndex",
       [](BundleFixture& f) {
         fs::remove(f.dir() / "tensors.txt");
         return Expected{ErrorKind::Io, "tensors.txt", "", {"does not exist"}};
       }},
      {"MissingTensorData",
       [](BundleFixture& f) {
         fs::remove(f.dir() / "tensors.bin");
         return Expected{ErrorKind::Io, "tensors.bin", "", {"does not exist"}};
       }},
      {"OldPlanTxtOnlyBundle",
       [](BundleFixture& f) {
         fs::remove(f.dir() / "manifest.txt");
         write_text(f.dir() / "plan.txt", "conv 0 1 2\n");
         return Expected{ErrorKind::Bundle, "plan.txt", "", {"re-export", "export_ir18.py", "export_ir101.py"}};
       }},
      special_file_defect("ManifestIsADirectory", "manifest.txt", /*fifo=*/false),
      special_file_defect("TensorIndexIsADirectory", "tensors.txt", false),
      special_file_defect("TensorDataIsADirectory", "tensors.bin", false),
      special_file_defect("ManifestIsAFifo", "manifest.txt", /*fifo=*/true),
      special_file_defect("TensorIndexIsAFifo", "tensors.txt", true),
      special_file_defect("TensorDataIsAFifo", "tensors.bin", true),
      dangling_symlink_defect("ManifestIsADanglingSymlink", "manifest.txt"),
      dangling_symlink_defect("TensorIndexIsADanglingSymlink", "tensors.txt"),
      dangling_symlink_defect("TensorDataIsADanglingSymlink", "tensors.bin"),
      oversized_text_defect("ManifestOf3GiB", "manifest.txt", std::uint64_t{3} << 30),
      oversized_text_defect("TensorIndexJustOverTheLimit", "tensors.txt", (std::uint64_t{16} << 20) + 1),
      {"EmptyTensorDataWithNonEmptyIndex",
       [](BundleFixture& f) {
         write_text(f.dir() / "tensors.bin", "");
         return at_tensors(f, 1, {"exceeds tensors.bin (0 bytes)"});
       }},
  };
}

std::vector<Defect> container_defects() {
  return {
      {"NoVersion",
       [](BundleFixture& f) {
         f.erase_manifest_line(line_of(f, "version 1"));
         return Expected{ErrorKind::Bundle, "manifest.txt", "", {"no version record"}};
       }},
      {"Version2",
       [](BundleFixture& f) {
         const int line = line_of(f, "version 1");
         f.replace_manifest_line(line, "version 2");
         return at_manifest(f, line, {"version 2, this runtime reads version 1; re-export the bundle"});
       }},
      {"VersionNotANumber",
       [](BundleFixture& f) {
         const int line = line_of(f, "version 1");
         f.replace_manifest_line(line, "version one");
         return at_manifest(f, line, {"version"});
       }},
      {"TwoVersionRecords",
       [](BundleFixture& f) {
         const int first = line_of(f, "version 1");
         f.insert_manifest_line(first + 1, "version 1");
         return at_manifest(f, first + 1, {"second version record", "line " + std::to_string(first)});
       }},
      {"DuplicateParam",
       [](BundleFixture& f) {
         const int first = line_of(f, "param model");
         f.insert_manifest_line(first + 1, "param model IR-other");
         return at_manifest(f, first + 1, {"param 'model' defined twice", "line " + std::to_string(first)});
       }},
      {"UnknownInputChannelOrder",
       [](BundleFixture& f) {
         const int line = line_of(f, "param model") + 1;
         f.insert_manifest_line(line, "param input_channel_order GBR");
         return at_manifest(f, line, {"param input_channel_order must be RGB or BGR"});
       }},
      {"UnknownNpuKernelsValue",
       [](BundleFixture& f) {
         const int line = line_of(f, "param model") + 1;
         f.insert_manifest_line(line, "param npu_kernels some");
         return at_manifest(f, line, {"param npu_kernels must be none"});
       }},
      {"ParamWithoutName",
       [](BundleFixture& f) {
         const int line = line_of(f, "param model") + 1;
         f.insert_manifest_line(line, "param");
         return at_manifest(f, line, {"param record needs a name"});
       }},
      {"DuplicateXclbin",
       [](BundleFixture& f) {
         const int first = line_of(f, "xclbin k3");
         const int line = line_of(f, "input ");
         f.insert_manifest_line(line, "xclbin k3 kernels/conv1x1.xclbin conv2dk1_bf16");
         return at_manifest(f, line, {"xclbin 'k3' defined twice", "line " + std::to_string(first)});
       }},
      {"XclbinWithoutKernelName",
       [](BundleFixture& f) {
         const int line = line_of(f, "xclbin k1");
         f.replace_manifest_line(line, "xclbin k1 kernels/conv1x1.xclbin");
         return at_manifest(f, line, {"<key> <file> <kernel-name>"});
       }},
      {"UnknownStepTag",
       [](BundleFixture& f) {
         const int line = line_of(f, "bias buf=3");
         f.replace_manifest_line(line, "relu buf=3 c=16 h=8 w=8");
         return at_manifest(f, line, {"unknown step relu"});
       }},
  };
}

std::vector<Defect> field_defects() {
  return {
      missing_key_defect("InputMissingTensor", "input ", "tensor"),
      missing_key_defect("ConvMissingWt", "wt=sc.wt", "wt"),
      missing_key_defect("ConvMissingInsts", "wt=sc.wt", "insts"),
      missing_key_defect("ConvMissingFirstFlag", "wt=stem.wt", "first"),
      missing_key_defect("ConvMissingOwp", "wt=c2.g0", "owp"),
      missing_key_defect("AffineMissingShift", "affine ", "shift"),
      missing_key_defect("PreluBiasMissingAlpha", "prelu_bias ", "alpha"),
      missing_key_defect("BiasMissingBias", "bias buf=3", "bias"),
      missing_key_defect("SubsampleMissingStride", "subsample ", "stride"),
      missing_key_defect("AddMissingB", "add ", "b"),
      missing_key_defect("HeadMissingB2", "head ", "b2"),
      field_defect("FlagValueTwo", "wt=stem.wt", "first", "2", {"flag 'first' must be 0 or 1, got '2'"}),
      field_defect("FlagValueWord", "wt=c2.g1", "last", "true", {"flag 'last' must be 0 or 1, got 'true'"}),
      field_defect("NonIntegerField", "wt=sc.wt", "oc", "16x", {"key 'oc' must be an integer, got '16x'"}),
      field_defect("EmptyIntegerField", "add ", "b", "", {"key 'b' must be an integer"}),
      field_defect("NegativeDims", "affine ", "c", "-16", {"key 'c' = -16 is out of range"}),
      field_defect("OverflowSizedDim", "wt=sc.wt", "h", "99999999999999999999999", {"key 'h' must be an integer"}),
      field_defect("OverflowSizedBufferId", "add ", "a", "99999999999999999999999", {"key 'a' must be an integer"}),
      field_defect("HugeDimOutOfRange", "subsample ", "w", "4294967296", {"key 'w' = 4294967296 is out of range"}),
  };
}

std::vector<Defect> buffer_and_tensor_defects() {
  return {
      field_defect("UndefinedBuffer", "bias buf=3", "buf", "9", {"buffer 9 (buf) is read before any step defines it"}),
      field_defect("MisShapedBuffer", "bias buf=3", "w", "4", {"(c=16, h=8, w=8)", "(c=16, h=8, w=4)"}),
      field_defect("ConvInputMisShaped", "wt=sc.wt", "ict", "8", {"(c=16, h=8, w=8)", "(c=8, h=8, w=8)"}),
      {"InputStepRemoved",
       [](BundleFixture& f) {
         f.erase_manifest_line(line_of(f, "input "));
         return at_manifest(f, line_of(f, "wt=stem.wt"), {"buffer 0 (in) is read before any step defines it"});
       }},
      field_defect("F32WhereBf16Expected", "affine ", "scale", "head.b2", {"is f32", "expected bf16", "tensors.txt:"}),
      field_defect("Bf16WhereF32Expected", "head ", "b2", "c2.bias", {"is bf16", "expected f32"}),
      field_defect("InputTensorIsF32", "input ", "tensor", "ref.input_chw", {"is f32", "expected bf16"}),
      field_defect("WtIsF32", "wt=sc.wt", "wt", "head.b2", {"is f32", "expected bf16"}),
      field_defect("UnknownTensor", "wt=sc.wt", "wt", "nope", {"tensor 'nope' (wt) is not in tensors.txt"}),
      field_defect("InputWrongElementCount", "input ", "tensor", "c2.bias", {"has 16 elements", "expected 512"}),
      {"ScaleWrongElementCount",
       [](BundleFixture& f) {
         f.add_bf16_tensor("bad.eight", 8);
         const int line = line_of(f, "affine ");
         f.set_field(line, "scale", "bad.eight");
         return at_manifest(f, line, {"has 8 elements", "expected 16"});
       }},
      field_defect("HeadBtWrongElementCount", "head ", "bT", "stem.wt", {"has 1152 elements", "expected 4096"}),
      {"HeadB2WrongElementCount",
       [](BundleFixture& f) {
         f.add_f32_tensor("bad.f32", 8);
         const int line = line_of(f, "head ");
         f.set_field(line, "b2", "bad.f32");
         return at_manifest(f, line, {"has 8 elements", "expected 16"});
       }},
      field_defect("WtKernelSizeUninferable", "wt=sc.wt", "wt", "head.bT",
                   {"cannot infer the kernel size", "4096 elements", "oc*icg*9=2304", "oc*icg=256"}),
  };
}

std::vector<Defect> tensor_index_defects() {
  auto constant = [](std::string value) { return [value](const BundleFixture&) { return value; }; };
  return {
      {"TensorLineFourFields",
       [](BundleFixture& f) {
         const int line = f.tensor_line_of("p1.alpha");
         const std::string text = f.tensor_line(line);
         f.replace_tensor_line(line, text.substr(0, text.rfind(' ')));
         return at_tensors(f, line, {"expected 5 fields", "got 4"});
       }},
      {"TensorLineSixFields",
       [](BundleFixture& f) {
         const int line = f.tensor_line_of("p1.alpha");
         f.replace_tensor_line(line, f.tensor_line(line) + " extra");
         return at_tensors(f, line, {"got 6"});
       }},
      tensor_field_defect("UnknownDtype", "p1.bias", 1, constant("f16"), {"unknown dtype 'f16'"}),
      tensor_field_defect("DtypeIsCaseSensitive", "p1.bias", 1, constant("BF16"), {"unknown dtype 'BF16'"}),
      tensor_field_defect(
          "OffsetNotMultipleOf8", "head.b2", 3,
          [](const BundleFixture& f) { return std::to_string(f.tensor_offset("head.b2") + 4); },
          {"is not a multiple of 8"}),
      tensor_field_defect(
          "BytesPastEndOfData", "head.b2", 4,
          [](const BundleFixture& f) { return std::to_string(f.blob_size() - f.tensor_offset("head.b2") + 4); },
          {"exceeds tensors.bin"}),
      tensor_field_defect(
          "OffsetPastEndOfData", "p1.bias", 3,
          [](const BundleFixture& f) { return std::to_string((f.blob_size() / 8 + 8) * 8); }, {"exceeds tensors.bin"}),
      tensor_field_defect("HugeOffsetWouldOverflow", "p1.bias", 3, constant("18446744073709551552"),
                          {"offset 18446744073709551552 + 32 bytes exceeds tensors.bin"}),
      tensor_field_defect("OverflowSizedOffset", "p1.bias", 3, constant("99999999999999999999999"),
                          {"bad offset '99999999999999999999999'"}),
      tensor_field_defect("OverflowSizedBytes", "p1.bias", 4, constant("18446744073709551616"), {"bad byte count"}),
      tensor_field_defect("NegativeOffset", "p1.bias", 3, constant("-64"), {"bad offset '-64'"}),
      tensor_field_defect("BytesNotWholeElements", "head.b2", 4, constant("62"),
                          {"62 bytes is not a whole number of f32 elements"}),
      tensor_field_defect("ShapeProductMismatch", "head.b2", 2, constant("4,5"),
                          {"shape holds 20 elements but the bytes hold 16"}),
      tensor_field_defect("ShapeOverflow", "head.b2", 2, constant("4294967296,4294967296,16"), {"overflows"}),
      tensor_field_defect("ShapeNotNumeric", "head.b2", 2, constant("4,x"), {"bad shape '4,x'"}),
      {"DuplicateTensorName",
       [](BundleFixture& f) {
         const int first = f.tensor_line_of("p1.bias");
         f.insert_tensor_line(first + 2, f.tensor_line(first));
         return at_tensors(f, first + 2, {"tensor 'p1.bias' defined twice", "line " + std::to_string(first)});
       }},
  };
}

std::vector<Defect> path_defects() {
  return {
      field_defect("InstsAbsolutePath", "wt=sc.wt", "insts", "/etc/hostname", {"must be relative to the bundle"}),
      field_defect("InstsDotDotEscape", "wt=sc.wt", "insts", "../outside/secret.insts.bin", {"escapes the bundle"}),
      field_defect("InstsEmptyName", "wt=sc.wt", "insts", "", {"empty file name"}),
      field_defect("InstsMissingFile", "wt=sc.wt", "insts", "kernels/missing.insts.bin", {"does not exist"}),
      field_defect("InstsIsADirectory", "wt=sc.wt", "insts", "kernels", {"is a directory, not a regular file"}),
      {"InstsIsADanglingSymlink",
       [](BundleFixture& f) {
         fs::create_symlink("gone.insts.bin", f.dir() / "kernels" / "dangling.insts.bin");
         const int line = line_of(f, "wt=sc.wt");
         f.set_field(line, "insts", "kernels/dangling.insts.bin");
         return at_manifest(f, line, {"is a dangling symlink"});
       }},
      {"InstsSymlinkEscapes",
       [](BundleFixture& f) {
         fs::create_symlink(f.outside() / "secret.insts.bin", f.dir() / "kernels" / "evil.insts.bin");
         const int line = line_of(f, "wt=sc.wt");
         f.set_field(line, "insts", "kernels/evil.insts.bin");
         return at_manifest(f, line, {"resolves outside the bundle"});
       }},
      {"InstsDirectorySymlinkEscapes",
       [](BundleFixture& f) {
         fs::create_directory_symlink(f.outside(), f.dir() / "kernels" / "ext");
         const int line = line_of(f, "wt=sc.wt");
         f.set_field(line, "insts", "kernels/ext/secret.insts.bin");
         return at_manifest(f, line, {"resolves outside the bundle"});
       }},
      {"XclbinAbsolutePath",
       [](BundleFixture& f) {
         const int line = line_of(f, "xclbin k1");
         f.replace_manifest_line(line, "xclbin k1 /etc/hostname conv2dk1_bf16");
         return at_manifest(f, line, {"must be relative to the bundle"});
       }},
      {"UnusedXclbinSymlinkEscapes",
       [](BundleFixture& f) {
         fs::create_symlink(f.outside() / "secret.insts.bin", f.dir() / "kernels" / "spare.xclbin");
         const int line = line_of(f, "input ");
         f.insert_manifest_line(line, "xclbin spare kernels/spare.xclbin conv2dk3_bf16");
         return at_manifest(f, line, {"resolves outside the bundle"});
       }},
      {"UnusedXclbinDotDot",
       [](BundleFixture& f) {
         const int line = line_of(f, "input ");
         f.insert_manifest_line(line, "xclbin spare ../outside/x.xclbin conv2dk3_bf16");
         return at_manifest(f, line, {"escapes the bundle"});
       }},
      field_defect("CtxNamesNoXclbin", "wt=sc.wt", "ctx", "k9", {"ctx 'k9' names no xclbin record"}),
      {"SecondInstsStreamForOneCtx",
       [](BundleFixture& f) {
         const int first = line_of(f, "wt=c2.g0");
         const int line = line_of(f, "wt=c2.g1");
         f.set_field(line, "insts", "kernels/stem.insts.bin");
         return at_manifest(f, line, {"second instruction stream", "line " + std::to_string(first)});
       }},
  };
}

std::vector<Defect> structure_defects() {
  return {
      {"TwoInputSteps",
       [](BundleFixture& f) {
         const int first = line_of(f, "input ");
         f.insert_manifest_line(first + 1, "input buf=7 c=8 h=8 w=8 tensor=ref.input");
         return at_manifest(f, first + 1, {"second input step", "line " + std::to_string(first)});
       }},
      {"StepAfterHead",
       [](BundleFixture& f) {
         const int head = line_of(f, "head ");
         f.insert_manifest_line(head + 1, "bias buf=6 c=16 h=4 w=4 bias=c2.bias");
         return at_manifest(f, head + 1, {"step after the head (line " + std::to_string(head) + ")"});
       }},
      {"NoHead",
       [](BundleFixture& f) {
         f.erase_manifest_line(line_of(f, "head "));
         return Expected{ErrorKind::Bundle, "manifest.txt", "", {"no head step"}};
       }},
      {"NoSteps",
       [](BundleFixture& f) {
         const int input = line_of(f, "input ");
         while (f.manifest_line_count() >= input) f.erase_manifest_line(input);
         return Expected{ErrorKind::Bundle, "manifest.txt", "", {"no input step"}};
       }},
      field_defect("InputChannelsNotMultipleOf8", "input ", "c", "12", {"input c=12 is not a multiple of 8"}),
      field_defect("InputZeroHeight", "input ", "h", "0", {"key 'h' = 0 is out of range"}),
      field_defect("IcgNotMultipleOf8", "wt=sc.wt", "icg", "12", {"icg=12 is not a multiple of 8"}),
      field_defect("ChannelGroupBeyondIct", "wt=c2.g1", "c0", "2", {"8*c0+icg=24 exceeds ict=16"}),
      field_defect("OcNotMultipleOf8", "wt=sc.wt", "oc", "12", {"oc=12 is not a multiple of 8"}),
      field_defect("WpSmallerThanW", "wt=c2.g0", "wp", "4", {"wp=4 is smaller than w=8"}),
      field_defect("OwpSmallerThanOw", "wt=c2.g0", "owp", "6", {"owp=6 is smaller than ow=8"}),
      field_defect("OhDiffersFromH", "wt=sc.wt", "oh", "4", {"stride 1"}),
      field_defect("OwDiffersFromW", "wt=sc.wt", "ow", "4", {"stride 1"}),
      field_defect("ConvRecordsDisagreeOnOut", "wt=c2.g1", "out", "9", {"disagrees on 'out'", "line "}),
      field_defect("ConvRecordsDisagreeOnIn", "wt=c2.g1", "in", "1", {"disagrees on 'in'"}),
      field_defect("ConvRecordsDisagreeOnOwp", "wt=c2.g1", "owp", "16", {"disagrees on 'owp'"}),
      {"ConvRecordsDisagreeOnOc",
       [](BundleFixture& f) {
         f.add_bf16_tensor("c2.g1_oc24", 24 * 8 * 9);
         const int first = line_of(f, "wt=c2.g0");
         const int line = line_of(f, "wt=c2.g1");
         f.set_field(line, "wt", "c2.g1_oc24");
         f.set_field(line, "oc", "24");
         return at_manifest(f, line, {"disagrees on 'oc'", "line " + std::to_string(first)});
       }},
      field_defect("OverlappingChannelGroups", "wt=c2.g1", "c0", "0", {"input channel group 0 is already covered"}),
      field_defect("FirstZeroWithoutOpenConv", "wt=sc.wt", "first", "0", {"first=0 but no conv is open"}),
      field_defect("FirstOneWhileConvOpen", "wt=c2.g1", "first", "1", {"first=1 while the conv started at line"}),
      {"ConvGroupNeverClosed",
       [](BundleFixture& f) {
         const int first = line_of(f, "wt=c2.g0");
         while (f.manifest_line_count() > first) f.erase_manifest_line(first + 1);
         return at_manifest(f, first, {"conv has no last=1 record"});
       }},
      {"NonConvStepInsideOpenConv",
       [](BundleFixture& f) {
         const int first = line_of(f, "wt=c2.g0");
         f.insert_manifest_line(first + 1, "bias buf=2 c=16 h=8 w=8 bias=c2.bias");
         return at_manifest(f, first + 1, {"conv started at line " + std::to_string(first) + " has no last=1 record"});
       }},
      field_defect("HeadKNotCHW", "head ", "k", "255", {"k=255 differs from c*h*w=256"}),
      field_defect("HeadNZero", "head ", "n", "0", {"key 'n' = 0 is out of range"}),
      field_defect("SubsampleStrideZero", "subsample ", "stride", "0", {"key 'stride' = 0 is out of range"}),
      field_defect("SubsampleStrideEmptiesBuffer", "subsample ", "stride", "9", {"leaves an empty buffer"}),
      // Dims that pass every other check, but whose padded conv output would need > 4 GiB.
      {"ActivationMemoryOverBoundViaOwp",
       [](BundleFixture& f) {
         f.add_bf16_tensor("big.input", 8 * 1024);
         f.add_bf16_tensor("big.wt", 8 * 8);
         const int input = line_of(f, "input ");
         f.replace_manifest_line(input, "input buf=0 c=8 h=1024 w=1 tensor=big.input");
         f.insert_manifest_line(input + 1,
                                "conv in=0 ict=8 h=1024 w=1 c0=0 icg=8 wp=1 oc=8 oh=1024 ow=1 owp=1048576 ctx=k1 "
                                "insts=kernels/conv1x1.insts.bin wt=big.wt out=9 first=1 last=1");
         return at_manifest(f, input + 1, {"activation memory would exceed 4 GiB"});
       }},
      {"ActivationMemoryOverBoundViaWp",
       [](BundleFixture& f) {
         f.add_bf16_tensor("big.input", 8 * 1024);
         f.add_bf16_tensor("big.wt", 8 * 8);
         const int input = line_of(f, "input ");
         f.replace_manifest_line(input, "input buf=0 c=8 h=1024 w=1 tensor=big.input");
         f.insert_manifest_line(input + 1,
                                "conv in=0 ict=8 h=1024 w=1 c0=0 icg=8 wp=1048576 oc=8 oh=1024 ow=1 owp=1 ctx=k1 "
                                "insts=kernels/conv1x1.insts.bin wt=big.wt out=9 first=1 last=1");
         return at_manifest(f, input + 1, {"activation memory would exceed 4 GiB"});
       }},
  };
}

std::vector<Defect> all_defects() {
  std::vector<Defect> all;
  for (auto group : {file_defects(), container_defects(), field_defects(), buffer_and_tensor_defects(),
                     tensor_index_defects(), path_defects(), structure_defects()})
    for (Defect& defect : group) all.push_back(std::move(defect));
  return all;
}

LoadOptions reference_backend() {
  LoadOptions options;
  options.backend = "cpu-reference";
  options.threads = 1;
  return options;
}

// The message quotes the line as located_message() does: shortened past 160 characters.
std::string quoted(const std::string& line) {
  constexpr std::size_t kMaxQuoted = 160;
  return "\"" + (line.size() > kMaxQuoted ? line.substr(0, kMaxQuoted) + "..." : line) + "\"";
}

TEST(MalformedBundleBaseline, UnmodifiedFixtureLoads) {
  BundleFixture fixture;
  auto loaded = IrEmbedder::load(fixture.dir(), reference_backend());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
}

TEST(MalformedBundleBaseline, DefectNamesAreDistinctAndEnough) {
  const std::vector<Defect> defects = all_defects();
  std::set<std::string> names;
  for (const Defect& d : defects) EXPECT_TRUE(names.insert(d.name).second) << d.name;
  EXPECT_GE(defects.size(), 40u);
}

class MalformedBundle : public ::testing::TestWithParam<Defect> {};

TEST_P(MalformedBundle, LoadFailsNamingFileAndLine) {
  BundleFixture fixture;
  const Expected expected = GetParam().apply(fixture);
  fixture.flush();

  auto loaded = IrEmbedder::load(fixture.dir(), reference_backend());
  ASSERT_FALSE(loaded.ok()) << "a bundle with defect " << GetParam().name << " loaded";
  const Error& error = loaded.error();
  RecordProperty("message", error.message);  // visible with --gtest_output=xml
  EXPECT_STREQ(to_string(error.kind), to_string(expected.kind)) << error.message;
  EXPECT_THAT(error.message, HasSubstr(expected.location));
  if (!expected.quote.empty()) {
    EXPECT_THAT(error.message, HasSubstr(quoted(expected.quote)));
  }
  for (const std::string& mention : expected.mentions) EXPECT_THAT(error.message, HasSubstr(mention));
}

INSTANTIATE_TEST_SUITE_P(Defects, MalformedBundle, ::testing::ValuesIn(all_defects()),
                         [](const ::testing::TestParamInfo<Defect>& info) { return info.param.name; });

}  // namespace
}  // namespace taconite::testing
