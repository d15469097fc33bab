// Where each effective value of a scenario was set (a preset file, the scenario file, a --set),
// private to platform/: an error that involves several keys blames the most specific place, and
// checks made after loading (the fabric's resources, fabric_resources.cpp) blame the same way.
#pragma once

#include <initializer_list>
#include <map>
#include <string>

#include "nvsvp/platform/config_reader.hpp"

namespace nvsvp::platform {

// How specific the place that set a value is: a semantic error that involves several keys is
// reported at the most specific one, since that is most likely the one the user just changed.
enum Level : int { kDefault = -1, kPreset = 0, kScenarioFile = 1, kCommandLine = 2 };

inline const char* const kCommandLinePrefix = "command line";

inline bool from_command_line(const std::string& origin) {
  return origin.compare(0, std::char_traits<char>::length(kCommandLinePrefix), kCommandLinePrefix) == 0;
}

// --- where each effective value was set ------------------------------------------------------

struct Place {
  std::string path;
  std::string origin;
  int level = kDefault;
};

class KeyOrigins {
 public:
  // Records every key under `node` (a mapping at key path `path`). Preset files are recorded
  // after the scenario and must not replace what the scenario set, hence `overwrite`.
  void record(const ConfigNode& node, const std::string& path, int level, bool overwrite) {
    if (node.is_sequence()) {  // a list of sections (faults): its entries as path[i]
      for (size_t i = 0; i < node.items.size(); ++i) {
        const std::string item_path = path + "[" + std::to_string(i) + "]";
        if (overwrite || places_.count(item_path) == 0) places_[item_path] = Place{item_path, node.items[i].origin, level};
        record(node.items[i], item_path, level, overwrite);
      }
      return;
    }
    if (!node.is_mapping()) return;
    for (const auto& [key, child] : node.entries) {
      const std::string child_path = join_path(path, key);
      const int child_level = from_command_line(child.key_origin) ? kCommandLine : level;
      if (overwrite || places_.count(child_path) == 0) {
        places_[child_path] = Place{child_path, child.key_origin, child_level};
      }
      record(child, child_path, level, overwrite);
    }
  }

  // The place of `path`; a value nobody set (a struct default) is blamed on its nearest
  // ancestor that was set, at the lowest level.
  Place at(const std::string& path) const {
    for (std::string p = path;; p = p.substr(0, p.rfind('.'))) {
      const auto it = places_.find(p);
      if (it != places_.end()) {
        return p == path ? it->second : Place{path, it->second.origin, kDefault};
      }
      if (p.find('.') == std::string::npos) break;
    }
    return Place{path, fallback_, kDefault};
  }

  // The most specific of several places (the first on a tie).
  Place blame(std::initializer_list<std::string> paths) const {
    Place best;
    bool first = true;
    for (const std::string& path : paths) {
      Place place = at(path);
      if (first || place.level > best.level) best = place;
      first = false;
    }
    return best;
  }

  void set_fallback(std::string origin) { fallback_ = std::move(origin); }
  void alias(const std::string& path, const std::string& source) {
    if (places_.count(path) == 0) places_[path] = at(source);
  }

 private:
  std::map<std::string, Place> places_;
  std::string fallback_;
};

}  // namespace nvsvp::platform
