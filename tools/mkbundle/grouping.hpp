// How a conv's input channels are split into NPU dispatches (one `conv` record per group).
// The manifest records the grouping; it is the exporter's choice (spec §9), so the writer
// offers several to exercise the runtime.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace taconite::mkbundle {

enum class Grouping {
  Tile,     // fit one compute tile's 64 KiB local memory, like the real exporter
  Whole,    // one record per conv
  Fixed64,  // 64 channels per record wherever 64 divides the input channels
  Uneven,   // unequal groups (a quarter, then the rest) to exercise non-uniform c0/icg
};

std::optional<Grouping> parse_grouping(std::string_view name);
std::string to_string(Grouping grouping);
std::string grouping_names();  // for usage messages

struct ConvShapeForGrouping {
  int in_channels, out_channels, kernel;
  int width_in, width_out;  // padded widths (wp, owp)
};

struct ChannelGroup {
  int c0;   // first channel group (units of 8 channels)
  int icg;  // channels in this dispatch
};

// The groups cover 0..in_channels-1 in order, each a multiple of 8 channels.
std::vector<ChannelGroup> group_input_channels(const ConvShapeForGrouping& shape, Grouping grouping);

// Bytes of compute-tile memory a dispatch needs (spec §9's rough model), for `tile`.
long tile_bytes(int icg, int kernel, int width_in, int width_out);

}  // namespace taconite::mkbundle
