#include "run_report.hpp"

#include <cstdio>
#include <sstream>

namespace taconite::cli {

namespace {

std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_number(const std::optional<double>& value, int digits) { return value ? fixed(*value, digits) : "null"; }

std::string text_cosine(const std::optional<double>& value, const char* missing) {
  return value ? fixed(*value, 6) : std::string("n/a (") + missing + ")";
}

// The warm mean leaves out rep 1 (the cold one): say which reps it covers, or why there is none.
std::string warm_text(const RunReport& r) {
  if (!r.warm_ms) return "n/a (reps=" + std::to_string(r.reps) + ": only the cold rep ran; pass reps >= 2)";
  return fixed(*r.warm_ms, 2) + " ms over reps 2.." + std::to_string(r.reps);
}

}  // namespace

bool RunReport::matches() const {
  for (const auto& cosine : {cos_recorder, cos_embed_api, cos_cpu_reference})
    if (cosine && !(*cosine > kMatchThreshold)) return false;
  return true;
}

std::string RunReport::result() const {
  if (!any_reference()) return "UNCHECKED";
  return matches() ? "MATCH" : "MISMATCH";
}

std::string format_text(const RunReport& r) {
  std::ostringstream out;
  out << "model:                       " << r.model << '\n'
      << "backend:                     " << r.backend << " (" << r.backend_reason << ")\n"
      << "precision:                   " << r.precision << '\n'
      << "conv dispatches:             " << r.conv_dispatches << '\n'
      << "embedding dims:              " << r.embedding_dim << '\n'
      << "latency cold:                " << fixed(r.cold_ms, 2) << " ms\n"
      << "latency warm (mean):         " << warm_text(r) << '\n'
      << "cosine(replay, recorder):    " << text_cosine(r.cos_recorder, "no ref.npu_embedding") << '\n'
      << "cosine(embed() API, replay): " << text_cosine(r.cos_embed_api, "no ref.input_chw") << '\n'
      << "cosine(replay, CPU ref):     " << text_cosine(r.cos_cpu_reference, "no ref.cpu_embedding") << '\n';
  for (const std::string& line : r.diagnostics) out << "diagnostic:                  " << line << '\n';
  out << "RESULT: " << r.result();
  if (!r.any_reference()) out << " (the bundle has no reference tensors)";
  out << '\n';
  return out.str();
}

std::string format_json(const RunReport& r) {
  std::ostringstream out;
  out << "{\"model\":" << json_string(r.model) << ",\"backend\":" << json_string(r.backend)
      << ",\"precision\":" << json_string(r.precision)
      << ",\"conv_dispatches\":" << r.conv_dispatches << ",\"embedding_dim\":" << r.embedding_dim
      << ",\"latency_ms\":{\"cold\":" << fixed(r.cold_ms, 3) << ",\"warm\":" << json_number(r.warm_ms, 3)
      << ",\"reps\":" << r.reps << "},\"cosine\":{\"recorder\":" << json_number(r.cos_recorder, 6)
      << ",\"embed_api\":" << json_number(r.cos_embed_api, 6)
      << ",\"cpu_reference\":" << json_number(r.cos_cpu_reference, 6) << "},\"result\":" << json_string(r.result())
      << "}\n";
  return out.str();
}

}  // namespace taconite::cli
