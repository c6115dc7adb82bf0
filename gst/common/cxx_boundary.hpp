// The C++/C boundary of every element: GStreamer calls our vfuncs and pad functions from C, so no
// C++ exception (std::bad_alloc, cv::Exception, dlib::error, ...) may leave them. Each entry point
// that runs C++ code that can throw wraps it in one of these guards, which turn the exception into
// an element error on the bus (naming what failed) and a failure value GStreamer understands.
#pragma once

#include <gst/gst.h>

#include <exception>
#include <utility>

namespace taconite::gst {

// Posts "`what`" as a STREAM FAILED element error for the exception being handled; never throws.
inline void post_exception_error(GstElement* element, const char* what) noexcept {
  try {
    throw;
  } catch (const std::exception& e) {
    GST_ELEMENT_ERROR(element, STREAM, FAILED, ("%s", what), ("C++ exception: %s", e.what()));
  } catch (...) {
    GST_ELEMENT_ERROR(element, STREAM, FAILED, ("%s", what), ("unknown C++ exception"));
  }
}

// Runs `work` (returning a GstFlowReturn) for a chain or transform function; an exception becomes
// an element error and GST_FLOW_ERROR.
template <typename Work>
GstFlowReturn flow_guarded(GstElement* element, const char* what, Work&& work) noexcept {
  try {
    return std::forward<Work>(work)();
  } catch (...) {
    post_exception_error(element, what);
    return GST_FLOW_ERROR;
  }
}

// Runs `work` (returning bool or gboolean) for an event, query, caps or start/stop handler; an
// exception becomes an element error and FALSE.
template <typename Work>
gboolean bool_guarded(GstElement* element, const char* what, Work&& work) noexcept {
  try {
    return std::forward<Work>(work)() ? TRUE : FALSE;
  } catch (...) {
    post_exception_error(element, what);
    return FALSE;
  }
}

// Runs `work` (returning GstStateChangeReturn) for change_state; an exception becomes an element
// error and GST_STATE_CHANGE_FAILURE.
template <typename Work>
GstStateChangeReturn state_change_guarded(GstElement* element, const char* what, Work&& work) noexcept {
  try {
    return std::forward<Work>(work)();
  } catch (...) {
    post_exception_error(element, what);
    return GST_STATE_CHANGE_FAILURE;
  }
}

}  // namespace taconite::gst
