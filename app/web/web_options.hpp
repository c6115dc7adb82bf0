// What the web page's server (web_server.hpp) is built from: a plain struct the application fills
// from its config (taconite-run's `http:` section) or the test host from its command line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <memory>
#include <string>

#include "taconite/model.hpp"

namespace taconite::app {

// A query of the event history (GET /api/events): every filter optional.
struct EventQuery {
  std::optional<std::string> person;         // events naming this person
  std::optional<std::string> camera;         // events of this camera
  std::optional<std::int64_t> since_epoch_s; // events at or after this time (seconds since 1970)
  std::size_t limit = 100;                   // at most this many, newest first (1..kMaxEventLimit)
};

inline constexpr std::size_t kMaxEventLimit = 1000;

// The events of a query as a JSON array of taconite-tracks/1 event objects (an event with a
// "snapshot" member naming a file of the snapshot directory gets a snapshot URL on the page). May
// run on a worker thread, several at once; must not throw (a throw becomes a 500).
using EventSource = std::function<std::string(const EventQuery&)>;

// Bounds on what a request may make the server hold or do.
struct WebBounds {
  std::size_t max_upload_bytes = 32u << 20;       // a request body (413 beyond)
  long long max_image_pixels = 40LL << 20;        // an image's header size (refused before decoding)
  std::size_t max_files_per_request = 50;         // files of one upload; the rest are dropped and counted
  std::size_t max_concurrent_recognitions = 2;    // worker threads and engines: uploads / recognitions at once
  std::size_t max_faces_per_image = 20;           // faces embedded per image (the largest)
  // API requests in the server at once, running or waiting for a worker (503 beyond). Each holds
  // its body: at worst max_queued_requests x max_upload_bytes of memory.
  std::size_t max_queued_requests = 8;
};

struct WebServerOptions {
  // HOST:PORT; a host other than a loopback address needs credentials_file. Port 0: any free port.
  std::string listen = "127.0.0.1:8765";
  // HTTP Basic credentials (gst/common/credentials_file.hpp, owner-only): required beyond loopback,
  // also enforced on loopback when given.
  std::string credentials_file;
  std::string gallery;     // SQLite file or PostgreSQL connection string (must exist)
  std::string model;       // bundle directory or ONNX embedder
  std::string model_proc;  // an ONNX embedder's description; empty: beside the model
  std::string backend = "auto";
  int threads = 1;         // CPU threads per embedding and detection
  // The runner's loaded model (the pipelines' shared engine): the page makes its sessions on it
  // instead of loading the model again. `model` must still name its file (the gallery's model
  // check). Null: the page loads `model` itself (once; one session per concurrent recognition).
  std::shared_ptr<const taconite::Model> shared_model;
  std::string detector;    // YuNet .onnx (required: uploads are found and aligned with it)
  std::string snapshot_dir;  // served under /snapshots/ (empty: none)
  // Cosine similarity a face needs to be named by /api/recognize; unset: the model's recommended
  // threshold, else 0.4 (taconiteidentify's default).
  std::optional<double> match_threshold;
  double cluster_threshold = 0.5;  // unknown faces' clustering (gallery/unknown_clusters.hpp)
  std::size_t name_templates = 5;  // templates a named cluster enrols (its best faces)
  WebBounds bounds;
  EventSource events;  // empty: /api/events answers an empty list
};

}  // namespace taconite::app
