// `nvsvp anchors`: the calibration cases of configs/anchors/ (docs/calibration.md), read, run each
// in a child process, and compared with their public figures.
#include "nvsvp/platform/anchors.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "anchor_measures.hpp"
#include "nvsvp/platform/config_reader.hpp"
#include "nvsvp/platform/child_processes.hpp"
#include "nvsvp/platform/report.hpp"
#include "nvsvp/platform/progress_line.hpp"
#include "nvsvp/platform/scenario_document.hpp"

namespace nvsvp::platform {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string>& measure_kinds() {
  static const std::vector<std::string> kinds = {"moe_phase", "collective", "gemm"};
  return kinds;
}

// Takes `key` out of the mapping `doc` (so that the rest reads as a scenario), or nothing.
std::optional<ConfigNode> take_entry(ConfigNode& doc, const std::string& key) {
  const auto it = std::find_if(doc.entries.begin(), doc.entries.end(), [&](const auto& e) { return e.first == key; });
  if (it == doc.entries.end()) return std::nullopt;
  ConfigNode node = std::move(it->second);
  doc.entries.erase(it);
  return node;
}

const ConfigNode& required_entry(const ConfigNode& doc, const std::optional<ConfigNode>& node, const std::string& key,
                                 const std::string& expected) {
  if (!node) config_fail(doc.origin, key, expected + " (required key)", "nothing");
  return *node;
}

std::string required_string(YamlReader& reader, const std::string& key) {
  const ConfigNode* node = reader.take(key);
  if (!node) config_fail(reader.node().origin, join_path(reader.path(), key), "a value (required key)", "nothing");
  return read_string(*node, join_path(reader.path(), key));
}

AnchorFigure read_figure(const ConfigNode& node) {
  YamlReader reader(node, "anchor");
  AnchorFigure figure;
  figure.metric = required_string(reader, "metric");
  figure.unit = required_string(reader, "unit");
  figure.source = required_string(reader, "source");
  const ConfigNode* low = reader.take("low");
  if (!low) config_fail(node.origin, "anchor.low", "a number > 0 (required key)", "nothing");
  figure.low = read_double(*low, "anchor.low", hw::between(1e-12, std::numeric_limits<double>::max()));
  figure.high = figure.low;
  if (const ConfigNode* high = reader.take("high")) {
    figure.high = read_double(*high, "anchor.high", hw::between(figure.low, std::numeric_limits<double>::max()));
  }
  reader.finish();
  return figure;
}

// The measure's kind, read first: it decides what the rest of the case file may hold.
std::string read_kind(const ConfigNode& node) {
  if (!node.is_mapping()) config_fail(node.origin, "measure", "a mapping", describe(node));
  const ConfigNode* kind = node.find("kind");
  if (!kind) config_fail(node.origin, "measure.kind", "one of " + join(measure_kinds(), ", ") + " (required key)", "nothing");
  const std::string text = read_string(*kind, "measure.kind");
  if (std::find(measure_kinds().begin(), measure_kinds().end(), text) == measure_kinds().end()) {
    config_fail(kind->origin, "measure.kind", "one of " + join(measure_kinds(), ", "), text);
  }
  return text;
}

std::vector<std::string> collective_names() {
  std::vector<std::string> names;
  for (fw::Collective c : fw::all_collectives()) names.push_back(fw::to_string(c));
  return names;
}

void read_collective(YamlReader& reader, fw::CollectiveSpec& spec) {
  const std::string name = required_string(reader, "collective");
  if (!fw::collective_from_string(name, spec.collective)) {
    config_fail(reader.take("collective")->origin, "measure.collective", "one of " + join(collective_names(), ", "), name);
  }
  const hw::Range positive = hw::between(1, 1e18);
  reader("bytes", spec.bytes, "bytes as nccl-tests counts them", positive);
  if (!reader.node().find("bytes")) config_fail(reader.node().origin, "measure.bytes", "a size in bytes (required key)", "nothing");
  reader("message_bytes", spec.message_bytes, "bytes of one store, load or write", positive);
  reader("channels", spec.channels, "ring and all-to-all: NCCL channels, one SM each", hw::between(1, 1024));
  reader("slice_bytes", spec.slice_bytes, "ring: bytes of one pipelined slice", positive);
  reader("chunk_bytes", spec.chunk_bytes, "nvls all-reduce: bytes of one chunk (0: no pipeline)", hw::between(0, 1e18));
  reader("nvls_channels", spec.nvls_channels, "nvls: SMs issuing the multimem stores", hw::between(0, 1024));
}

void read_gemm(YamlReader& reader, GemmCaseSpec& spec) {
  const std::string gemm = required_string(reader, "gemm");
  if (gemm != "gemm1" && gemm != "gemm2") {
    config_fail(reader.take("gemm")->origin, "measure.gemm", "gemm1 (hidden -> 2 x moe_hidden) or gemm2", gemm);
  }
  spec.gemm = gemm == "gemm1" ? fw::ExpertGemm::gemm1 : fw::ExpertGemm::gemm2;
  spec.layout = required_string(reader, "layout");
  if (spec.layout != "contiguous" && spec.layout != "masked") {
    config_fail(reader.take("layout")->origin, "measure.layout", "contiguous or masked (DeepGEMM's layouts)", spec.layout);
  }
  for (const char* key : {"groups", "m_per_group", "n", "k"}) {
    if (!reader.node().find(key)) config_fail(reader.node().origin, join_path("measure", key), "an integer >= 1 (required key)", "nothing");
  }
  reader("groups", spec.groups, "GEMM groups (experts)", hw::between(1, 1 << 20));
  reader("m_per_group", spec.m_per_group, "rows (tokens) per group", hw::between(1, 1e12));
  reader("n", spec.n, "output columns", hw::between(1, 1e12));
  reader("k", spec.k, "reduction dimension", hw::between(1, 1e12));
}

AnchorMeasure read_measure(const ConfigNode& node, const Scenario& scenario) {
  YamlReader reader(node, "measure");
  AnchorMeasure measure;
  reader.take("kind");
  measure.kind = read_kind(node);
  if (measure.kind == "collective" || measure.kind == "gemm") {
    if (measure.kind == "collective") read_collective(reader, measure.collective);
    else read_gemm(reader, measure.gemm);
    reader.finish();
    measure.gemm.software = scenario.software;
    return measure;
  }
  // The byte check knows the software all-to-all's traffic (anchor_measures.hpp).
  measure.scheme = required_string(reader, "scheme");
  if (measure.scheme != "deepep" || scenario.schemes != std::vector<std::string>{"deepep"}) {
    config_fail(reader.take("scheme")->origin, "measure.scheme", "deepep, the scenario's only scheme",
                measure.scheme + " (schemes: " + join(scenario.schemes, ", ") + ")");
  }
  measure.phase = required_string(reader, "phase");
  if (measure.phase != "dispatch" && measure.phase != "combine") {
    config_fail(reader.take("phase")->origin, "measure.phase", "dispatch or combine", measure.phase);
  }
  reader.finish();
  return measure;
}

// A case's entry in the anchors file, for a case that did not give a figure.
json failed_entry(const AnchorCase& c, const std::string& error) {
  return {{"case", c.name},        {"metric", c.anchor.metric}, {"unit", c.anchor.unit},
          {"model", nullptr},      {"anchor_low", c.anchor.low}, {"anchor_high", c.anchor.high},
          {"source", c.anchor.source}, {"ratio", nullptr},     {"passed", false},
          {"error", error}};
}

// model / the nearer end of [low, high]; 1 inside it.
double ratio_to(const AnchorFigure& anchor, double model) {
  if (model < anchor.low) return model / anchor.low;
  if (model > anchor.high) return model / anchor.high;
  return 1.0;
}

// The child's side: runs the case, writes its entry to `file` and exits 0 when it passed, else 1.
[[noreturn]] void run_case_as_child(const std::string& file, const AnchorCase& c) {
  json entry;
  try {
    entry = run_anchor_case(c);
  } catch (const std::invalid_argument& e) {  // sizes the case's plan refuses: bad input
    entry = failed_entry(c, e.what());
    entry["bad_input"] = true;
  } catch (const std::exception& e) {
    entry = failed_entry(c, e.what());
  }
  std::ofstream out(file);
  out << entry.dump(2) << "\n";
  out.close();
  std::fflush(nullptr);
  _exit(out && entry.value("passed", false) ? 0 : 1);
}

// What a finished child left in `file`; a child that died or wrote nothing whole is a failure.
json finish_case(int wait_status, const std::string& file, const AnchorCase& c) {
  std::ifstream in(file);
  const json entry = in ? json::parse(in, nullptr, false) : json();
  if (!WIFSIGNALED(wait_status) && entry.is_object() && entry.contains("passed")) return entry;
  std::ostringstream os;
  os << "the case's process died";
  if (WIFSIGNALED(wait_status)) os << " (signal " << WTERMSIG(wait_status) << ")";
  else os << " (exit code " << WEXITSTATUS(wait_status) << ", no result in " << file << ")";
  return failed_entry(c, os.str());
}

std::string number(const json& value, int digits) {
  if (!value.is_number()) return "-";
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << value.get<double>();
  return os.str();
}

std::string anchor_text(const json& e) {
  const double low = e["anchor_low"].get<double>();
  const double high = e["anchor_high"].get<double>();
  std::ostringstream os;
  os << std::defaultfloat << low;
  if (high != low) os << "-" << high;
  return os.str();
}

void print_table(const std::vector<json>& entries, std::ostream& os) {
  os << std::left << std::setw(46) << "case" << std::setw(20) << "metric" << std::setw(7) << "unit" << std::right
     << std::setw(10) << "model" << std::setw(12) << "anchor" << std::setw(8) << "ratio" << "  source\n";
  for (const json& e : entries) {
    os << std::left << std::setw(46) << e["case"].get<std::string>() << std::setw(20) << e["metric"].get<std::string>()
       << std::setw(7) << e["unit"].get<std::string>() << std::right << std::setw(10) << number(e["model"], 1)
       << std::setw(12) << anchor_text(e) << std::setw(8) << number(e["ratio"], 3) << "  "
       << e["source"].get<std::string>() << "\n";
    if (!e.value("passed", false)) os << "    FAILED: " << e.value("error", std::string("a check failed")) << "\n";
  }
}

}  // namespace

