#include "api_reply.hpp"

#include "json_write.hpp"

namespace taconite::app {

ApiReply error_reply(unsigned status, const std::string& message) {
  JsonText j;
  j.object().name("error").value(message).end_object();
  return {status, "application/json", j.text()};
}

ApiReply bytes_reply(std::vector<unsigned char> bytes, const std::string& content_type) {
  return {200, content_type, std::string(bytes.begin(), bytes.end())};
}

JsonText::JsonText() : b_(json_builder_new()) {}
JsonText::~JsonText() { g_object_unref(b_); }

std::string JsonText::text() {
  JsonNode* root = json_builder_get_root(b_);
  std::string out = json::write_json(root);
  if (root) json_node_unref(root);
  return out;
}

}  // namespace taconite::app
