#include "enums.hpp"

#include <gst/gst.h>

#include "taconite/model.hpp"


GType taconite_input_mode_get_type() {
  static gsize type = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(InputMode::Crops), "Each buffer is one aligned face crop (resized to the model input when needed)",
       "crops"},
      {static_cast<gint>(InputMode::Rois), "Embed the face ROIs (GstVideoRegionOfInterestMeta of roi-type) of each frame",
       "rois"},
      {static_cast<gint>(InputMode::Auto),
       "Use the ROIs when the buffer has ROIs of roi-type, else the whole buffer (unaligned)",
       "auto"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstTaconiteAdafaceInputMode", values));
  return static_cast<GType>(type);
}

GType taconite_leaky_get_type() {
  static gsize type = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(LeakyMode::No), "Block upstream when max-queued buffers wait; embed every face", "no"},
      {static_cast<gint>(LeakyMode::Skip),
       "When the engine falls behind (queue full, or late per downstream QoS), pass frames through without "
       "embeddings (flagged skipped)",
       "skip"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstTaconiteAdafaceLeaky", values));
  return static_cast<GType>(type);
}

GType taconite_reinfer_mode_get_type() {
  static gsize type = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(ReinferMode::Interval),
       "Re-embed a track every reinfer-interval frames, or sooner when its box grew by reinfer-growth", "interval"},
      {static_cast<gint>(ReinferMode::Best),
       "Re-embed a track only when its face quality beats the best so far by best-margin, at most once every "
       "best-min-gap frames, never on a predicted box; cache the best face's embedding",
       "best"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstTaconiteAdafaceReinferMode", values));
  return static_cast<GType>(type);
}

GType taconite_untracked_get_type() {
  static gsize type = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(UntrackedFaces::EveryFrame), "Embed a face without a track id on every frame", "every-frame"},
      {static_cast<gint>(UntrackedFaces::Measured),
       "Embed a face without a track id only on frames where its box was measured (not predicted by a tracker, "
       "not carried by a detector's interval)",
       "measured"},
      {static_cast<gint>(UntrackedFaces::Never),
       "Never embed a face without a track id: it is passed on without an embedding until its track is confirmed",
       "never"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstTaconiteAdafaceUntracked", values));
  return static_cast<GType>(type);
}

GType taconite_channel_order_get_type() {
  static gsize type = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(ChannelOrder::Rgb), "Feed the network R,G,B planes (the bundle contract)", "rgb"},
      {static_cast<gint>(ChannelOrder::Bgr), "Feed the network B,G,R planes (for BGR-trained checkpoints)", "bgr"},
      {static_cast<gint>(ChannelOrder::Auto), "The bundle's param input_channel_order (rgb when it has none)", "auto"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstTaconiteAdafaceChannelOrder", values));
  return static_cast<GType>(type);
}

GType taconite_backend_get_type() {
  static gsize type = 0;
  static const GEnumValue values[] = {
      // The nicks are the runtime's backend names (string literals, so data() is NUL-terminated).
      {static_cast<gint>(BackendChoice::Auto),
       "A bundle: NPU when available, else the fast CPU backend, else cpu-reference; an ONNX file: opencv-dnn",
       taconite::kBackendAuto.data()},
      {static_cast<gint>(BackendChoice::Cpu), "Fast CPU backend (oneDNN)", taconite::kBackendCpu.data()},
      {static_cast<gint>(BackendChoice::CpuReference), "Exact CPU emulation of the NPU numerics (slow)",
       taconite::kBackendCpuReference.data()},
      {static_cast<gint>(BackendChoice::NpuDirect), "AMD XDNA NPU through the amdxdna driver directly",
       taconite::kBackendNpuDirect.data()},
      {static_cast<gint>(BackendChoice::NpuXrt), "AMD XDNA NPU through XRT", taconite::kBackendNpuXrt.data()},
      {static_cast<gint>(BackendChoice::OpenCvDnn), "An ONNX face embedder through OpenCV DNN (ONNX files only)",
       taconite::kBackendOpenCvDnn.data()},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstTaconiteAdafaceBackend", values));
  return static_cast<GType>(type);
}

GType taconite_precision_get_type() {
  static gsize type = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(taconite::Precision::Auto),
       "f32, bf16 or f32 on Winograd convs, whichever measured fastest at load (TACONITE_PRECISION when set)",
       "auto"},
      {static_cast<gint>(taconite::Precision::F32), "f32 (direct convolutions)", taconite::kPrecisionF32.data()},
      {static_cast<gint>(taconite::Precision::Bf16), "bf16 (where oneDNN has bf16 kernels)", taconite::kPrecisionBf16.data()},
      {static_cast<gint>(taconite::Precision::Int8), "int8 convs: faster, cosine ~0.996-0.999 to f32",
       taconite::kPrecisionInt8.data()},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstTaconiteAdafacePrecision", values));
  return static_cast<GType>(type);
}

const char* backend_choice_name(BackendChoice choice) {
  switch (choice) {
    case BackendChoice::Auto: return taconite::kBackendAuto.data();
    case BackendChoice::Cpu: return taconite::kBackendCpu.data();
    case BackendChoice::CpuReference: return taconite::kBackendCpuReference.data();
    case BackendChoice::NpuDirect: return taconite::kBackendNpuDirect.data();
    case BackendChoice::NpuXrt: return taconite::kBackendNpuXrt.data();
    case BackendChoice::OpenCvDnn: return taconite::kBackendOpenCvDnn.data();
  }
  return taconite::kBackendAuto.data();
}
