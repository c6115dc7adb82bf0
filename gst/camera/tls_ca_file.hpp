// tls-ca-file: the certificate authorities an rtsps:// or https:// camera's certificate is checked
// against (a camera's own self-signed certificate, a site's private CA), read once at start.
#pragma once

#include <gio/gio.h>

#include <cstddef>
#include <memory>
#include <string>

#include "taconite/error.hpp"

namespace taconite::gst {

// A CA file is a few certificates: anything bigger is not one.
inline constexpr std::size_t kMaxTlsCaFileBytes = 1024 * 1024;

// Shared: every restart's source gets the same database.
using TlsDatabase = std::shared_ptr<GTlsDatabase>;

// The PEM file `path` as a TLS database; an error naming the file when it is not a regular file,
// is over kMaxTlsCaFileBytes or holds no certificate GIO can read (or GIO has no TLS backend:
// Debian's glib-networking).
Result<TlsDatabase> read_tls_ca_file(const std::string& path);

}  // namespace taconite::gst
