#include "events_cli.hpp"

#include <charconv>
#include <chrono>
#include <cstdio>
#include <vector>

#include "displayed_location.hpp"

namespace taconite::gallery_cli {

namespace {

constexpr const char* kProgram = "taconite-gallery";
constexpr int kExitOk = 0, kExitError = 1, kExitUsage = 2;

int usage(const std::string& message) {
  std::fprintf(stderr, "%s: usage error: events: %s (see --help)\n", kProgram, message.c_str());
  return kExitUsage;
}

double now_epoch() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Text for a table cell: one line, at most `width` bytes shown (a hostile label cannot break the table).
std::string cell(const std::string& text, std::size_t width) {
  std::string out;
  for (const char c : text) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  if (out.size() > width) out = out.substr(0, width - 1) + "~";
  return out;
}

void print_table(const std::vector<gallery::StoredTrackEvent>& events) {
  std::printf("%-27s %-16s %-6s %-20s %-8s %-8s %-36s %s\n", "time (UTC)", "camera", "kind", "person", "state",
              "dwell_s", "track uid", "snapshot");
  for (const gallery::StoredTrackEvent& e : events) {
    char dwell[32] = "-";
    if (e.dwell_s) std::snprintf(dwell, sizeof dwell, "%.1f", *e.dwell_s);
    std::printf("%-27s %-16s %-6s %-20s %-8s %-8s %-36s %s\n", gallery::epoch_to_iso(e.epoch_s).c_str(),
                cell(e.camera, 16).c_str(), cell(e.kind, 6).c_str(), cell(e.label.value_or("-"), 20).c_str(),
                cell(e.label_state.empty() ? "-" : e.label_state, 8).c_str(), dwell, cell(e.uid, 36).c_str(),
                cell(e.snapshot.empty() ? "-" : e.snapshot, 200).c_str());
  }
}

}  // namespace

std::optional<double> parse_event_time(const std::string& text, double now_epoch_s) {
  if (text.size() >= 2 && text.size() <= 16) {
    static constexpr std::pair<char, std::int64_t> kUnits[] = {{'d', 86400}, {'h', 3600}, {'m', 60}, {'s', 1}};
    for (const auto& [unit, seconds] : kUnits) {
      if (text.back() != unit) continue;
      std::int64_t count = 0;
      const char* end = text.data() + text.size() - 1;
      auto [ptr, ec] = std::from_chars(text.data(), end, count);
      if (ec != std::errc() || ptr != end || count < 0 || count > kMaxEventAgeSeconds / seconds) return std::nullopt;
      return now_epoch_s - static_cast<double>(count * seconds);
    }
  }
  return gallery::iso_to_epoch(text);
}

int events_command(int argc, char** argv) {
  gallery::TrackEventFilter filter;
  bool json = false;
  std::vector<std::string> positional;
  const double now = now_epoch();
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= argc) return std::nullopt;
      return std::string(argv[++i]);
    };
    if (a == "--json") {
      json = true;
    } else if (a == "--person" || a == "--camera" || a == "--kind" || a == "--uid" || a == "--since" ||
               a == "--until" || a == "--limit") {
      const std::optional<std::string> v = value();
      if (!v) return usage(a + " needs a value");
      if (v->empty() || v->size() > gallery::kMaxEventFieldBytes)
        return usage(a + " takes 1.." + std::to_string(gallery::kMaxEventFieldBytes) + " bytes");
      if (a == "--person") filter.person = *v;
      if (a == "--camera") filter.camera = *v;
      if (a == "--uid") filter.uid = *v;
      if (a == "--kind") {
        if (*v != "new" && *v != "update" && *v != "end") return usage("--kind takes new, update or end");
        filter.kind = *v;
      }
      if (a == "--since" || a == "--until") {
        const std::optional<double> t = parse_event_time(*v, now);
        if (!t)
          return usage(a +
                       " takes a time back from now (7d, 12h, 30m, 45s) or an ISO 8601 time "
                       "(2026-12-01, 2026-12-01T12:00:00Z), not '" +
                       cell(*v, 64) + "'");
        (a == "--since" ? filter.since_epoch_s : filter.until_epoch_s) = *t;
      }
      if (a == "--limit") {
        std::size_t n = 0;
        auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
        if (ec != std::errc() || ptr != v->data() + v->size() || n < 1 || n > gallery::kMaxEventQueryRows)
          return usage("--limit takes 1.." + std::to_string(gallery::kMaxEventQueryRows));
        filter.limit = n;
      }
    } else if (a.size() > 1 && a[0] == '-') {
      return usage("unknown option " + a);
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() != 1) return usage("takes one GALLERY");
  if (filter.since_epoch_s && filter.until_epoch_s && *filter.since_epoch_s > *filter.until_epoch_s)
    return usage("--since is after --until");
  Result<gallery::TrackEventLog> log =
      gallery::TrackEventLog::open(positional[0], gallery::TrackEventLog::Access::ReadOnly);
  if (!log) return std::fprintf(stderr, "%s: error: %s\n", kProgram, log.error().message.c_str()), kExitError;
  Result<std::vector<gallery::StoredTrackEvent>> events = log.value().query(filter);
  if (!events) return std::fprintf(stderr, "%s: error: %s\n", kProgram, events.error().message.c_str()), kExitError;
  if (json) {
    for (const gallery::StoredTrackEvent& e : events.value()) std::printf("%s\n", gallery::event_to_json(e).c_str());
  } else {
    print_table(events.value());
  }
  return std::fflush(stdout) == 0 ? kExitOk : kExitError;
}

}  // namespace taconite::gallery_cli
