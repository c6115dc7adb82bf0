#include "taconite/inspect.hpp"

#include "common/failure.hpp"
#include "common/guarded_call.hpp"
#include "model_impl.hpp"

namespace taconite::inspect {

namespace {

// A moved-from IrEmbedder has no model: the accessors return T{}, as they do on a failed allocation.
template <typename T, typename Fn>
T value_or_empty(const Model* model, Fn&& fn) noexcept {
  if (model == nullptr) return T{};
  try {
    return fn(detail::Access::of(*model));
  } catch (...) {
    return T{};
  }
}

}  // namespace

Result<Embedding> embed_recorded(Session& session) {
  return guarded_call([&]() -> Embedding {
    Session::Impl& state = detail::Access::of(session);
    const std::span<const numerics::bf16_t> input = detail::Access::of(*state.model).recorded_input;
    return std::move(state.run({&input, 1}).front());
  });
}

Result<Embedding> embed_recorded(IrEmbedder& embedder) { return embed_recorded(embedder.session()); }

std::vector<float> reference_f32(const Model& model, std::string_view name) {
  return value_or_empty<std::vector<float>>(&model, [&](const Model::Impl& m) -> std::vector<float> {
    auto it = m.f32_tensors.find(name);
    return it == m.f32_tensors.end() ? std::vector<float>() : it->second;
  });
}

std::vector<float> reference_f32(const IrEmbedder& embedder, std::string_view name) {
  return embedder.shared_model() ? reference_f32(*embedder.shared_model(), name) : std::vector<float>();
}

std::string param(const Model& model, std::string_view name) {
  return value_or_empty<std::string>(&model, [&](const Model::Impl& m) {
    const auto& params = m.bundle.manifest().params;
    auto it = params.find(name);
    return it == params.end() ? std::string() : it->second.value;
  });
}

std::string param(const IrEmbedder& embedder, std::string_view name) {
  return embedder.shared_model() ? param(*embedder.shared_model(), name) : std::string();
}

int conv_dispatches(const Model& model) { return detail::Access::of(model).plan.conv_dispatches; }

int conv_dispatches(const IrEmbedder& embedder) {
  return embedder.shared_model() ? conv_dispatches(*embedder.shared_model()) : 0;
}

InputDims padded_input_dims(const Model& model) {
  if (detail::Access::of(model).onnx) return model.input_dims();  // an ONNX network takes its input unpadded
  const plan::Dims& d = detail::Access::of(model).plan.input;
  return {d.c, d.h, d.w};
}

}  // namespace taconite::inspect
