#include "camera_enums.hpp"

GType taconite_camera_drop_get_type() {
  static gsize type = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(DropPolicy::Latest), "Analyse the newest frame: older ones waiting are dropped and counted",
       "latest"},
      {static_cast<gint>(DropPolicy::None), "Every frame goes downstream; the source waits (files, tests)", "none"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type)) g_once_init_leave(&type, g_enum_register_static("GstTaconiteCameraDrop", values));
  return static_cast<GType>(type);
}

GType taconite_camera_protocols_get_type() {
  static gsize type = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(RtspProtocols::Tcp), "RTP inside the RTSP TCP connection", "tcp"},
      {static_cast<gint>(RtspProtocols::Udp), "RTP over UDP", "udp"},
      {static_cast<gint>(RtspProtocols::Auto), "UDP, then TCP when UDP gets nothing (rtspsrc's default)", "auto"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("GstTaconiteCameraProtocols", values));
  return static_cast<GType>(type);
}
