// The stock front end of a build without dlib: none (hog_face_finder.hpp).
#include "hog_face_finder.hpp"

namespace taconite::faces {

Result<std::unique_ptr<FaceFinder>> load_hog_face_finder(const std::string&, const ModelInput&) {
  return Error{ErrorKind::Input,
               "this taconite was built without dlib: no HOG face finder (the default); find faces with "
               "--detector YUNET.onnx, or give --aligned faces (rebuild with libdlib-dev and -Ddlib=enabled for HOG)"};
}

}  // namespace taconite::faces
