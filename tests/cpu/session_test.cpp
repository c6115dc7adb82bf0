// Model / Session: several sessions of one model embed concurrently (on cpu) and
// give exactly what one session gives; sessions share the model's weights instead of copying them;
// the session contract (keeps its model alive, moved-from and null-model errors).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

#include "bundle/bundle.hpp"
#include "bundle_cache.hpp"
#include "cpu/cpu_executor.hpp"
#include "cpu/fused_graph.hpp"
#include "cpu/weight_store.hpp"
#include "plan/plan.hpp"
#include "taconite/inspect.hpp"
#include "taconite/model.hpp"

namespace taconite::cpu_test {
namespace {

constexpr int kSessions = 4;
constexpr int kRounds = 3;

std::shared_ptr<const Model> load_model(const std::filesystem::path& dir, const std::string& backend, int threads) {
  LoadOptions options;
  options.backend = backend;
  options.threads = threads;
  Result<std::shared_ptr<const Model>> model = Model::load(dir, options);
  if (!model) {
    ADD_FAILURE() << model.error().message;
    return nullptr;
  }
  return std::move(model).value();
}

// Distinct faces around the bundle's recorded one (so a mix-up between sessions would show).
std::vector<std::vector<float>> distinct_faces(const Model& model, int count) {
  const std::vector<float> base = inspect::reference_f32(model, "ref.input_chw");
  std::vector<std::vector<float>> faces;
  for (int k = 0; k < count; ++k) {
    std::vector<float> face = base;
    for (std::size_t i = 0; i < face.size(); ++i)
      face[i] = std::clamp(face[i] * (1.0f - 0.15f * static_cast<float>(k)) + 0.01f * static_cast<float>(k), -1.0f,
                           1.0f);
    faces.push_back(std::move(face));
  }
  return faces;
}

FaceChw view(const std::vector<float>& data, const Model& model) {
  return FaceChw{data, 3, model.input_dims().height, model.input_dims().width};
}

// What each of kSessions threads computes for its own face, single and as a batch of all faces,
// kRounds times, every thread with its own session of `model`.
struct Outcome {
  std::vector<Embedding> singles;                    // by session
  std::vector<std::vector<Embedding>> batches;       // by session
  std::vector<std::string> errors;
};

Outcome embed_concurrently(const std::shared_ptr<const Model>& model, const std::vector<std::vector<float>>& faces) {
  Outcome outcome;
  outcome.singles.resize(kSessions);
  outcome.batches.resize(kSessions);
  outcome.errors.resize(kSessions);
  std::vector<FaceChw> all;
  for (const auto& face : faces) all.push_back(view(face, *model));
  std::vector<std::thread> threads;
  for (int s = 0; s < kSessions; ++s)
    threads.emplace_back([&, s] {
      Result<Session> session = Session::create(model);
      if (!session) {
        outcome.errors[s] = session.error().message;
        return;
      }
      for (int round = 0; round < kRounds; ++round) {
        Result<Embedding> single = session.value().embed(all[static_cast<std::size_t>(s)]);
        Result<std::vector<Embedding>> batch = session.value().embed_batch(all);
        if (!single || !batch) {
          outcome.errors[s] = single ? batch.error().message : single.error().message;
          return;
        }
        if (round > 0 && (single.value() != outcome.singles[s] || batch.value() != outcome.batches[s])) {
          outcome.errors[s] = "round " + std::to_string(round) + " differs from round 0";
          return;
        }
        outcome.singles[s] = std::move(single).value();
        outcome.batches[s] = std::move(batch).value();
      }
    });
  for (std::thread& t : threads) t.join();
  return outcome;
}

class ConcurrentSessions : public testing::TestWithParam<std::string> {};

TEST_P(ConcurrentSessions, GiveExactlyWhatOneSessionGives) {
  const std::filesystem::path dir = test_bundle("ir-tiny");
  ASSERT_FALSE(dir.empty());
  const std::shared_ptr<const Model> model = load_model(dir, GetParam(), 1);
  ASSERT_TRUE(model);
  const std::vector<std::vector<float>> faces = distinct_faces(*model, kSessions);

  // The reference: one session, alone.
  Result<Session> alone = Session::create(model);
  ASSERT_TRUE(alone) << alone.error().message;
  std::vector<FaceChw> all;
  for (const auto& face : faces) all.push_back(view(face, *model));
  std::vector<Embedding> expected_singles;
  for (const FaceChw& face : all) {
    Result<Embedding> e = alone.value().embed(face);
    ASSERT_TRUE(e) << e.error().message;
    expected_singles.push_back(std::move(e).value());
  }
  Result<std::vector<Embedding>> expected_batch = alone.value().embed_batch(all);
  ASSERT_TRUE(expected_batch) << expected_batch.error().message;
  ASSERT_NE(expected_singles[0], expected_singles[1]) << "the faces must differ for the test to mean anything";

  const Outcome outcome = embed_concurrently(model, faces);
  for (int s = 0; s < kSessions; ++s) {
    EXPECT_EQ(outcome.errors[s], "") << "session " << s;
    EXPECT_EQ(outcome.singles[s], expected_singles[static_cast<std::size_t>(s)]) << "session " << s;
    EXPECT_EQ(outcome.batches[s], expected_batch.value()) << "session " << s;
  }
}

// cpu-reference sessions: tests/unit/replay_test.cpp (on the small fixture network: fast).
INSTANTIATE_TEST_SUITE_P(Backends, ConcurrentSessions, testing::Values("cpu"));

// Every session's networks read the backend's one WeightStore, and running sessions (batch 1, the
// layout the load prepared) adds no weight bytes to it.
TEST(SessionWeights, SessionsShareTheModelsWeights) {
  const std::filesystem::path dir = test_bundle("ir-tiny");
  ASSERT_FALSE(dir.empty());
  const bundle::Bundle bundle = bundle::Bundle::open(dir);
  const plan::Plan plan = plan::build_plan(bundle);
  cpu::Lowering lowering = cpu::lower_plan(plan);
  ASSERT_TRUE(lowering.graph) << lowering.refusal;
  const auto backend = cpu::make_cpu_backend(std::move(*lowering.graph), {cpu::CpuOptions::Precision::Auto, 1});
  const std::size_t bytes = backend->weights().bytes();
  ASSERT_GT(bytes, 0u);
  std::vector<std::unique_ptr<cpu::CpuSession>> sessions;
  for (int s = 0; s < kSessions; ++s) sessions.push_back(backend->new_session());
  std::vector<std::thread> threads;
  for (auto& session : sessions)
    threads.emplace_back([&] { session->forward(plan.input_step().recorded); });
  for (std::thread& t : threads) t.join();
  for (const auto& session : sessions) EXPECT_EQ(&session->weights(), &backend->weights());
  EXPECT_EQ(backend->weights().bytes(), bytes) << "a session copied or re-laid-out weights";
}

TEST(SessionContract, KeepsItsModelAliveAndRefusesMisuse) {
  const std::filesystem::path dir = test_bundle("ir-tiny");
  ASSERT_FALSE(dir.empty());
  std::shared_ptr<const Model> model = load_model(dir, "cpu", 1);
  ASSERT_TRUE(model);
  const std::vector<float> face = inspect::reference_f32(*model, "ref.input_chw");
  const FaceChw input = view(face, *model);
  EXPECT_EQ(model->input_dims().channels, 3);

  Result<Session> session = Session::create(model);
  ASSERT_TRUE(session) << session.error().message;
  const std::weak_ptr<const Model> watch = model;
  model.reset();  // the session keeps it alive
  ASSERT_FALSE(watch.expired());
  EXPECT_EQ(session.value().model(), watch.lock());
  EXPECT_TRUE(session.value().embed(input).ok());

  Session moved = std::move(session).value();
  EXPECT_TRUE(moved.embed(input).ok());
  Session& moved_from = session.value();
  const Result<Embedding> refused = moved_from.embed(input);  // NOLINT(bugprone-use-after-move): the point
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::Input);
  EXPECT_EQ(moved_from.model(), nullptr);

  const Result<Session> no_model = Session::create(nullptr);
  ASSERT_FALSE(no_model.ok());
  EXPECT_EQ(no_model.error().kind, ErrorKind::Input);
}

}  // namespace
}  // namespace taconite::cpu_test
