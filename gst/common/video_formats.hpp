// The raw video formats the elements accept, as caps format lists (vision/ reads each of them).
#pragma once

// taconiteadaface and taconitedetect.
#define TACONITE_ADAFACE_VIDEO_FORMATS "{ RGB, BGR, RGBx, BGRx, xRGB, xBGR, RGBA, BGRA, I420, NV12 }"

// taconitelandmarks: taconiteadaface's plus GRAY8.
#define TACONITE_LANDMARKS_VIDEO_FORMATS "{ RGB, BGR, RGBx, BGRx, xRGB, xBGR, RGBA, BGRA, I420, NV12, GRAY8 }"
