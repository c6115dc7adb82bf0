#include "debug_categories.hpp"

GST_DEBUG_CATEGORY(taconite_adaface_debug);
GST_DEBUG_CATEGORY(taconite_dataflow_debug);
GST_DEBUG_CATEGORY(taconite_runtime_debug);

void taconite_debug_categories_init() {
  static gsize done = 0;
  if (g_once_init_enter(&done)) {
    GST_DEBUG_CATEGORY_INIT(taconite_adaface_debug, "taconiteadaface", 0, "taconiteadaface element");
    GST_DEBUG_CATEGORY_INIT(taconite_dataflow_debug, "taconiteadaface-dataflow", 0,
                            "taconiteadaface per-buffer dataflow");
    GST_DEBUG_CATEGORY_INIT(taconite_runtime_debug, "taconite-runtime", 0, "taconite inference runtime (engine)");
    g_once_init_leave(&done, 1);
  }
}
