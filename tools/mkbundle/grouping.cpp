#include "grouping.hpp"

namespace taconite::mkbundle {

namespace {

constexpr long kTileMemory = 65536;
// The kernel produces one 8-channel block of outputs at a time on a compute tile.
constexpr long kOutputChunk = 8;

std::vector<ChannelGroup> equal_groups(int channels, int icg) {
  std::vector<ChannelGroup> groups;
  for (int c = 0; c < channels; c += icg) groups.push_back({c / 8, icg});
  return groups;
}

}  // namespace

std::optional<Grouping> parse_grouping(std::string_view name) {
  if (name == "tile") return Grouping::Tile;
  if (name == "whole") return Grouping::Whole;
  if (name == "fixed64") return Grouping::Fixed64;
  if (name == "uneven") return Grouping::Uneven;
  return std::nullopt;
}

std::string to_string(Grouping grouping) {
  switch (grouping) {
    case Grouping::Tile: return "tile";
    case Grouping::Whole: return "whole";
    case Grouping::Fixed64: return "fixed64";
    case Grouping::Uneven: return "uneven";
  }
  return "?";
}

std::string grouping_names() { return "tile|whole|fixed64|uneven"; }

long tile_bytes(int icg, int kernel, int width_in, int width_out) {
  // double-buffered input rows (4 rows of icg x W bf16), the weights of one output chunk,
  // double-buffered output rows, and a fixed overhead for the kernel's stack and locks.
  return 4L * icg * width_in * 2 + kOutputChunk * icg * kernel * kernel * 2 + 2 * kOutputChunk * width_out * 2 + 1040;
}

std::vector<ChannelGroup> group_input_channels(const ConvShapeForGrouping& s, Grouping grouping) {
  const int channels = s.in_channels;
  switch (grouping) {
    case Grouping::Whole:
      return {{0, channels}};
    case Grouping::Fixed64:
      return channels > 64 && channels % 64 == 0 ? equal_groups(channels, 64) : std::vector<ChannelGroup>{{0, channels}};
    case Grouping::Uneven: {
      if (channels < 16) return {{0, channels}};
      const int first = ((channels / 4 + 7) / 8) * 8;
      return {{0, first}, {first / 8, channels - first}};
    }
    case Grouping::Tile: {
      // The largest multiple of 8 that divides the channels and fits the tile (at least 8).
      int best = 8;
      for (int icg = 8; icg <= channels; icg += 8)
        if (channels % icg == 0 && tile_bytes(icg, s.kernel, s.width_in, s.width_out) <= kTileMemory) best = icg;
      return equal_groups(channels, best);
    }
  }
  return {{0, channels}};
}

}  // namespace taconite::mkbundle
