// `precision = auto`'s decision on injected timings (no timed assertions) and the race's order of
// calls.
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "cpu/numerics_choice.hpp"

namespace taconite::cpu_test {
namespace {

using cpu::ComputeType;

cpu::NumericsChoice choose(std::vector<double> f32, std::vector<double> bf16) {
  const std::vector<cpu::CandidateTimes> candidates{{ComputeType::F32, std::move(f32)}, {ComputeType::Bf16, std::move(bf16)}};
  return cpu::choose_numerics(candidates);
}

TEST(NumericsChoice, PicksBf16WhenItsMedianIsFaster) {
  const cpu::NumericsChoice choice = choose({24.0, 25.0, 90.0}, {12.0, 50.0, 11.0});
  EXPECT_EQ(choice.type, ComputeType::Bf16);
  EXPECT_NE(choice.reason.find("bf16 12.0 ms"), std::string::npos) << choice.reason;
  EXPECT_NE(choice.reason.find("f32 25.0 ms"), std::string::npos) << choice.reason;
  EXPECT_NE(choice.reason.find("3 interleaved rounds"), std::string::npos) << choice.reason;
}

TEST(NumericsChoice, PicksF32WhenBf16IsSlower) {
  // The Intel Xeon case: bf16 convs ~1.7x slower than f32.
  EXPECT_EQ(choose({24.1, 24.5, 23.9, 24.0}, {33.0, 32.5, 34.0, 33.1}).type, ComputeType::F32);
}

TEST(NumericsChoice, OneOutlierDoesNotDecide) {
  EXPECT_EQ(choose({20.0, 21.0, 20.5}, {30.0, 5.0, 31.0}).type, ComputeType::F32);
}

TEST(NumericsChoice, ANearTieKeepsF32) {
  const cpu::NumericsChoice choice = choose({20.0, 20.0, 20.0}, {19.8, 19.6, 19.7});  // 1.5 % faster
  EXPECT_EQ(choice.type, ComputeType::F32);
  EXPECT_NE(choice.reason.find("no other candidate measured more than 3 % faster"), std::string::npos) << choice.reason;
  EXPECT_EQ(choose({20.0, 20.0, 20.0}, {19.0, 19.0, 19.0}).type, ComputeType::Bf16);  // 5 % faster
}

// The Intel Xeon case with f32's Winograd variant in the race: bf16 slow, Winograd the fastest.
TEST(NumericsChoice, NamesAndPicksTheWinogradVariantWhenItIsFastest) {
  const std::vector<cpu::CandidateTimes> candidates{{ComputeType::F32, {28.0, 27.0, 29.0}},
                                                    {ComputeType::Bf16, {41.0, 39.0}},  // stopped early
                                                    {ComputeType::F32, {20.0, 19.0, 21.0}, true}};
  const cpu::NumericsChoice choice = cpu::choose_numerics(candidates);
  EXPECT_EQ(choice.type, ComputeType::F32);
  EXPECT_TRUE(choice.winograd);
  EXPECT_EQ(choice.reason.rfind("auto: f32-winograd, measured fastest", 0), 0u) << choice.reason;
  EXPECT_NE(choice.reason.find("median of 3 interleaved rounds: f32 28.0 ms, bf16 40.0 ms (2 rounds: outpaced), "
                               "f32-winograd 20.0 ms"),
            std::string::npos)
      << choice.reason;
}

TEST(NumericsChoice, ANearTieWithTheWinogradVariantKeepsDirectF32) {
  const std::vector<cpu::CandidateTimes> candidates{{ComputeType::F32, {20.0, 20.0, 20.0}},
                                                    {ComputeType::F32, {19.7, 19.7, 19.7}, true}};
  const cpu::NumericsChoice choice = cpu::choose_numerics(candidates);
  EXPECT_FALSE(choice.winograd) << "direct f32 is the baseline: its weights are smaller";
  EXPECT_NE(choice.reason.find("auto: f32, no other candidate"), std::string::npos) << choice.reason;
}

TEST(NumericsChoice, EvenRoundsUseTheMeanOfTheMiddleTwo) {
  EXPECT_EQ(choose({10.0, 30.0}, {19.0, 19.0}).type, ComputeType::Bf16);  // f32 median 20
}

TEST(NumericsRace, Outpaced) {
  EXPECT_EQ(cpu::outpaced({{10.0, 12.0}, {18.0, 30.0}}, 1.5), (std::vector<bool>{false, true}));   // 12 * 1.5 <= 18
  EXPECT_EQ(cpu::outpaced({{40.0, 41.0}, {20.0, 26.0}}, 1.5), (std::vector<bool>{true, false}));   // the second one wins
  EXPECT_EQ(cpu::outpaced({{10.0, 13.0}, {18.0, 30.0}}, 1.5), (std::vector<bool>{false, false}));  // 13 * 1.5 > 18
  EXPECT_EQ(cpu::outpaced({{10.0}, {}}, 1.5), (std::vector<bool>{false, false}));
  // Three: the slow one is out, the two close ones race on.
  EXPECT_EQ(cpu::outpaced({{20.0, 22.0}, {60.0, 61.0}, {15.0, 17.0}}, 1.5), (std::vector<bool>{false, true, false}));
}

TEST(NumericsRace, WarmsUpThenAlternatesTheOrderForAtLeastMinRounds) {
  std::string calls;
  const std::function<void()> forwards[] = {[&] { calls += 'a'; }, [&] { calls += 'b'; }};
  // Budget spent at once; never decisive (ratio 1e9).
  const std::vector<std::vector<double>> times = cpu::race(forwards, {3, 9, 0.0, 2, 1e9});
  EXPECT_EQ(calls, "ab" "ab" "ba" "ab");
  ASSERT_EQ(times.size(), 2u);
  EXPECT_EQ(times[0].size(), 3u);
  EXPECT_EQ(times[1].size(), 3u);
}

TEST(NumericsRace, StopsAtMaxRounds) {
  int calls = 0;
  const std::function<void()> forwards[] = {[&] { ++calls; }, [&] { ++calls; }};
  const auto times = cpu::race(forwards, {1, 4, 1e9, 2, 1e9});
  EXPECT_EQ(calls, 2 + 2 * 4);
  EXPECT_EQ(times[0].size(), 4u);
}

TEST(NumericsRace, StopsAfterDecisiveRoundsWhenOneCandidateIsFarSlower) {
  int calls = 0;
  const std::function<void()> forwards[] = {[&] { ++calls; }, [&] { ++calls; }};
  // Ratio 0: any times are decisive, so the race ends after the 2 decisive rounds, before min_rounds.
  const auto times = cpu::race(forwards, {5, 9, 1e9, 2, 0.0});
  EXPECT_EQ(times[0].size(), 2u);
  EXPECT_EQ(calls, 2 + 2 * 2);
}

TEST(NumericsRace, AnOutpacedCandidateStopsWhileTheCloseOnesRaceOn) {
  // Fake forwards whose "time" is what the race measures: the middle one sleeps far longer.
  std::string calls;
  const auto sleeper = [&calls](char name, int ms) {
    return [&calls, name, ms] {
      calls += name;
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    };
  };
  const std::function<void()> forwards[] = {sleeper('a', 1), sleeper('b', 200), sleeper('c', 1)};
  const auto times = cpu::race(forwards, {4, 9, 0.0, 2, 3.0});
  EXPECT_EQ(times[1].size(), 2u) << calls;  // out after the 2 decisive rounds (200 ms >= 3 x ~1 ms)
  EXPECT_EQ(times[0].size(), 4u) << calls;  // a and c run until min_rounds
  EXPECT_EQ(times[2].size(), 4u) << calls;
  EXPECT_EQ(calls, "abc" "abc" "cba" "ac" "ca");
}

}  // namespace
}  // namespace taconite::cpu_test
