// Enforcing GST_PARAM_MUTABLE_READY: GObject only documents the flag, the element must check it.
#pragma once

#include <gst/gst.h>

namespace taconite::gst {

// True when `pspec` may be set now: it is not GST_PARAM_MUTABLE_READY, or `element` is in NULL or
// READY. Otherwise logs a warning naming the property and returns false (the caller ignores the set).
inline bool property_mutable_now(GstElement* element, GParamSpec* pspec) {
  if (!(pspec->flags & GST_PARAM_MUTABLE_READY)) return true;
  GST_OBJECT_LOCK(element);
  // A failed change leaves its target as the pending state (gst_element_abort_state keeps it): the
  // element stays where it was, so a failed READY->PAUSED may be fixed by a set and retried.
  const bool ok = GST_STATE(element) <= GST_STATE_READY &&
                  (GST_STATE_PENDING(element) <= GST_STATE_READY || GST_STATE_RETURN(element) == GST_STATE_CHANGE_FAILURE);
  GST_OBJECT_UNLOCK(element);
  if (!ok)
    GST_WARNING_OBJECT(element, "property '%s' can only be changed in the NULL or READY state; ignoring",
                       pspec->name);
  return ok;
}

}  // namespace taconite::gst
