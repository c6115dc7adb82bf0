// What run_ir18 measured and how it prints it (text or one JSON object).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace taconite::cli {

inline constexpr double kMatchThreshold = 0.99;
// Spec §5.3: a CPU replay below this against ref.npu_embedding means the packing assumption is wrong.
inline constexpr double kPackingThreshold = 0.999;
inline constexpr const char* kPackingMismatch =
    "CPU replay disagrees with the recorded NPU embedding: the bundle's weight packing differs from the assumed layout";

struct RunReport {
  std::string model;
  std::string backend;
  std::string backend_reason;
  std::string precision;  // IrEmbedder::precision(): f32, bf16, int8 or bf16-exact
  int conv_dispatches = 0;
  int embedding_dim = 0;
  double cold_ms = 0.0;
  std::optional<double> warm_ms;  // mean of reps 2..n
  int reps = 0;                   // all reps, the cold one included
  std::optional<double> cos_recorder;       // replay vs ref.npu_embedding
  std::optional<double> cos_embed_api;      // embed(ref.input_chw) vs replay
  std::optional<double> cos_cpu_reference;  // replay vs ref.cpu_embedding
  std::vector<std::string> diagnostics;

  bool any_reference() const { return cos_recorder || cos_embed_api || cos_cpu_reference; }
  bool matches() const;  // every available cosine > kMatchThreshold
  std::string result() const;  // MATCH, MISMATCH, or UNCHECKED when no reference exists
};

std::string format_text(const RunReport& report);
std::string format_json(const RunReport& report);

}  // namespace taconite::cli
