// Calls for tools and tests that look inside a bundle (the CLI, taconite-mkbundle, accuracy
// tests); applications need none of them. Same contract as taconite/model.hpp: no exception, no
// output; the Model calls are const and thread-safe, the Session call follows Session's rule.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "taconite/embedder.hpp"
#include "taconite/error.hpp"
#include "taconite/model.hpp"

namespace taconite::inspect {

// Replays the bundle's recorded input (the input step's tensor, normally ref.input): one forward.
// Errors: Input (moved-from session, or an ONNX model, which records no input), Device.
TACONITE_API Result<Embedding> embed_recorded(Session& session);
TACONITE_API Result<Embedding> embed_recorded(IrEmbedder& embedder);

// An f32 tensor stored in the bundle (ref.input_chw, ref.npu_embedding, ref.cpu_embedding, head.b2);
// empty when the bundle has none of that name or it is not f32. Copies the values.
TACONITE_API std::vector<float> reference_f32(const Model& model, std::string_view name);
TACONITE_API std::vector<float> reference_f32(const IrEmbedder& embedder, std::string_view name);

// A `param` record's value, or "" when absent.
TACONITE_API std::string param(const Model& model, std::string_view name);
TACONITE_API std::string param(const IrEmbedder& embedder, std::string_view name);

// Conv records in the manifest (NPU dispatches per face); 0 for an ONNX model (and param "",
// reference_f32 empty).
TACONITE_API int conv_dispatches(const Model& model);
TACONITE_API int conv_dispatches(const IrEmbedder& embedder);

// The input step's padded shape as the network runs it (channels = the stem width, e.g. 8); an
// ONNX model's input_dims().
TACONITE_API InputDims padded_input_dims(const Model& model);

}  // namespace taconite::inspect
