#include "web_server.hpp"

#include <gio/gio.h>
#include <libsoup/soup.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <set>
#include <thread>

#include "api_routes.hpp"
#include "credentials_file.hpp"
#include "face_library.hpp"
#include "live_state.hpp"

extern "C" GResource* taconite_web_page_get_resource(void);  // page_resources.c (glib-compile-resources)

namespace taconite::app {

namespace {

constexpr std::uintmax_t kMaxSnapshotBytes = 16u << 20;

// HOST:PORT (IPv6 as [::1]:PORT) -> the address, or an error naming the option.
Result<GSocketAddress*> parse_listen(const std::string& listen) {
  const std::size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return Error{ErrorKind::Input, "http listen \"" + listen + "\": HOST:PORT expected"};
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string port_text = listen.substr(colon + 1);
  char* end = nullptr;
  const long port = std::strtol(port_text.c_str(), &end, 10);
  if (port_text.empty() || *end != '\0' || port < 0 || port > 65535)
    return Error{ErrorKind::Input, "http listen \"" + listen + "\": the port must be 0..65535"};
  GSocketAddress* address = g_inet_socket_address_new_from_string(host.c_str(), static_cast<guint>(port));
  if (!address)
    return Error{ErrorKind::Input, "http listen \"" + listen + "\": \"" + host + "\" is not an IP address"};
  return address;
}

bool is_loopback(GSocketAddress* address) {
  GInetAddress* ip = g_inet_socket_address_get_address(G_INET_SOCKET_ADDRESS(address));
  return g_inet_address_get_is_loopback(ip);
}

// Compares without stopping at the first difference (no timing hint at the password).
bool same_secret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::string& longer = a.size() >= b.size() ? a : b;
  for (std::size_t i = 0; i < longer.size(); ++i)
    diff |= static_cast<unsigned char>((i < a.size() ? a[i] : 0) ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

void set_reply(SoupServerMessage* msg, const ApiReply& reply) {
  soup_server_message_set_status(msg, reply.status, nullptr);
  soup_server_message_set_response(msg, reply.content_type.c_str(), SOUP_MEMORY_COPY, reply.body.data(),
                                   reply.body.size());
  SoupMessageHeaders* h = soup_server_message_get_response_headers(msg);
  soup_message_headers_replace(h, "Cache-Control", "no-store");
  soup_message_headers_replace(h, "X-Content-Type-Options", "nosniff");
}

}  // namespace

struct WebServer::Impl {
  WebServerOptions options;
  std::unique_ptr<FaceLibrary> library;
  LiveState live;
  std::string url;
  std::string credentials_user, credentials_password;
  bool auth = false;
  std::set<std::string> allowed_hosts;  // Host header names served without a password

  GMainContext* context = nullptr;
  GMainLoop* loop = nullptr;
  SoupServer* server = nullptr;
  GThreadPool* workers = nullptr;
  std::thread thread;
  std::atomic<std::size_t> queued{0};

  ~Impl() {
    if (loop) {
      const auto quit = [](gpointer l) -> gboolean {
        g_main_loop_quit(static_cast<GMainLoop*>(l));
        return G_SOURCE_REMOVE;
      };
      g_main_context_invoke(context, quit, loop);
    }
    if (thread.joinable()) thread.join();
    if (loop) g_main_loop_unref(loop);
    if (context) g_main_context_unref(context);
  }

