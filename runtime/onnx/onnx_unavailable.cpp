// Built when OpenCV's dnn module is not found: an ONNX model cannot be loaded, and the error says why.
#include "common/failure.hpp"
#include "onnx/onnx_model.hpp"

namespace taconite::onnx {

std::shared_ptr<const OnnxModel> load_onnx_model(const std::filesystem::path& model, const std::filesystem::path&,
                                                 int) {
  fail(ErrorKind::Device, model.string() +
                              ": is an ONNX model, and this build of taconite has no opencv-dnn backend (it was "
                              "built without OpenCV's dnn module)");
}

EmbedderDescription read_embedder_description(const std::filesystem::path& path) {
  fail(ErrorKind::Device, path.string() +
                              ": describes an ONNX model, and this build of taconite has no opencv-dnn backend (it "
                              "was built without OpenCV's dnn module or json-glib)");
}

}  // namespace taconite::onnx
