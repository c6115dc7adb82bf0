// The face library behind the web page's JSON API: people (identities with their templates'
// thumbnails), adding photos (YuNet finds and aligns the faces, the model embeds them, the gallery
// enrols them), unknown-face clusters (list, name, merge into a person, forget) and "recognise
// this image". No HTTP here: web_server.hpp routes requests to these calls.
//
// Thread-safe: the calls may run on several worker threads at once. Each call opens its own gallery
// connection (GalleryStore is one per thread); writes are serialised here; a recognition borrows
// one of max_concurrent_recognitions engines (each a Session on one shared Model + a YuNet finder,
// made at start).
// Never throws; every failure is an ApiReply with an error naming what was wrong.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "api_reply.hpp"
#include "gallery_index.hpp"
#include "taconite/error.hpp"
#include "web_options.hpp"

namespace taconite::app {

// One file of an upload.
struct UploadedFile {
  std::string name;  // the file name the client gave (shown in replies, never used as a path)
  std::vector<std::uint8_t> bytes;
};

class FaceLibrary {
 public:
  // Checks the gallery opens and was made with this model, loads the engines and the detector.
  // Errors name the file and what is wrong.
  static Result<std::unique_ptr<FaceLibrary>> load(const WebServerOptions& options);
  ~FaceLibrary();

  ApiReply people();
  ApiReply template_thumbnail(std::int64_t template_id);
  // Enrols the largest face of each file as a template of `name` (created when new), all in one
  // transaction; `dropped` files beyond the per-request bound are reported, not read.
  ApiReply add_photos(const std::string& name, std::span<const UploadedFile> files, std::size_t dropped);
  ApiReply remove_person(const std::string& name);
  ApiReply rename_person(const std::string& name, const std::string& new_name);
  // Removes one template (and its thumbnail); the person stays.
  ApiReply remove_template(std::int64_t template_id);
  ApiReply unknowns();
  ApiReply unknown_face_picture(std::int64_t face_id);
  // Enrols the cluster listed under `key` (ID:SIZE:DIGEST) as `person` and deletes its unknown
  // faces. merge=false: `person` must be new; merge=true: `person` must exist.
  ApiReply name_cluster(const std::string& key, const std::string& person, bool merge);
  ApiReply forget_cluster(const std::string& key);
  ApiReply recognize(std::span<const std::uint8_t> image);

  double match_threshold() const { return threshold_; }

 private:
  struct Engine;
  FaceLibrary() = default;
  // An engine for this thread's call (one is free: the server admits at most as many calls).
  class BorrowedEngine;
  BorrowedEngine borrow();
  // The search index of the gallery's current revision (rebuilt when the gallery changed).
  Result<std::shared_ptr<const gallery::GalleryIndex>> current_index();

  WebServerOptions options_;
  double threshold_ = 0.4;
  std::mutex engines_mutex_;
  std::vector<std::unique_ptr<Engine>> free_engines_;
  std::mutex index_mutex_;
  std::shared_ptr<const gallery::GalleryIndex> index_;
  std::mutex write_mutex_;  // one gallery write at a time (cluster checks and writes stay consistent)
};

}  // namespace taconite::app
