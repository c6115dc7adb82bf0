// A hand-made Plan of independent conv dispatches (each its own kernel context, with a valid
// xclbin and a placeholder instruction stream on disk) to drive NPU ConvDevices directly.
#pragma once

#include <filesystem>
#include <memory>
#include <vector>

#include "numerics/bf16.hpp"
#include "plan/plan.hpp"
#include "replay/conv_device.hpp"

namespace taconite::npu_test {

struct ConvCase {
  int kernel, icg, oc, h, w, wp, owp;
};

class ConvPlanFixture {
 public:
  // Writes kernels into a fresh temporary directory (removed at destruction).
  explicit ConvPlanFixture(const std::vector<ConvCase>& cases, unsigned seed = 1);
  ~ConvPlanFixture();
  ConvPlanFixture(const ConvPlanFixture&) = delete;
  ConvPlanFixture& operator=(const ConvPlanFixture&) = delete;

  const plan::Plan& plan() const { return plan_; }
  std::size_t size() const { return cases_.size(); }
  const std::filesystem::path& dir() const { return dir_; }
  // Dispatch i with its input and a fresh output buffer (zeroed).
  replay::ConvDispatch dispatch(std::size_t i, std::vector<numerics::bf16_t>& output) const;
  std::size_t output_elements(std::size_t i) const;

 private:
  std::filesystem::path dir_;
  std::vector<ConvCase> cases_;
  std::vector<std::vector<numerics::bf16_t>> inputs_, weights_;
  plan::Plan plan_;
};

// Runs every dispatch of the fixture on `device`; returns the outputs.
std::vector<std::vector<numerics::bf16_t>> run_all(replay::ConvDevice& device, const ConvPlanFixture& fixture);

}  // namespace taconite::npu_test
