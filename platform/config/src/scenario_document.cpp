// Editing a scenario document before it is read: values set at key paths, by `nvsvp run --set`
// and by a study's points.
#include <algorithm>
#include <cctype>

#include "nvsvp/platform/config_reader.hpp"
#include "nvsvp/platform/scenario_document.hpp"

namespace nvsvp::platform {

bool valid_name(const std::string& name) {
  if (name.empty() || name.find_first_not_of('.') == std::string::npos) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

std::vector<std::string> split_key_path(const std::string& path) {
  std::vector<std::string> keys;
  for (size_t start = 0;;) {
    const size_t dot = path.find('.', start);
    keys.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  const bool well_formed = std::none_of(keys.begin(), keys.end(), [](const std::string& k) {
    return k.empty() || k.find_first_of(" \t[]{}:#") != std::string::npos;
  });
  return well_formed ? keys : std::vector<std::string>{};
}

void set_key(ConfigNode& doc, const std::vector<std::string>& keys, ConfigNode value,
             const std::string& origin) {
  value.key_origin = origin;
  ConfigNode* node = &doc;
  std::string path;
  for (size_t i = 0; i < keys.size(); ++i) {
    // A preset named by a string becomes {preset: NAME} so that keys can be set beside it.
    if (node->is_scalar() && (path == "platform" || path == "workload.model")) {
      ConfigNode preset = *node;
      preset.key_origin = node->origin;
      node->kind = ConfigNode::Kind::mapping;
      node->text.clear();
      node->quoted = false;
      node->entries = {{"preset", std::move(preset)}};
    }
    if (node->is_null()) {
      node->kind = ConfigNode::Kind::mapping;
      node->origin = origin;
    }
    if (!node->is_mapping()) {
      config_fail(origin, path.empty() ? "(document)" : path,
                  "a mapping to hold the key " + keys[i], describe(*node));
    }
    const std::string child_path = join_path(path, keys[i]);
    ConfigNode* child = node->find(keys[i]);
    if (i + 1 == keys.size()) {
      if (child) *child = std::move(value);
      else node->entries.emplace_back(keys[i], std::move(value));
      return;
    }
    if (!child) {
      ConfigNode empty;
      empty.origin = empty.key_origin = origin;
      node->entries.emplace_back(keys[i], std::move(empty));
      child = &node->entries.back().second;
    }
    node = child;
    path = child_path;
  }
}

void apply_override(ConfigNode& doc, const std::string& text) {
  // Every node parsed from the value keeps the origin: a long value would be copied into each
  // (memory quadratic in its length), so the origin quotes at most its first 80 characters.
  constexpr size_t kQuoted = 80;
  const std::string origin =
      "command line (--set " + (text.size() > kQuoted ? text.substr(0, kQuoted - 3) + "..." : text) + ")";
  if (text.size() > kMaxConfigFileBytes) {
    config_fail(origin, "", "a --set of at most " + std::to_string(kMaxConfigFileBytes) + " bytes (an input limit)",
                std::to_string(text.size()) + " bytes");
  }
  const size_t eq = text.find('=');
  const std::vector<std::string> keys =
      eq != std::string::npos && eq > 0 ? split_key_path(text.substr(0, eq)) : std::vector<std::string>{};
  if (keys.empty()) config_fail(origin, "", "a.b.c=value", "\"" + text + "\"");
  set_key(doc, keys, parse_config_text(text.substr(eq + 1), origin), origin);
}

}  // namespace nvsvp::platform
