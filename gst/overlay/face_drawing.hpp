// How taconiteoverlay draws one face: its box, its landmarks and its label, in the colour of its
// identity state (the palette below, documented in docs/gstreamer.md).
#pragma once

#include "face_marks.hpp"
#include "label_layout.hpp"
#include "overlay_canvas.hpp"

namespace taconite::gst {

// The palette (R'G'B'): the box, the landmark dots and the label text of a face take its state's
// colour; the label sits on a black band.
inline constexpr Rgb kPendingColour{255, 255, 0};   // yellow: still voting
inline constexpr Rgb kKnownColour{0, 255, 0};       // green: a gallery identity
inline constexpr Rgb kUnknownColour{255, 0, 0};     // red: decided unknown
inline constexpr Rgb kNoIdentityColour{255, 255, 255};  // white: no identity param (untracked or no identify)
inline constexpr Rgb kLabelBackground{0, 0, 0};

Rgb state_colour(LabelState state);

struct OverlayStyle {
  int line_width = 2;       // box edge, pixels (drawn inside the box)
  double font_scale = 0.5;  // OpenCV's Hershey font scale
  bool landmarks = true;
  bool labels = true;
};

// The properties' sizes are for frames up to this many lines; taller frames scale them with their
// height, up to kMaxStyleScale times, so a label stays readable on 1080p and 4K.
inline constexpr int kStyleReferenceHeight = 480;
inline constexpr double kMaxStyleScale = 4.0;

// `style` for a frame `frame_height` lines high: line width (and with it the dots and the text
// strokes) and font scale times clamp(frame_height / kStyleReferenceHeight, 1, kMaxStyleScale).
OverlayStyle style_for_frame(const OverlayStyle& style, int frame_height);

// Label texts are cut to this many characters (a name is no paragraph; bounds the drawing work).
inline constexpr std::size_t kMaxLabelChars = 48;

// Draws `mark` on `canvas`, nothing when its box misses the frame: the box's edges inside the box
// (the part in the frame), each finite landmark inside the frame as a dot, and the label on a black
// band where `labels` (the frame's layout) places it: above the box, else below or inside its top
// edge, away from the labels drawn before on the frame.
void draw_face(OverlayCanvas& canvas, const FaceMark& mark, const OverlayStyle& style, LabelLayout& labels);

}  // namespace taconite::gst
