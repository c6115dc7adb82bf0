// Frames with faces for the taconitepublish tests: ROI metas carrying what taconitetrack,
// taconitelandmarks, taconiteidentify and taconiteadaface write, and a reader of the documents.
#pragma once

#include <gst/check/gstharness.h>
#include <json-glib/json-glib.h>

#include <string>
#include <utility>
#include <vector>

namespace gsttest {

inline constexpr const char* kPublishCaps = "video/x-raw,format=RGB,width=320,height=240,framerate=30/1";

// Frame `index` (PTS index/30 s) with `faces` face ROIs; face i (ROI id 1 + i) is at (10 + 60 i, 20), 40x40,
// tracked as id 100 + i with 5 landmarks inside its box, identified as "person-i" (label_id i,
// confidence 0.5 + i/10) and embedded (512 values derived from index and i, status computed).
// A ROI of type "car" is added too: it is not a face.
GstBuffer* face_frame(int index, int faces);

// The embedding face_frame gives face `face` of frame `index` (L2-normalised).
std::vector<float> face_frame_embedding(int index, int face);

// A started harness around a new taconitepublish with the given properties (parsed like gst-launch)
// and kPublishCaps set; `bus`, when given, is the element's bus from before it starts.
GstHarness* publish_harness(const std::vector<std::pair<std::string, std::string>>& properties,
                            GstBus* bus = nullptr);

// Parses one document; fails the test (and returns null) unless it is a JSON object with the
// members and types schema taconite-faces/1 requires (docs/faces-message.md). The caller unrefs.
JsonNode* parse_document(const std::string& line);

// "" when every one of `documents` is valid UTF-8 (decoded strictly) and standard JSON to a strict
// parser (Python's json with parse_constant refusing NaN and Infinity; a line like `"norm":nan.0` or
// `1e+17.0` fails any parser), else the parser's complaint. Needs /usr/bin/python3.
std::string strict_json_problem(const std::vector<std::string>& documents);

// A frame (as face_frame) whose first face carries NaN and infinite values wherever the document
// has numbers from metadata: landmarks (x NaN, y +Inf, -Inf), identity confidence (NaN), the
// embedding meta's norm (+Inf) and embedding values (NaN, +Inf, -Inf at 0..2).
GstBuffer* non_finite_face_frame(int index);

// Checks what taconitepublish made of non_finite_face_frame with embedding=array: each
// non-finite number is null, the finite ones are kept.
void expect_non_finite_values_null(JsonObject* document);

// The lines of a text file (no newlines).
std::vector<std::string> file_lines(const std::string& path);

// Each line of a JSON-lines file parsed (a line that does not parse fails the test); the caller
// json_node_unref()s the nodes.
std::vector<JsonNode*> json_line_nodes(const std::string& path);

}  // namespace gsttest
