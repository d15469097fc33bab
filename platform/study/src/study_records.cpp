// study.json and point.json, and the merge of a study's point folders into study.csv,
// summary.json and wall_times.csv: what lets a study's points run on other machines, in any
// order, and still give the files a single local run gives.
#include "study_records.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "nvsvp/platform/config_reader.hpp"
#include "nvsvp/platform/build_info.hpp"
#include "nvsvp/platform/child_processes.hpp"
#include "nvsvp/platform/report.hpp"
#include "nvsvp/platform/text.hpp"

namespace nvsvp::platform {

using nlohmann::json;

namespace {

namespace fs = std::filesystem;

constexpr int kManifestFormat = 2;  // 2: each point names its step kind

// The text of `path`; empty when it is not a regular file one can read.
std::string read_text(const std::string& path) {
  if (!non_regular_file_kind(path).empty()) return "";
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// The nvsvp build that made a record: its version and commit, compared as a pair.
json build_identity() { return {{"version", nvsvp_version()}, {"git_commit", nvsvp_git_commit()}}; }

std::string describe_build(const json& build) {
  return "nvsvp " + build.value("version", std::string("?")) + " (git " + build.value("git_commit", std::string("?")) +
         ")";
}

// What decides a study's results, hashed: its name, schemes, reference, keys, timelines and
// every point with its scenario; not the file's path nor the command that named it.
std::string manifest_fingerprint(const json& manifest) {
  const json decisive = {{"study", manifest.at("study")},         {"schemes", manifest.at("schemes")},
                         {"reference", manifest.at("reference")}, {"keys", manifest.at("keys")},
                         {"timelines", manifest.at("timelines")}, {"points", manifest.at("points")}};
  return text_fingerprint(decisive.dump());
}

// `nvsvp study FILE [--set K=V]...`: the command that defines the study, without the options
// that only say how or where it runs (--jobs, --out, --point, ...), so that every way of running
// it names it alike.
std::string study_command(const Study& study) {
  std::string line = "nvsvp study " + shell_word(study.file);
  for (const std::string& set : study.overrides) line += " --set " + shell_word(set);
  return line;
}

json read_json_file(const std::string& path, const std::string& what) {
  if (const std::string kind = non_regular_file_kind(path); !kind.empty()) {
    throw ConfigError(path + ": expected " + what + " (a JSON object), got " + kind);
  }
  std::ifstream file(path);
  const json document = file ? json::parse(file, nullptr, false) : json();
  if (!document.is_object()) {
    throw ConfigError(path + ": expected " + what + " (a JSON object), got " +
                      (file ? "something else" : "no readable file"));
  }
  return document;
}

// A scenario's effective configuration hashed without its leading comment, which names the file
// it was read from: the same scenario read from another path, or rewritten by its run into the
// point's folder, hashes alike.
std::string scenario_fingerprint(const std::string& dump) {
  size_t start = 0;
  while (start < dump.size() && dump[start] == '#') {
    const size_t end = dump.find('\n', start);
    start = end == std::string::npos ? dump.size() : end + 1;
  }
  return text_fingerprint(dump.substr(start));
}

// Why the record in a point's folder is not this study's point, or "" when it is.
std::string refusal_of_record(const json& record, const json& manifest, size_t p, const std::string& point_dir) {
  const json& point = manifest["points"][p];
  const auto is = [&](const char* key, bool (json::*type)() const noexcept) {
    return record.contains(key) && (record[key].*type)();
  };
  if (!record.is_object() || !is("study", &json::is_string) || !is("number", &json::is_number_unsigned) ||
      !is("name", &json::is_string) || !is("scenario_hash", &json::is_string) ||
      !is("fingerprint", &json::is_string) || !is("nvsvp", &json::is_object) ||
      !(is("failure", &json::is_null) || is("failure", &json::is_string)) || !is("host", &json::is_string) ||
      !is("wall_seconds", &json::is_number)) {
    return "not a point record (expected study, number, name, scenario_hash, fingerprint, nvsvp, failure (null or "
           "text), host and wall_seconds, of their types)";
  }
  if (record["study"] != manifest["study"]) {
    return "a point of study " + record["study"].dump() + ", not of " + manifest["study"].dump();
  }
  if (record["nvsvp"] != manifest["nvsvp"]) {
    return "made by " + describe_build(record["nvsvp"]) + ", the study by " + describe_build(manifest["nvsvp"]);
  }
  if (record["number"] != point["number"] || record["name"] != point["name"]) {
    return "point " + record["number"].dump() + " " + record["name"].dump() + ", not point " +
           point["number"].dump() + " " + point["name"].dump();
  }
  if (record["scenario_hash"] != point["scenario_hash"]) {
    return "another scenario: its scenario hashes to " + record["scenario_hash"].dump() + ", the study's point to " +
           point["scenario_hash"].dump();
  }
  if (record["fingerprint"] != manifest["fingerprint"]) {
    return "another version of the study (other points, schemes or reference): fingerprint " +
           record["fingerprint"].dump() + ", the study's " + manifest["fingerprint"].dump();
  }
  const std::string scenario = point_dir + "/scenario.yaml";
  if (scenario_fingerprint(read_text(scenario)) != point["scenario_hash"]) {
    return "another scenario: " + scenario + " is not the point's (was the folder run again by hand?)";
  }
  return "";
}


}  // namespace

void read_point_report(const std::string& path, const std::vector<std::string>& schemes, PointRun& run) {
  run.results = json::array();
  std::string failure;
  if (const std::string kind = non_regular_file_kind(path); !kind.empty()) {
    failure = "no readable report.json (" + path + " is " + kind + ")";
  } else if (std::ifstream in(path); !in) {
    failure = "no readable report.json";
  } else if (const json document = json::parse(in, nullptr, false); document.is_discarded()) {
    failure = "no readable report.json (" + path + " is not JSON: cut short?)";
  } else if (const std::string problem = report_shape_problem(document, schemes); !problem.empty()) {
    failure = "a report.json of another shape (" + path + ": " + problem + ")";
  } else {
    run.results = point_results(document);
  }
  if (run.failure.empty()) run.failure = failure;
}

std::string text_fingerprint(const std::string& text) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

namespace {

// `text` in a file beside `path` that only this process writes; returns its name.
std::string write_temporary(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp." + std::to_string(getpid());
  std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
  file << text;
  file.close();
  if (!file) throw std::runtime_error("cannot write " + temporary);
  return temporary;
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = write_temporary(path, text);
  std::error_code ec;
  fs::rename(temporary, path, ec);
  if (ec) throw std::runtime_error("cannot rename " + temporary + " to " + path + ": " + ec.message());
}

json study_manifest(const Study& study) {
  json points = json::array();
  for (size_t p = 0; p < study.points.size(); ++p) {
    const StudyPoint& point = study.points[p];
    points.push_back({{"number", p + 1},
                      {"name", point.name},
                      {"directory", point.directory},
                      {"values", point.values},
                      {"step", point.scenario.step.kind},  // the step columns of a merge's study.csv
                      {"scenario_hash", scenario_fingerprint(dump_effective(point.scenario))}});
  }
  json manifest = {{"format", kManifestFormat}, {"study", study.name},         {"file", study.file},
                   {"command_line", study_command(study)},                     {"schemes", study.schemes},
                   {"reference", study.reference},                             {"keys", study.keys},
                   {"timelines", study.timelines},                             {"points", points},
                   {"nvsvp", build_identity()}};
  manifest["fingerprint"] = manifest_fingerprint(manifest);
  return manifest;
}

Study study_of_manifest(const json& manifest, const std::string& file) {
  const auto fail = [&](const std::string& expected) {
    throw ConfigError(file + ": expected " + expected + " (the study.json an nvsvp study command writes)");
  };
  if (!manifest.is_object() || !manifest.contains("format") || manifest["format"] != kManifestFormat) {
    fail("\"format\": " + std::to_string(kManifestFormat));
  }
  Study study;
  try {
    study.name = manifest.at("study").get<std::string>();
    study.file = manifest.at("file").get<std::string>();
    study.schemes = manifest.at("schemes").get<std::vector<std::string>>();
    study.reference = manifest.at("reference").get<std::string>();
    study.keys = manifest.at("keys").get<std::vector<std::string>>();
    study.timelines = manifest.at("timelines").get<bool>();
    manifest.at("command_line").get<std::string>();
    manifest.at("nvsvp").at("version").get<std::string>();
    manifest.at("nvsvp").at("git_commit").get<std::string>();
    for (const json& entry : manifest.at("points")) {
      StudyPoint point;
      point.name = entry.at("name").get<std::string>();
      point.directory = entry.at("directory").get<std::string>();
      point.values = entry.at("values").get<std::vector<std::string>>();
      point.scenario.step.kind = entry.at("step").get<std::string>();
      entry.at("scenario_hash").get<std::string>();
      if (entry.at("number").get<size_t>() != study.points.size() + 1 || point.values.size() != study.keys.size() ||
          point.directory.find('/') != std::string::npos || point.directory.empty()) {
        fail("points numbered from 1, each with a value per key and a folder name");
      }
      study.points.push_back(std::move(point));
    }
  } catch (const json::exception&) {
    fail("keys study, file, command_line, schemes, reference, keys, timelines, points and nvsvp of their types");
  }
  if (study.points.empty()) fail("at least one point");
  if (!manifest.contains("fingerprint") || manifest["fingerprint"] != manifest_fingerprint(manifest)) {
    fail("a fingerprint that matches its contents (was the file edited?)");
  }
  return study;
}

void write_manifest(const std::string& out_dir, const json& manifest) {
  write_file_atomically(out_dir + "/" + kManifestFile, manifest.dump(2) + "\n");
}

void write_or_check_manifest(const std::string& out_dir, const json& manifest) {
  const std::string path = out_dir + "/" + kManifestFile;
  // Many points of one study may start at once: each writes its own temporary file and links it
  // in place; link() fails where one is already there, and then that one is checked.
  const std::string temporary = write_temporary(path, manifest.dump(2) + "\n");
  const bool written = link(temporary.c_str(), path.c_str()) == 0;
  const int link_error = errno;
  std::remove(temporary.c_str());
  if (written) return;
  if (link_error != EEXIST) throw std::runtime_error("cannot write " + path + ": " + std::strerror(link_error));
  const json existing = read_json_file(path, "a study.json");
  if (existing.value("study", json()) != manifest["study"] || existing.value("fingerprint", json()) != manifest["fingerprint"]) {
    throw ConfigError(path + ": the folder holds study " + existing.value("study", json()).dump() + " (fingerprint " +
                      existing.value("fingerprint", json()).dump() + "), not this study " + manifest["study"].dump() +
                      " (fingerprint " + manifest["fingerprint"].dump() +
                      "): give another --out, or remove study.json if the folder's points are to be replaced");
  }
  if (existing.value("nvsvp", json()) != manifest["nvsvp"]) {
    throw ConfigError(path + ": the folder's points are made by " + describe_build(existing.value("nvsvp", json())) +
                      ", this is " + describe_build(manifest["nvsvp"]) +
                      ": run every point of a study with one build, or give another --out");
  }
}

void write_point_record(const std::string& point_dir, const json& manifest, size_t point, const PointRun& run,
                        double wall_seconds) {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  const json& entry = manifest["points"][point];
  const json record = {{"study", manifest["study"]},
                       {"fingerprint", manifest["fingerprint"]},
                       {"number", entry["number"]},
                       {"name", entry["name"]},
                       {"scenario_hash", entry["scenario_hash"]},
                       {"nvsvp", manifest["nvsvp"]},
                       {"failure", run.failure.empty() ? json() : json(run.failure)},
                       {"host", host},
                       {"wall_seconds", wall_seconds}};
  write_file_atomically(point_dir + "/" + kPointRecordFile, record.dump(2) + "\n");
}

int merge_study(const std::string& out_dir, const Study* expected, std::ostream& console) {
  const std::string manifest_path = out_dir + "/" + kManifestFile;
  json manifest;
  std::error_code ec;
  if (fs::exists(manifest_path, ec)) {
    manifest = read_json_file(manifest_path, "a study.json");
    study_of_manifest(manifest, manifest_path);  // checked before it is compared
    if (expected) {
      const json loaded = study_manifest(*expected);
      if (loaded["fingerprint"] != manifest["fingerprint"]) {
        throw ConfigError(manifest_path + ": the folder holds study " + manifest["study"].dump() + " (fingerprint " +
                          manifest["fingerprint"].dump() + "), not the one " + expected->file +
                          " defines (fingerprint " + loaded["fingerprint"].dump() + ")");
      }
    }
  } else if (expected) {
    manifest = study_manifest(*expected);
  } else {
    throw ConfigError(out_dir + ": expected a study's output folder, but it has no study.json (every nvsvp study "
                      "command writes one: a run, --emit-commands, --point, --shard)");
  }
  if (manifest["nvsvp"] != build_identity()) {
    throw ConfigError(manifest_path + ": the study was made by " + describe_build(manifest["nvsvp"]) + ", this is " +
                      describe_build(build_identity()) + ": merge with the build that ran its points");
  }
  const Study study = study_of_manifest(manifest, manifest_path);

  std::vector<PointRun> runs(study.points.size());
  std::vector<std::string> refusals;
  std::string wall_times = "point,host,wall_seconds\n";
  for (size_t p = 0; p < study.points.size(); ++p) {
    const std::string point_dir = out_dir + "/" + study.points[p].directory;
    const std::string record_path = point_dir + "/" + kPointRecordFile;
    if (!fs::exists(record_path, ec)) {
      runs[p].failure = std::string("missing: no ") + kPointRecordFile +
                        " (the point has not run, is still running, or was stopped before it ended)";
      continue;
    }
    std::ifstream file(record_path);
    const json record = non_regular_file_kind(record_path).empty() ? json::parse(file, nullptr, false) : json();
    const std::string refusal = refusal_of_record(record, manifest, p, point_dir);
    if (!refusal.empty()) {
      refusals.push_back(record_path + ": " + refusal);
      continue;
    }
    runs[p].failure = record["failure"].is_null() ? "" : record["failure"].get<std::string>();
    read_point_report(point_dir + "/report.json", study.schemes, runs[p]);
    wall_times += csv_field(study.points[p].name) + "," + csv_field(record["host"].get<std::string>()) + "," +
                  fixed(record["wall_seconds"].get<double>(), 3) + "\n";
  }
  if (!refusals.empty()) {
    throw ConfigError(std::to_string(refusals.size()) + " point folder" + (refusals.size() == 1 ? " is" : "s are") +
                      " not study " + manifest["study"].dump() + "'s points; nothing merged:\n  " +
                      join(refusals, "\n  "));
  }

  json summary = study_summary(study, runs);
  summary["nvsvp"] = manifest["nvsvp"];
  summary["nvsvp"]["command_line"] = manifest["command_line"];
  for (const auto& [name, text] : {std::pair<std::string, std::string>{"study.csv", study_csv(study, runs)},
                                   std::pair<std::string, std::string>{"summary.json", summary.dump(2) + "\n"},
                                   std::pair<std::string, std::string>{"wall_times.csv", wall_times}}) {
    write_file_atomically(out_dir + "/" + name, text);
  }
  print_study_summary(summary, out_dir, console);
  std::string again;
  for (size_t p = 0; p < runs.size(); ++p) {
    if (!runs[p].failure.empty()) again += " --point " + std::to_string(p + 1);
  }
  if (!again.empty()) {
    console << "to run the failed and missing points again: " << manifest["command_line"].get<std::string>()
            << " --out " << shell_word(out_dir) << again << "\n";
  }
  return summary["passed"].get<bool>() ? 0 : 1;
}

}  // namespace nvsvp::platform
