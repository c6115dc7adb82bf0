#include "tls_ca_file.hpp"

#include "input_file.hpp"

namespace taconite::gst {

Result<TlsDatabase> read_tls_ca_file(const std::string& path) {
  const std::string shown = "the TLS CA file '" + path + "' ";
  // Checked and bounded first: GIO would read whatever the path is, a FIFO or a huge file included.
  Result<std::string> text = read_regular_file(path, kMaxTlsCaFileBytes);
  if (!text) return Error{text.error().kind, shown + text.error().message};
  GError* error = nullptr;
  GTlsDatabase* database = g_tls_file_database_new(path.c_str(), &error);
  if (!database) {
    Error out{ErrorKind::Input, shown + "could not be read: " + (error ? error->message : "no certificate in it")};
    g_clear_error(&error);
    return out;
  }
  return TlsDatabase(database, [](GTlsDatabase* d) { g_object_unref(d); });
}

}  // namespace taconite::gst
