// Enum property types of taconiteadaface, registered with GLib so gst-inspect lists their values.
#pragma once

#include <glib-object.h>

#include "channel_order.hpp"

enum class InputMode : int {
  Crops = 0,  // every buffer is one aligned face crop
  Rois = 1,   // frames carrying GstVideoRegionOfInterestMeta of type roi-type
  Auto = 2,   // rois when the buffer has matching ROIs, else crops
};

// Defined by vision/ (the preprocessing takes it); registered here.
using ChannelOrder = taconite::vision::ChannelOrder;

enum class BackendChoice : int {
  Auto = 0,
  Cpu = 1,
  CpuReference = 2,
  NpuDirect = 3,
  NpuXrt = 4,
  OpenCvDnn = 5,  // ONNX files only
};

enum class LeakyMode : int {
  No = 0,    // block upstream when max-queued buffers wait; every face is embedded
  Skip = 1,  // when the engine falls behind, pass frames through without embeddings
};

enum class ReinferMode : int {
  Interval = 0,  // a track is re-embedded every reinfer-interval frames (or when its box grew)
  Best = 1,      // a track is re-embedded only when a clearly better face arrives (best-margin, best-min-gap)
};

// What happens to a face without a usable track id (no tracker upstream, a track taconitetrack has
// not confirmed yet, or an id two ROIs of the frame share).
enum class UntrackedFaces : int {
  EveryFrame = 0,  // embedded on every frame it is selected (no reuse is possible)
  Measured = 1,    // embedded only when its box was measured (not predicted by a tracker or carried)
  Never = 2,       // not embedded: it waits for a track id
};

GType taconite_input_mode_get_type();
GType taconite_reinfer_mode_get_type();
GType taconite_untracked_get_type();
GType taconite_leaky_get_type();
GType taconite_channel_order_get_type();
GType taconite_backend_get_type();
GType taconite_precision_get_type();

// The runtime's backend name for a choice ("auto", "cpu", ...).
const char* backend_choice_name(BackendChoice choice);
