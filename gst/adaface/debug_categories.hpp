// taconiteadaface's debug categories (control flow, per-buffer dataflow, the runtime/engine).
#pragma once

#include <gst/gst.h>

GST_DEBUG_CATEGORY_EXTERN(taconite_adaface_debug);     // "taconiteadaface"
GST_DEBUG_CATEGORY_EXTERN(taconite_dataflow_debug);    // "taconiteadaface-dataflow"
GST_DEBUG_CATEGORY_EXTERN(taconite_runtime_debug);     // "taconite-runtime"

// Registers the three categories once (idempotent).
void taconite_debug_categories_init();
