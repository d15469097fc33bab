// The files that let a study's points run apart and be merged (internal to platform/): study.json
// in the study's output folder, point.json in each point's.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "nvsvp/platform/study.hpp"

namespace nvsvp::platform {

inline constexpr const char* kManifestFile = "study.json";
inline constexpr const char* kPointRecordFile = "point.json";

// A 64-bit FNV-1a hash of `text` as 16 hex digits: tells texts apart, no more (not a secure hash).
std::string text_fingerprint(const std::string& text);

// Writes `text` to `path` through a temporary file renamed over it, so that a reader (a merge
// while points still run) sees the old file or the new one, never half of one.
void write_file_atomically(const std::string& path, const std::string& text);

// study.json for a run of the whole study: replaces any earlier one.
void write_manifest(const std::string& out_dir, const nlohmann::json& manifest);

// study.json for a point or a shard, many of which may start at once: written if the folder has
// none; if it has one, it must be this study's from this nvsvp build (ConfigError otherwise).
void write_or_check_manifest(const std::string& out_dir, const nlohmann::json& manifest);

// point.json: which study, point, scenario and nvsvp build the run in this folder was, how it
// ended (`run.failure`, empty when it passed), where it ran and how long it took.
void write_point_record(const std::string& point_dir, const nlohmann::json& manifest, size_t point,
                        const PointRun& run, double wall_seconds);

}  // namespace nvsvp::platform
