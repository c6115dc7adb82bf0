// Milliseconds per face of several models embedding the same aligned faces at batch 1 (Session::
// embed, one face a call) and batch 8 (Session::embed_batch), in interleaved rounds: every round
// times every model once, so drifting machine load hits them alike; the figures are medians over
// the rounds. Wall time and process CPU time (all threads) both.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <opencv2/core.hpp>

#include "taconite/model.hpp"

namespace taconite::realfaces {

struct TimedModel {
  std::string label;
  std::shared_ptr<const Model> model;
};

struct FaceTiming {
  std::string label;
  std::string backend;
  int batch = 1;
  double wall_ms = 0.0;  // median per face
  double cpu_ms = 0.0;   // median process CPU time per face
};

// Times each model on `aligned_rgb` (a multiple of 8 faces, normalised for each model as it says)
// after one warm-up pass per batch size; `rounds` >= 1. Errors: a session's or embed's, naming the model.
Result<std::vector<FaceTiming>> time_models(const std::vector<TimedModel>& models,
                                            const std::vector<cv::Mat>& aligned_rgb, int rounds);

}  // namespace taconite::realfaces
