// After load() the engine must not depend on tensors.bin: truncating it in place (which used to
// kill the process with SIGBUS) or overwriting it in place (which used to change the results)
// changes nothing, for the fused cpu network (which releases the bundle's bytes) and the replay
// (which keeps a private copy). New batch sizes built after the change must not read it either.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bundle_cache.hpp"
#include "taconite/embedder.hpp"
#include "taconite/inspect.hpp"

namespace taconite::cpu_test {
namespace {

namespace fs = std::filesystem;

struct Outputs {
  Embedding recorded;
  std::vector<Embedding> batch;  // embed_batch of 3 faces
  std::vector<float> reference;  // reference_f32("ref.npu_embedding")
};

Outputs run_engine(IrEmbedder& engine, const std::vector<float>& chw) {
  Outputs out;
  auto recorded = inspect::embed_recorded(engine);
  EXPECT_TRUE(recorded.ok()) << recorded.error().message;
  if (recorded) out.recorded = recorded.value();
  const FaceChw face{chw, 3, 112, 112};
  const std::vector<FaceChw> faces{face, face, face};
  auto batch = engine.embed_batch(faces);
  EXPECT_TRUE(batch.ok()) << batch.error().message;
  if (batch) out.batch = batch.value();
  out.reference = inspect::reference_f32(engine, "ref.npu_embedding");
  return out;
}

class DetachedBundle : public ::testing::TestWithParam<std::string> {
 protected:
  // A private copy of the IR-tiny bundle (the test damages its tensors.bin) and an engine on it.
  void SetUp() override {
    dir_ = scratch_dir("detached-" + GetParam());
    fs::copy(test_bundle("ir-tiny"), dir_, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    LoadOptions options;
    options.backend = GetParam();
    options.threads = 1;
    auto loaded = IrEmbedder::load(dir_, options);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    engine_.emplace(std::move(loaded.value()));
    chw_ = inspect::reference_f32(*engine_, "ref.input_chw");
    ASSERT_EQ(chw_.size(), 3u * 112 * 112);
    // Only the batch-1 network exists so far: the batch-3 one is built after the damage.
    auto one = engine_->embed({chw_, 3, 112, 112});
    ASSERT_TRUE(one.ok()) << one.error().message;
    first_face_ = one.value();
    auto recorded = inspect::embed_recorded(*engine_);
    ASSERT_TRUE(recorded.ok());
    recorded_ = recorded.value();
    reference_ = inspect::reference_f32(*engine_, "ref.npu_embedding");
    ASSERT_FALSE(reference_.empty());
  }

  void expect_unchanged() {
    const Outputs after = run_engine(*engine_, chw_);
    EXPECT_EQ(after.recorded, recorded_);
    ASSERT_EQ(after.batch.size(), 3u);
    for (const Embedding& e : after.batch) EXPECT_GE(cosine(e, first_face_), 0.99999);
    EXPECT_EQ(after.reference, reference_);
  }

  fs::path tensors_bin() const { return dir_ / "tensors.bin"; }

  fs::path dir_;
  std::optional<IrEmbedder> engine_;
  std::vector<float> chw_;
  Embedding first_face_, recorded_;
  std::vector<float> reference_;
};

TEST_P(DetachedBundle, TruncatingTensorsBinInPlaceChangesNothing) {
  ASSERT_EQ(::truncate(tensors_bin().c_str(), 0), 0);  // same inode: what `> tensors.bin` does
  expect_unchanged();
}

TEST_P(DetachedBundle, OverwritingTensorsBinInPlaceChangesNothing) {
  const auto size = static_cast<std::size_t>(fs::file_size(tensors_bin()));
  {
    std::fstream blob(tensors_bin(), std::ios::in | std::ios::out | std::ios::binary);  // same inode
    const std::vector<char> garbage(size, '\x5a');
    blob.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
    ASSERT_TRUE(blob.good());
  }
  expect_unchanged();
}

INSTANTIATE_TEST_SUITE_P(Backends, DetachedBundle, ::testing::Values("cpu", "cpu-reference"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param == "cpu" ? std::string("Cpu") : std::string("CpuReference");
                         });

}  // namespace
}  // namespace taconite::cpu_test
