// Test-only: stores unknown faces in a gallery as taconiteidentify's keep-unknowns does, so the
// CLI tests (test_gallery_cli.py, test_gallery_postgres.py) can review them without a pipeline.
//
// Usage: unknown_faces_helper GALLERY [MAX_COUNT [MAX_AGE_S]] < faces
//        unknown_faces_helper GALLERY --list
// One face per input line, tab-separated: stream, track id, first seen ms, last seen ms, quality,
// nearest identity, nearest name, nearest similarity, JPEG file ("-": none), embedding (values
// separated by commas; "nan" is read as NaN). Prints each stored face's id; on the first refused
// face prints the error and exits 1.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "gallery_store.hpp"

namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, separator);) parts.push_back(part);
  return parts;
}

int list(const char* gallery) {
  using namespace taconite::gallery;
  auto store = GalleryStore::open(gallery, GalleryStore::Access::ReadOnly);
  auto faces = store ? store.value().unknown_faces(true, true) : taconite::Result<std::vector<UnknownFaceRow>>(store.error());
  if (!faces) {
    std::cerr << faces.error().message << "\n";
    return 1;
  }
  for (const UnknownFaceRow& f : faces.value())
    std::cout << f.id << '\t' << f.stream << '\t' << f.track_id << '\t' << f.first_seen_ms << '\t' << f.last_seen_ms
              << '\t' << f.quality << '\t' << f.nearest_identity << '\t' << f.nearest_name << '\t'
              << f.nearest_similarity << '\t' << f.jpeg.size() << '\t' << f.norm << '\t' << f.embedding.at(0) << '\t'
              << f.created_unix << '\n';
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace taconite::gallery;
  if (argc < 2) {
    std::cerr << "usage: unknown_faces_helper GALLERY [MAX_COUNT [MAX_AGE_S]] < faces | GALLERY --list\n";
    return 2;
  }
  if (argc > 2 && std::string(argv[2]) == "--list") return list(argv[1]);
  UnknownRetention keep;
  if (argc > 2) keep.max_count = std::strtoull(argv[2], nullptr, 10);
  if (argc > 3) keep.max_age_s = std::strtoll(argv[3], nullptr, 10);
  auto store = GalleryStore::open(argv[1], GalleryStore::Access::ReadWrite);
  if (!store) {
    std::cerr << store.error().message << "\n";
    return 1;
  }
  for (std::string line; std::getline(std::cin, line);) {
    const std::vector<std::string> f = split(line, '\t');
    if (f.size() != 10) {
      std::cerr << "expected 10 tab-separated fields, got " << f.size() << "\n";
      return 2;
    }
    NewUnknownFace face;
    face.stream = f[0];
    face.track_id = std::strtoll(f[1].c_str(), nullptr, 10);
    face.first_seen_ms = std::strtoll(f[2].c_str(), nullptr, 10);
    face.last_seen_ms = std::strtoll(f[3].c_str(), nullptr, 10);
    face.quality = std::strtod(f[4].c_str(), nullptr);
    face.nearest_identity = std::strtoll(f[5].c_str(), nullptr, 10);
    face.nearest_name = f[6];
    face.nearest_similarity = std::strtod(f[7].c_str(), nullptr);
    if (f[8] != "-") {
      std::ifstream jpeg(f[8], std::ios::binary);
      face.jpeg.assign(std::istreambuf_iterator<char>(jpeg), std::istreambuf_iterator<char>());
    }
    for (const std::string& value : split(f[9], ',')) face.embedding.push_back(std::strtof(value.c_str(), nullptr));
    auto id = store.value().add_unknown_face(face, keep);
    if (!id) {
      std::cerr << id.error().message << "\n";
      return 1;
    }
    std::cout << id.value() << "\n";
  }
  return 0;
}