std::vector<std::string> anchor_case_files(const std::string& config_dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(fs::path(config_dir) / "anchors", ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".yaml" && it->is_regular_file(ec)) files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

AnchorCase load_anchor_case(const std::string& file, const std::string& config_dir,
                            const std::vector<std::string>& overrides) {
  ConfigNode doc = load_config_file(file);
  if (!doc.is_mapping()) config_fail(doc.origin, "", "a mapping (an anchor case)", describe(doc));
  const std::optional<ConfigNode> what = take_entry(doc, "what");
  const std::optional<ConfigNode> anchor = take_entry(doc, "anchor");
  const std::optional<ConfigNode> measure = take_entry(doc, "measure");
  AnchorCase c;
  c.file = file;
  c.what = read_string(required_entry(doc, what, "what", "one line on what was measured"), "what");
  c.anchor = read_figure(required_entry(doc, anchor, "anchor", "the measured figure: metric, unit, low, high, source"));
  const ConfigNode& measure_node = required_entry(doc, measure, "measure", "what the case runs: kind, ...");
  if (read_kind(measure_node) != "moe_phase") {
    // A collective or a GEMM runs on the platform alone; the scenario's layer keys would mean nothing.
    for (const char* key : {"workload", "schemes", "software", "replication", "pure_communication"}) {
      if (const ConfigNode* given = doc.find(key)) {
        config_fail(given->key_origin, key, "no " + std::string(key) + " (a collective or gemm case takes a platform only)",
                    describe(*given));
      }
    }
    const std::string origin = file + " (a collective or gemm case: the scenario's layer is not used)";
    doc.entries.emplace_back("workload", parse_config_text("{model: S, routing: {kind: uniform}}", origin));
    doc.entries.emplace_back("schemes", parse_config_text("[deepep]", origin));
  }
  for (const std::string& text : overrides) apply_override(doc, text);
  const ConfigNode* name = doc.find("name");
  const std::string name_origin = name != nullptr ? name->origin : doc.origin;
  // A collective or a GEMM runs no layer: the placeholder's layer is not checked against the
  // platform (a 72-GPU collective has no layer whose experts divide its GPUs).
  c.scenario = load_scenario_document(doc, file, config_dir,
                                      read_kind(measure_node) == "moe_phase" ? ScenarioUse::whole
                                                                              : ScenarioUse::platform_only);
  c.name = c.scenario.name;
  c.measure = read_measure(measure_node, c.scenario);
  // --case and anchors.json name a case by its file: a name inside that says otherwise (a copied
  // case not renamed) would run under the other name.
  const std::string stem = fs::path(file).stem().string();
  if (c.name != stem) {
    config_fail(name_origin, "name", "the case file's own name (" + stem + ")", c.name);
  }
  c.measure.gemm.name = c.name;
  return c;
}

json run_anchor_case(const AnchorCase& c) {
  json details = c.measure.kind == "collective" ? measure_collective(c.scenario.platform, c.measure.collective)
                 : c.measure.kind == "gemm"     ? measure_gemm(c.scenario.platform, c.measure.gemm)
                                                : measure_moe_phase(c.scenario, c.measure.scheme, c.measure.phase);
  json entry = failed_entry(c, "");
  entry.erase("error");
  const double model = details["metric"].get<double>();
  entry["model"] = model;
  entry["ratio"] = ratio_to(c.anchor, model);
  entry["what"] = c.what;
  entry["passed"] = details["passed"].get<bool>();
  if (!entry["passed"].get<bool>()) entry["error"] = details.value("failure", std::string("a check failed"));
  entry["details"] = std::move(details);
  return entry;
}

int run_anchors(const AnchorOptions& options, std::ostream& console, std::ostream& errors) {
  std::vector<AnchorCase> cases;
  std::map<std::string, std::string> known;  // name -> file
  for (const std::string& file : anchor_case_files(options.config_dir)) {
    AnchorCase c = load_anchor_case(file, options.config_dir, options.overrides);
    known[c.name] = file;
    if (options.cases.empty() || std::find(options.cases.begin(), options.cases.end(), c.name) != options.cases.end()) {
      cases.push_back(std::move(c));
    }
  }
  std::vector<std::string> names;
  for (const auto& [name, file] : known) names.push_back(name);
  for (const std::string& name : options.cases) {
    if (!known.count(name)) config_fail("command line (--case)", "--case", "one of " + join(names, ", "), name);
  }
  if (cases.empty()) config_fail("anchors", fs::path(options.config_dir) / "anchors", "at least one case file", "none");

  make_output_folder(options.out_dir, "--out");
  std::vector<json> entries(cases.size());
  auto entry_file = [&](size_t i) { return (fs::path(options.out_dir) / (cases[i].name + ".json")).string(); };
  std::map<pid_t, size_t> running;
  size_t next = 0, finished = 0;
  const unsigned jobs = std::max(options.jobs, 1u);
  console << "anchors: " << cases.size() << " case" << (cases.size() == 1 ? "" : "s") << ", " << jobs
          << " at a time, into " << options.out_dir << std::endl;
  ProgressLine progress(options.progress);
  const auto start = std::chrono::steady_clock::now();
  auto show_progress = [&] { progress.show(progress_of_points("cases", finished, cases.size(), start)); };
  while (finished < cases.size()) {
    while (running.size() < jobs && next < cases.size()) {
      fs::remove(entry_file(next));
      std::fflush(nullptr);
      const pid_t pid = fork_child();
      if (pid == 0) run_case_as_child(entry_file(next), cases[next]);
      running[pid] = next++;
    }
    show_progress();
    int status = 0;
    const pid_t pid = wait_for_any_child(status, progress.enabled() ? std::function<void()>(show_progress) : nullptr);
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const size_t i = it->second;
    running.erase(it);
    entries[i] = finish_case(status, entry_file(i), cases[i]);
    progress.clear();
    console << "[" << ++finished << "/" << cases.size() << "] " << cases[i].name
            << (entries[i].value("passed", false) ? ": ok" : ": FAILED") << std::endl;
  }
  progress.clear();

  print_table(entries, console);
  const std::string path = (fs::path(options.out_dir) / "anchors.json").string();
  std::ofstream out(path);
  out << json{{"cases", entries}, {"nvsvp", nvsvp_build_json(options.command_line)}}.dump(2) << "\n";
  if (!out) throw std::runtime_error("cannot write " + path);
  console << "wrote " << path << std::endl;
  for (const json& e : entries) {
    if (e.value("bad_input", false)) {
      errors << "nvsvp: anchors: case " << e.value("case", std::string("?")) << ": " << e.value("error", std::string("?"))
             << "\n";
    }
  }
  const bool bad_input = std::any_of(entries.begin(), entries.end(), [](const json& e) { return e.value("bad_input", false); });
  const bool passed = std::all_of(entries.begin(), entries.end(), [](const json& e) { return e.value("passed", false); });
  return bad_input ? kAnchorsBadInput : passed ? 0 : 1;
}

}  // namespace nvsvp::platform
