#include "real_embedders.hpp"

#include <fstream>
#include <system_error>

namespace taconite::realfaces {

const std::array<RealEmbedder, 2> kRealEmbedders = {{
    {"foamliu-128", "mobilefacenet_foamliu_opset10.onnx",
     R"({"format": "taconite-embedder/1", "name": "mobilefacenet-foamliu",
 "input": {"name": "input0", "width": 112, "height": 112, "channel_order": "RGB",
           "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]},
 "output": {"name": "output0", "dim": 128}, "threshold": 0.32})",
     128},
    {"faceplugin-512", "fr_feature_faceplugin.onnx",
     R"({"format": "taconite-embedder/1", "name": "mobilefacenet-faceplugin",
 "input": {"name": "input", "width": 112, "height": 112, "channel_order": "BGR",
           "mean": [0.498039, 0.498039, 0.498039], "std": [0.501961, 0.501961, 0.501961]},
 "output": {"name": "output", "dim": 512}, "threshold": 0.32})",
     512},
}};

Result<std::shared_ptr<const Model>> load_real_embedder(const RealEmbedder& e, const std::filesystem::path& root,
                                                        const std::filesystem::path& scratch, int threads) {
  const std::filesystem::path model = scratch / e.file;
  std::error_code ec;
  std::filesystem::remove(model, ec);
  std::filesystem::create_symlink(std::filesystem::absolute(root / "models" / e.file), model, ec);
  if (ec) return Error{ErrorKind::Io, model.string() + ": cannot link the model there (" + ec.message() + ")"};
  const std::filesystem::path description = std::filesystem::path(model).replace_extension(".json");
  std::ofstream(description, std::ios::binary | std::ios::trunc) << e.description;
  if (std::filesystem::file_size(description, ec) == 0 || ec)
    return Error{ErrorKind::Io, description.string() + ": cannot write the model's description there"};
  LoadOptions options;
  options.threads = threads;
  return Model::load(model, options);
}

}  // namespace taconite::realfaces