  // On the server thread: reads the request into an ApiRequest, answers at once or queues it.
  void handle(SoupServerMessage* msg, const char* path, GHashTable* query);
  void serve_static(SoupServerMessage* msg, const std::string& path);
  void serve_snapshot(SoupServerMessage* msg, const std::string& name);
  // Runs on the server thread: binds, serves until the loop quits.
  void run(std::promise<Result<std::string>>& started);
};

namespace {

struct Job {
  WebServer::Impl* impl;
  SoupServerMessage* msg;  // a reference held until answered
  ApiRequest request;
  ApiReply reply;
};

gboolean finish_job(gpointer data) {
  std::unique_ptr<Job> job(static_cast<Job*>(data));
  set_reply(job->msg, job->reply);
  soup_server_message_unpause(job->msg);
  g_object_unref(job->msg);
  return G_SOURCE_REMOVE;
}

void run_job(gpointer data, gpointer) {
  auto* job = static_cast<Job*>(data);
  WebServer::Impl* impl = job->impl;
  try {
    job->reply = route_api({*impl->library, impl->live, impl->options}, job->request);
  } catch (const std::exception& e) {
    job->reply = error_reply(500, std::string("internal error: ") + e.what());
  } catch (...) {
    job->reply = error_reply(500, "internal error");
  }
  --impl->queued;
  g_main_context_invoke(impl->context, finish_job, job);
}

// Refuses a body over the bound (413) or of unknown length (411) from its headers, before it is read.
void on_got_headers(SoupServerMessage* msg, gpointer data) {
  auto* impl = static_cast<WebServer::Impl*>(data);
  SoupMessageHeaders* h = soup_server_message_get_request_headers(msg);
  const SoupEncoding encoding = soup_message_headers_get_encoding(h);
  if (encoding == SOUP_ENCODING_CHUNKED || encoding == SOUP_ENCODING_EOF) {
    set_reply(msg, error_reply(411, "send the body with a Content-Length"));
    soup_message_headers_replace(soup_server_message_get_response_headers(msg), "Connection", "close");
  } else if (encoding == SOUP_ENCODING_CONTENT_LENGTH &&
             static_cast<std::uint64_t>(soup_message_headers_get_content_length(h)) >
                 impl->options.bounds.max_upload_bytes) {
    set_reply(msg, error_reply(413, "the body has " + std::to_string(soup_message_headers_get_content_length(h)) +
                                        " bytes, more than the " +
                                        std::to_string(impl->options.bounds.max_upload_bytes) + " allowed"));
    soup_message_headers_replace(soup_server_message_get_response_headers(msg), "Connection", "close");
  }
}

void on_request_started(SoupServer*, SoupServerMessage* msg, gpointer data) {
  g_signal_connect(msg, "got-headers", G_CALLBACK(on_got_headers), data);
}

void on_request(SoupServer*, SoupServerMessage* msg, const char* path, GHashTable* query, gpointer data) {
  static_cast<WebServer::Impl*>(data)->handle(msg, path, query);
}

gboolean check_password(SoupAuthDomain*, SoupServerMessage*, const char* user, const char* password, gpointer data) {
  auto* impl = static_cast<WebServer::Impl*>(data);
  const bool user_ok = same_secret(user ? user : "", impl->credentials_user);
  const bool password_ok = same_secret(password ? password : "", impl->credentials_password);
  return user_ok && password_ok;
}

}  // namespace

void WebServer::Impl::serve_static(SoupServerMessage* msg, const std::string& path) {
  const std::string file = path == "/" ? "index.html" : path.substr(1);
  const char* type = file.ends_with(".html") ? "text/html; charset=utf-8"
                     : file.ends_with(".js") ? "text/javascript; charset=utf-8"
                     : file.ends_with(".css") ? "text/css; charset=utf-8"
                     : file.ends_with(".svg") ? "image/svg+xml" : nullptr;
  GBytes* bytes = type ? g_resource_lookup_data(taconite_web_page_get_resource(), ("/taconite/web/" + file).c_str(),
                                                G_RESOURCE_LOOKUP_FLAGS_NONE, nullptr)
                       : nullptr;
  if (!bytes) return set_reply(msg, error_reply(404, "not found"));
  gsize size = 0;
  const auto* data = static_cast<const char*>(g_bytes_get_data(bytes, &size));
  set_reply(msg, {200, type, std::string(data, size)});
  // The page runs only its own scripts; images come from this server.
  soup_message_headers_replace(soup_server_message_get_response_headers(msg), "Content-Security-Policy",
                               "default-src 'self'; img-src 'self' data:; object-src 'none'; frame-ancestors 'none'");
  g_bytes_unref(bytes);
}

void WebServer::Impl::serve_snapshot(SoupServerMessage* msg, const std::string& name) {
  if (options.snapshot_dir.empty() || !snapshot_relative_path(name))
    return set_reply(msg, error_reply(404, "no snapshot"));
  const std::filesystem::path file = std::filesystem::path(options.snapshot_dir) / name;
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(file, ec);
  if (ec || !std::filesystem::is_regular_file(file, ec) || size > kMaxSnapshotBytes)
    return set_reply(msg, error_reply(404, "no snapshot " + name));
  std::ifstream in(file, std::ios::binary);
  std::string bytes(static_cast<std::size_t>(size), '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size)))
    return set_reply(msg, error_reply(404, "no snapshot " + name));
  set_reply(msg, {200, name.ends_with(".png") ? "image/png" : "image/jpeg", std::move(bytes)});
}

// The host name of a Host header ("127.0.0.1:8765" -> "127.0.0.1", "[::1]:8765" -> "[::1]").
std::string host_name(const char* host) {
  const std::string h = host ? host : "";
  const std::size_t colon = h.rfind(':');
  if (colon == std::string::npos || h.find(']', colon) != std::string::npos) return h;
  return h.substr(0, colon);
}

void WebServer::Impl::handle(SoupServerMessage* msg, const char* c_path, GHashTable* query) {
  if (soup_server_message_get_status(msg) != 0) return;  // refused from its headers (413, 411)
  const std::string path = c_path ? c_path : "/";
  const std::string method = soup_server_message_get_method(msg);
  SoupMessageHeaders* headers = soup_server_message_get_request_headers(msg);
  // Without a password, only requests addressed to this machine by address or as localhost are
  // served: a site whose name an attacker points at 127.0.0.1 (DNS rebinding) gets nothing.
  if (!auth) {
    std::string name = host_name(soup_message_headers_get_one(headers, "Host"));
    for (char& c : name) c = g_ascii_tolower(c);
    if (!allowed_hosts.contains(name))
      return set_reply(msg, error_reply(403, "requests must address this server by its address or as localhost"));
  }
  if (method == "GET" && !path.starts_with("/api/")) {
    if (path.starts_with("/snapshots/")) return serve_snapshot(msg, path.substr(std::strlen("/snapshots/")));
    return serve_static(msg, path);
  }
  if (!path.starts_with("/api/")) return set_reply(msg, error_reply(404, "not found"));
  if (method != "GET") {
    // A page of another site may post forms here: a request whose browser says it comes from
    // elsewhere is refused.
    const char* origin = soup_message_headers_get_one(headers, "Origin");
    const char* host = soup_message_headers_get_one(headers, "Host");
    if (origin && (!host || (std::string(origin) != std::string("http://") + host &&
                             std::string(origin) != std::string("https://") + host)))
      return set_reply(msg, error_reply(403, "cross-origin requests are refused"));
  }
  if (path == "/api/cameras" && method == "GET") return set_reply(msg, {200, "application/json", live.cameras_json()});

  auto job = std::make_unique<Job>();
  job->impl = this;
  ApiRequest& r = job->request;
  r.method = method;
  r.path = path;
  if (query) {
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, query);
    std::size_t n = 0;
    while (g_hash_table_iter_next(&it, &key, &value) && n++ < 16)
      r.query[static_cast<const char*>(key)] = value ? static_cast<const char*>(value) : "";
  }
  const char* type = soup_message_headers_get_content_type(headers, nullptr);
  r.content_type = type ? type : "";
  SoupMessageBody* body = soup_server_message_get_request_body(msg);
  GBytes* all = soup_message_body_flatten(body);
  if (r.content_type == "multipart/form-data") {
    SoupMultipart* parts = soup_multipart_new_from_message(headers, all);
    if (!parts) {
      g_bytes_unref(all);
      return set_reply(msg, error_reply(400, "a multipart/form-data body that cannot be read"));
    }
    const int n = soup_multipart_get_length(parts);
    for (int i = 0; i < n; ++i) {
      SoupMessageHeaders* part_headers = nullptr;
      GBytes* part_body = nullptr;
      if (!soup_multipart_get_part(parts, i, &part_headers, &part_body)) continue;
      GHashTable* params = nullptr;
      std::string filename;
      if (soup_message_headers_get_content_disposition(part_headers, nullptr, &params)) {
        const char* f = static_cast<const char*>(g_hash_table_lookup(params, "filename"));
        if (f) filename = std::string(f).substr(0, 255);
        g_hash_table_destroy(params);
        if (!f) continue;  // a form field, not a file
      }
      if (r.files.size() >= options.bounds.max_files_per_request) {
        ++r.dropped_files;
        continue;
      }
      gsize size = 0;
      const auto* data = static_cast<const std::uint8_t*>(g_bytes_get_data(part_body, &size));
      r.files.push_back({filename, std::vector<std::uint8_t>(data, data + size)});
    }
    soup_multipart_free(parts);
  } else {
    gsize size = 0;
    const auto* data = static_cast<const std::uint8_t*>(g_bytes_get_data(all, &size));
    r.body.assign(data, data + size);
  }
  g_bytes_unref(all);
  soup_message_body_truncate(body);  // only our copy is kept while the request waits
  if (queued.load() >= options.bounds.max_queued_requests)
    return set_reply(msg, error_reply(503, "too many requests at once; try again"));
  ++queued;
  job->msg = SOUP_SERVER_MESSAGE(g_object_ref(msg));
  soup_server_message_pause(msg);
  g_thread_pool_push(workers, job.release(), nullptr);
}

void WebServer::Impl::run(std::promise<Result<std::string>>& started) {
  g_main_context_push_thread_default(context);
  server = soup_server_new("server-header", "taconite-web ", nullptr);
  g_signal_connect(server, "request-started", G_CALLBACK(on_request_started), this);
  soup_server_add_handler(server, nullptr, on_request, this, nullptr);
  if (auth) {
    SoupAuthDomain* domain = soup_auth_domain_basic_new("realm", "taconite", nullptr);
    soup_auth_domain_basic_set_auth_callback(domain, check_password, this, nullptr);
    soup_auth_domain_add_path(domain, "/");
    soup_server_add_auth_domain(server, domain);
    g_object_unref(domain);
  }
  Result<GSocketAddress*> address = parse_listen(options.listen);
  GError* error = nullptr;
  if (!address || !soup_server_listen(server, address.value(), static_cast<SoupServerListenOptions>(0), &error)) {
    std::string why = address ? "http listen " + options.listen + ": " + error->message : address.error().message;
    if (error) g_error_free(error);
    if (address) g_object_unref(address.value());
    g_object_unref(server);
    server = nullptr;
    g_main_context_pop_thread_default(context);
    started.set_value(Error{ErrorKind::Io, why});
    return;
  }
  g_object_unref(address.value());
  GSList* uris = soup_server_get_uris(server);
  std::string first;
  if (uris) {
    gchar* text = g_uri_to_string(static_cast<GUri*>(uris->data));
    first = text;
    g_free(text);
  }
  g_slist_free_full(uris, reinterpret_cast<GDestroyNotify>(g_uri_unref));
  started.set_value(first);
  g_main_loop_run(loop);
  // Finish the requests in flight before the server goes.
  g_thread_pool_free(workers, FALSE, TRUE);
  workers = nullptr;
  while (g_main_context_iteration(context, FALSE)) {
  }
  soup_server_disconnect(server);
  g_object_unref(server);
  server = nullptr;
  g_main_context_pop_thread_default(context);
}

WebServer::WebServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WebServer::~WebServer() = default;

const std::string& WebServer::url() const { return impl_->url; }

Result<std::unique_ptr<WebServer>> WebServer::start(const WebServerOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  const WebBounds& b = options.bounds;
  if (b.max_upload_bytes < 1024 || b.max_upload_bytes > (std::size_t{1} << 30))
    return Error{ErrorKind::Input, "http max upload bytes must be 1 KiB..1 GiB"};
  if (b.max_image_pixels < 64 * 64 || b.max_image_pixels > (1LL << 28))
    return Error{ErrorKind::Input, "http max image pixels must be 4096..268435456"};
  if (b.max_files_per_request < 1 || b.max_files_per_request > 10000)
    return Error{ErrorKind::Input, "http max files per request must be 1..10000"};
  if (b.max_queued_requests < 1 || b.max_queued_requests > 10000)
    return Error{ErrorKind::Input, "http max queued requests must be 1..10000"};
  if (b.max_faces_per_image < 1 || b.max_faces_per_image > 1000)
    return Error{ErrorKind::Input, "http max faces per image must be 1..1000"};
  // The address is checked first: beyond loopback, credentials are required.
  Result<GSocketAddress*> address = parse_listen(options.listen);
  if (!address) return address.error();
  const bool loopback = is_loopback(address.value());
  {
    GInetAddress* listen_ip = g_inet_socket_address_get_address(G_INET_SOCKET_ADDRESS(address.value()));
    gchar* ip = g_inet_address_to_string(listen_ip);
    const std::string text = ip;
    g_free(ip);
    impl->allowed_hosts = {"localhost", "127.0.0.1", "[::1]",
                           text.find(':') != std::string::npos ? "[" + text + "]" : text};
  }
  g_object_unref(address.value());
  if (!loopback && options.credentials_file.empty())
    return Error{ErrorKind::Input, "http listen " + options.listen +
                                       " is beyond loopback: give a credentials file (HTTP Basic auth), or listen "
                                       "on 127.0.0.1"};
  if (!options.credentials_file.empty()) {
    Result<gst::Credentials> c =
        gst::read_credentials_file(options.credentials_file, gst::CredentialsAccess::OwnerOnly);
    if (!c) return c.error();
    if (c.value().password.empty())
      return Error{ErrorKind::Input, options.credentials_file + ": the web page needs a password (second line)"};
    impl->credentials_user = c.value().username;
    impl->credentials_password = c.value().password;
    impl->auth = true;
  }
  Result<std::unique_ptr<FaceLibrary>> library = FaceLibrary::load(options);
  if (!library) return library.error();
  impl->library = std::move(library.value());
  GError* error = nullptr;
  impl->workers = g_thread_pool_new(run_job, nullptr, static_cast<gint>(b.max_concurrent_recognitions), FALSE, &error);
  if (!impl->workers) {
    std::string why = error ? error->message : "unknown";
    if (error) g_error_free(error);
    return Error{ErrorKind::Io, "web: cannot start the worker threads: " + why};
  }
  impl->context = g_main_context_new();
  impl->loop = g_main_loop_new(impl->context, FALSE);
  std::promise<Result<std::string>> started;
  std::future<Result<std::string>> url = started.get_future();
  Impl* raw = impl.get();
  impl->thread = std::thread([raw, &started] { raw->run(started); });
  Result<std::string> bound = url.get();
  if (!bound) {
    impl->thread.join();
    g_thread_pool_free(impl->workers, TRUE, TRUE);
    impl->workers = nullptr;
    g_main_loop_unref(impl->loop);
    impl->loop = nullptr;
    return bound.error();
  }
  impl->url = bound.value();
  return std::unique_ptr<WebServer>(new WebServer(std::move(impl)));
}

void WebServer::on_track_event(const TrackEvent& event) { impl_->live.track_event(event); }

void WebServer::on_camera_state(const std::string& camera, CameraState state, const std::string& detail) {
  impl_->live.camera_state(camera, state, detail);
}

void WebServer::on_cameras_changed(const std::vector<std::string>& enabled) { impl_->live.keep_cameras(enabled); }

}  // namespace taconite::app
