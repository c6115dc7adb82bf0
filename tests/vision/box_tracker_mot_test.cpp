// taconitetrack's BoxTracker on synthetic MOT-style sequences (no GStreamer): seeded sequences of
// moving face boxes with ground-truth ids (crossing faces, an occlusion, flicker, flickering false
// positives, jitter, a scale change), each run through the tracker before the motion gate and the
// second pass ("today's", legacy_policy) and the ByteTrack-grade one (TrackerPolicy defaults).
// Counted per scenario over kRuns seeds, MOT-style: id switches (an object's track id changes),
// fragmentations (an object's tracked status is interrupted and resumes) and false ids (confirmed
// ids given to false detections). The table is printed (docs/gstreamer.md quotes it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "box_tracker.hpp"

namespace {

using taconite::vision::BoxTracker;
using taconite::vision::Box;
using taconite::vision::Detection;
using taconite::vision::iou;
using taconite::vision::legacy_policy;
using taconite::vision::TrackerPolicy;

constexpr int kRuns = 20;               // seeds per scenario
constexpr double kDetectorCut = 0.5;    // what today's tracker is fed: boxes a detector's score threshold keeps

struct TruthDetection {
  Detection detection;
  int object = -1;  // ground-truth id; -1: a false positive
};

struct Frame {
  std::vector<int> visible;  // objects in view (detected or not)
  std::vector<TruthDetection> detections;
};

using Sequence = std::vector<Frame>;

struct Counts {
  int switches = 0, fragmentations = 0, false_ids = 0;
  Counts& operator+=(const Counts& c) {
    switches += c.switches;
    fragmentations += c.fragmentations;
    false_ids += c.false_ids;
    return *this;
  }
};

// Runs `tracker` over the sequence with the detections at least `least_confidence` confident and
// counts: the hypothesis for an object in a frame is the id its detection got (none when it was not
// detected or got no id); frames an object is out of view do not count.
Counts evaluate(const Sequence& sequence, const TrackerPolicy& policy, double least_confidence) {
  BoxTracker tracker;
  struct ObjectState {
    std::optional<std::int64_t> last_id;
    bool tracked = false, interrupted = false;
    int switches = 0, fragmentations = 0;
  };
  std::map<int, ObjectState> objects;
  std::set<std::int64_t> false_ids;
  for (const Frame& frame : sequence) {
    std::vector<Detection> fed;
    std::vector<int> fed_object;
    for (const TruthDetection& d : frame.detections) {
      if (d.detection.confidence < least_confidence) continue;
      fed.push_back(d.detection);
      fed_object.push_back(d.object);
    }
    const auto results = tracker.update(fed, policy);
    std::map<int, std::optional<std::int64_t>> hypothesis;
    for (std::size_t k = 0; k < fed.size(); ++k) {
      if (fed_object[k] < 0) {
        if (results[k].id) false_ids.insert(*results[k].id);
      } else {
        hypothesis[fed_object[k]] = results[k].id;
      }
    }
    for (int object : frame.visible) {
      ObjectState& s = objects[object];
      const std::optional<std::int64_t> id = hypothesis.count(object) ? hypothesis[object] : std::nullopt;
      if (!id) {
        if (s.tracked) s.interrupted = true;
        s.tracked = false;
        continue;
      }
      if (s.last_id && *s.last_id != *id) ++s.switches;
      if (s.interrupted) ++s.fragmentations;
      s.last_id = id;
      s.tracked = true;
      s.interrupted = false;
    }
  }
  Counts counts;
  for (const auto& [object, s] : objects) {
    counts.switches += s.switches;
    counts.fragmentations += s.fragmentations;
  }
  counts.false_ids = static_cast<int>(false_ids.size());
  return counts;
}

// A face box moving from `start` by `velocity` per frame, `size` pixels, its detection jittered.
struct Mover {
  double x, y, vx, vy, size, growth = 0.0;  // growth: size added per frame
  Box at(int t) const { return {x + vx * t, y + vy * t, size + growth * t, size + growth * t}; }
};

Detection detected(const Box& truth, std::mt19937& random, double jitter, double confidence = 0.9) {
  std::normal_distribution<double> noise(0.0, jitter);
  const double grow = noise(random);
  return {{truth.x + noise(random) - grow / 2, truth.y + noise(random) - grow / 2, truth.width + grow,
           truth.height + grow},
          confidence};
}

constexpr int kFrames = 80;

// Two faces walk towards each other on nearly one row, cross and part; while they overlap, the
// one behind is hidden (a detector's suppression keeps the front one).
Sequence crossing(std::mt19937& random) {
  const Mover a{20, 100, 3.0, 0.2, 50}, b{260, 108, -3.0, -0.2, 50};
  Sequence sequence;
  for (int t = 0; t < kFrames; ++t) {
    Frame frame;
    frame.visible = {0};
    frame.detections.push_back({detected(a.at(t), random, 1.0), 0});
    if (iou(a.at(t), b.at(t)) < 0.3) {
      frame.visible.push_back(1);
      frame.detections.push_back({detected(b.at(t), random, 1.0), 1});
    }
    sequence.push_back(frame);
  }
  return sequence;
}

// A face walks behind a pillar for 12 frames, slowing down there, and comes back 60 % of its
// width behind where constant velocity puts it (IoU with the prediction about 0.25).
Sequence occlusion(std::mt19937& random) {
  const Mover walk{20, 100, 2.5, 0.0, 40};
  constexpr int kHiddenFrom = 25, kHiddenFrames = 12;
  const double lag = 0.6 * walk.size;
  Sequence sequence;
  for (int t = 0; t < kFrames; ++t) {
    Frame frame;
    if (t >= kHiddenFrom && t < kHiddenFrom + kHiddenFrames) {
      sequence.push_back(frame);
      continue;
    }
    Box truth = walk.at(t);
    if (t >= kHiddenFrom + kHiddenFrames) truth.x -= lag;
    frame.visible = {0};
    frame.detections.push_back({detected(truth, random, 1.0), 0});
    sequence.push_back(frame);
  }
  return sequence;
}

// Two faces apart; each frame a face's detection is missing with p 0.1 and weak (confidence 0.2
// to 0.45, a blurred or turned face) with p 0.3.
Sequence flicker(std::mt19937& random) {
  const Mover faces[] = {{30, 60, 1.5, 0.5, 45}, {220, 120, -1.0, 0.3, 55}};
  std::uniform_real_distribution<double> chance(0.0, 1.0), weak(0.2, 0.45);
  Sequence sequence;
  for (int t = 0; t < kFrames; ++t) {
    Frame frame;
    for (int f = 0; f < 2; ++f) {
      frame.visible.push_back(f);
      const double roll = chance(random);
      if (roll < 0.1) continue;
      frame.detections.push_back({detected(faces[f].at(t), random, 1.0, roll < 0.4 ? weak(random) : 0.9), f});
    }
    sequence.push_back(frame);
  }
  return sequence;
}

// One face and, each frame with p 0.5, a weak false detection (confidence 0.15 to 0.45) at one of
// three places (a poster, a shadow, a coat), so false positives recur where they were.
Sequence false_positives(std::mt19937& random) {
  const Mover face{40, 80, 1.5, 0.3, 50};
  const Box places[] = {{250, 20, 40, 40}, {200, 160, 35, 35}, {20, 180, 45, 45}};
  std::uniform_real_distribution<double> chance(0.0, 1.0), weak(0.15, 0.45);
  std::uniform_int_distribution<int> place(0, 2);
  Sequence sequence;
  for (int t = 0; t < kFrames; ++t) {
    Frame frame;
    frame.visible = {0};
    frame.detections.push_back({detected(face.at(t), random, 1.0), 0});
    if (chance(random) < 0.5) {
      Detection fp = detected(places[place(random)], random, 1.0, weak(random));
      frame.detections.push_back({fp, -1});
    }
    sequence.push_back(frame);
  }
  return sequence;
}

// Two faces close together, walking side by side, boxes jittered by 3 pixels (sigma).
Sequence jitter(std::mt19937& random) {
  const Mover faces[] = {{40, 90, 1.5, 0.2, 45}, {100, 95, 1.5, 0.2, 45}};
  Sequence sequence;
  for (int t = 0; t < kFrames; ++t) {
    Frame frame;
    for (int f = 0; f < 2; ++f) {
      frame.visible.push_back(f);
      frame.detections.push_back({detected(faces[f].at(t), random, 3.0), f});
    }
    sequence.push_back(frame);
  }
  return sequence;
}

// A face walks towards the camera: 30 to 150 pixels over the sequence, drifting sideways.
Sequence scale_change(std::mt19937& random) {
  const Mover face{140, 100, -1.0, -0.8, 30, 1.5};
  Sequence sequence;
  for (int t = 0; t < kFrames; ++t) {
    Frame frame;
    frame.visible = {0};
    frame.detections.push_back({detected(face.at(t), random, 1.5), 0});
    sequence.push_back(frame);
  }
  return sequence;
}

struct Scenario {
  const char* name;
  Sequence (*make)(std::mt19937&);
};

const Scenario kScenarios[] = {{"crossing", crossing},         {"occlusion", occlusion}, {"flicker", flicker},
                               {"false-positives", false_positives}, {"jitter", jitter},  {"scale-change", scale_change}};

struct Row {
  Counts today_cut, today_all, bytetrack;
};

// Every scenario over kRuns seeds: today's fed the boxes a detector keeps at kDetectorCut (what
// it is run with, since every box it sees may start a track), today's fed every box, and the
// ByteTrack-grade tracker fed every box.
std::map<std::string, Row> run_all() {
  std::map<std::string, Row> rows;
  for (const Scenario& scenario : kScenarios) {
    Row& row = rows[scenario.name];
    for (int seed = 1; seed <= kRuns; ++seed) {
      std::mt19937 random(static_cast<std::mt19937::result_type>(seed));
      const Sequence sequence = scenario.make(random);
      row.today_cut += evaluate(sequence, legacy_policy(), kDetectorCut);
      row.today_all += evaluate(sequence, legacy_policy(), 0.0);
      row.bytetrack += evaluate(sequence, TrackerPolicy{}, 0.0);
    }
  }
  return rows;
}

const std::map<std::string, Row>& results() {
  static const std::map<std::string, Row> rows = run_all();
  return rows;
}

TEST(TrackerMotTest, PrintsTheTable) {
  std::printf("| sequence (%d seeds x %d frames) | id switches: today's (>= %.1f) / today's (all) / new | "
              "fragmentations: today's (>= %.1f) / today's (all) / new | false ids: today's (all) / new |\n",
              kRuns, kFrames, kDetectorCut, kDetectorCut);
  std::printf("|---|---|---|---|\n");
  for (const Scenario& scenario : kScenarios) {
    const Row& r = results().at(scenario.name);
    std::printf("| %s | %d / %d / %d | %d / %d / %d | %d / %d |\n", scenario.name, r.today_cut.switches,
                r.today_all.switches, r.bytetrack.switches, r.today_cut.fragmentations, r.today_all.fragmentations,
                r.bytetrack.fragmentations, r.today_all.false_ids, r.bytetrack.false_ids);
  }
}

// Bounds: on every sequence, the new tracker is never worse than today's fed the same boxes.
// Where it is meant to help it is strictly better: the occlusion (the face comes back inside the
// gate, not the overlap: today's gives it a new id almost every seed, the new one none), flicker
// (weak frames continue tracks in pass 2 instead of being cut at the detector) and false
// positives (weak boxes never start tracks). Id switches: zero allowed except on the crossing,
// where one swap per five runs (4 over 20 seeds) is tolerated: while the faces overlap the hidden
// one is not detected at all, and no motion model can be sure which side it comes back on.
TEST(TrackerMotTest, TheByteTrackGradeTrackerBeatsTodaysWhereItShouldAndIsNeverWorse) {
  for (const Scenario& scenario : kScenarios) {
    const Row& r = results().at(scenario.name);
    SCOPED_TRACE(scenario.name);
    EXPECT_LE(r.bytetrack.switches, std::string(scenario.name) == "crossing" ? kRuns / 5 : 0);
    EXPECT_LE(r.bytetrack.switches, std::min(r.today_cut.switches, r.today_all.switches));
    EXPECT_LE(r.bytetrack.fragmentations, std::min(r.today_cut.fragmentations, r.today_all.fragmentations));
    EXPECT_LE(r.bytetrack.false_ids, r.today_all.false_ids);
  }
  const Row& occluded = results().at("occlusion");
  EXPECT_LT(occluded.bytetrack.switches, occluded.today_all.switches);
  EXPECT_LT(occluded.bytetrack.fragmentations, occluded.today_all.fragmentations);
  const Row& flickering = results().at("flicker");
  EXPECT_LT(flickering.bytetrack.fragmentations, flickering.today_cut.fragmentations);
  const Row& false_positives = results().at("false-positives");
  EXPECT_LT(false_positives.bytetrack.false_ids, false_positives.today_all.false_ids);
}

// legacy_policy is today's tracker: on a lost track coming back at IoU 0.25 with its prediction it
// starts a new track (today's behaviour), the default policy brings the old id back.
TEST(TrackerMotTest, ALostFaceBackInsideTheGateGetsItsIdBackOnlyWithTheGate) {
  for (const bool gate : {false, true}) {
    BoxTracker tracker;
    TrackerPolicy policy = gate ? TrackerPolicy{} : legacy_policy();
    std::optional<std::int64_t> id;
    for (int t = 0; t < 10; ++t) id = tracker.update_boxes({{20.0 + 2.5 * t, 100, 40, 40}}, policy)[0];
    ASSERT_EQ(id, 1);
    for (int t = 10; t < 20; ++t) tracker.update_boxes({}, policy);
    const Box back{20.0 + 2.5 * 20 - 24, 100, 40, 40};  // 24 pixels behind the prediction
    const auto ids = tracker.update_boxes({back}, policy);
    if (gate)
      EXPECT_EQ(ids[0], 1);
    else
      EXPECT_EQ(ids[0], std::nullopt) << "today's starts a new track";
  }
}

// Weak boxes continue a track matched in the previous frame but never start one.
TEST(TrackerMotTest, WeakBoxesContinueTracksButNeverStartThem) {
  BoxTracker tracker;
  const TrackerPolicy policy;
  for (int t = 0; t < 3; ++t) tracker.update({Detection{{50, 50, 40, 40}, 0.9}}, policy);
  EXPECT_EQ(tracker.update({Detection{{51, 50, 40, 40}, 0.3}}, policy)[0].id, 1) << "pass 2 continues it";
  EXPECT_EQ(tracker.update({Detection{{200, 50, 40, 40}, 0.3}}, policy)[0].id, std::nullopt);
  EXPECT_EQ(tracker.size(), 1u) << "the weak box far away started no track";
  EXPECT_EQ(tracker.update({Detection{{52, 50, 40, 40}, 0.05}}, policy)[0].id, std::nullopt) << "below low";
}

}  // namespace
