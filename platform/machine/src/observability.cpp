// Per-component logging and tracing: the --log and --trace patterns, the component names they are
// matched against, the levels they set, and the trace files (observability.hpp).
#include "nvsvp/platform/observability.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "nvsvp/hw/switch_registers.hpp"
#include "nvsvp/model/component_log.hpp"
#include "nvsvp/model/nvlink_packet.hpp"
#include "nvsvp/model/switch_csr.hpp"
#include "nvsvp/platform/platform.hpp"
#include "nvsvp/platform/register_names.hpp"
#include "nvsvp/platform/tlm_hal.hpp"

namespace nvsvp::platform {

namespace regs = hw::switch_regs;

namespace {

const char* const kFirmware = "firmware";

std::string indexed(const char* base, uint64_t index) { return std::string(base) + "_" + std::to_string(index); }

// Simulated time as exact nanoseconds with three decimals (the kernel counts picoseconds).
std::string time_ns(const sc_core::sc_time& t) {
  char text[32];
  const uint64_t ps = t.value();
  std::snprintf(text, sizeof text, "%" PRIu64 ".%03" PRIu64, ps / 1000, ps % 1000);
  return text;
}

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%" PRIx64, value);
  return text;
}

// The names for a message, each run of one kind shortened to its first and last: "gpu_0 .. gpu_7".
std::string name_summary(const std::vector<std::string>& names) {
  auto kind = [](const std::string& name) {  // every number as one '#'
    std::string k;
    for (char c : name) {
      const bool digit = c >= '0' && c <= '9';
      if (!digit) k += c;
      else if (k.empty() || k.back() != '#') k += '#';
    }
    return k;
  };
  std::string out;
  for (size_t i = 0; i < names.size();) {
    size_t j = i;
    while (j + 1 < names.size() && kind(names[j + 1]) == kind(names[i])) ++j;
    if (!out.empty()) out += ", ";
    out += names[i];
    if (j > i) out += " .. " + names[j];
    i = j + 1;
  }
  return out;
}

void spdlog_sink(hw::LogLevel level, std::string_view component, const sc_core::sc_time& now,
                 std::string_view message) {
  // One unsynchronized stderr logger: each scheme's simulation is one thread of one process.
  static const std::shared_ptr<spdlog::logger> logger = [] {
    auto l = spdlog::stderr_logger_st("nvsvp");
    l->set_pattern("%v");
    l->set_level(spdlog::level::trace);  // the components filter, by their own levels
    l->flush_on(spdlog::level::trace);   // interleaves in order with what else the child prints
    return l;
  }();
  static constexpr spdlog::level::level_enum kLevels[] = {spdlog::level::trace, spdlog::level::debug,
                                                          spdlog::level::info,  spdlog::level::warn,
                                                          spdlog::level::err,   spdlog::level::off};
  logger->log(kLevels[static_cast<size_t>(level)], model::format_log_line(level, component, now, message));
}

// The level the settings give `name`: the last setting that names it, or the default.
hw::LogLevel level_of(const std::vector<LogSetting>& logs, const std::string& name) {
  hw::LogLevel level = hw::kDefaultLogLevel;
  for (const LogSetting& s : logs) {
    if (component_matches(s.pattern, name)) level = s.level;
  }
  return level;
}

std::string base_name(const sc_core::sc_object& object) { return object.basename(); }

}  // namespace

LogSetting parse_log_setting(const std::string& text) {
  const size_t equals = text.rfind('=');
  const std::string expected = std::string("expected PATTERN=LEVEL with LEVEL one of ") + std::string(hw::kLogLevelNames);
  if (equals == std::string::npos || equals == 0) throw ConfigError("--log " + text + ": " + expected);
  LogSetting setting;
  setting.pattern = text.substr(0, equals);
  const std::string level = text.substr(equals + 1);
  if (!hw::log_level_from_string(level, setting.level)) {
    throw ConfigError("--log " + text + ": unknown level '" + level + "'; " + expected);
  }
  return setting;
}

bool component_matches(const std::string& pattern, const std::string& name) {
  // fnmatch's FNM_PATHNAME keeps wildcards within one '/'-separated part: the names' parts are
  // separated by '.', so both sides trade '.' for '/'.
  std::string p = pattern;
  std::string n = name;
  std::replace(p.begin(), p.end(), '.', '/');
  std::replace(n.begin(), n.end(), '.', '/');
  return fnmatch(p.c_str(), n.c_str(), FNM_PATHNAME) == 0;
}

std::vector<std::string> component_names(const PlatformSpec& spec) {
  std::vector<std::string> names;
  for (uint32_t c = 0; c < spec.switch_chips; ++c) names.push_back(indexed("switch", c));
  for (uint32_t c = 0; c < spec.switch_chips; ++c) names.push_back(indexed("switch", c) + ".csr");
  for (uint32_t g = 0; g < spec.gpus; ++g) names.push_back(indexed("gpu", g));
  const uint64_t links = uint64_t{spec.gpus} * spec.links_per_gpu();
  for (uint64_t i = 0; i < links; ++i) names.push_back(indexed("gpu_to_switch", i));
  for (uint64_t i = 0; i < links; ++i) names.push_back(indexed("switch_to_gpu", i));
  names.emplace_back(kFirmware);
  return names;
}

void check_patterns(const Observability& observe, const PlatformSpec& spec) {
  if (observe.logs.empty() && observe.traces.empty()) return;
  const std::vector<std::string> names = component_names(spec);
  auto check = [&](const std::string& option, const std::string& pattern) {
    for (const std::string& name : names) {
      if (component_matches(pattern, name)) return;
    }
    throw ConfigError(option + " '" + pattern + "': matches no component of this platform; the components are " +
                      name_summary(names) + " (wildcards do not cross '.'; docs/configuration.md)");
  };
  for (const LogSetting& s : observe.logs) check("--log", s.pattern);
  for (const std::string& pattern : observe.traces) check("--trace", pattern);
}

void configure_logs(Platform& platform, TlmHal& hal, const std::vector<LogSetting>& logs) {
  if (logs.empty()) return;  // every component keeps the default level
  model::set_log_sink(&spdlog_sink);
  auto configure = [&](model::ComponentLog& log, const std::string& name) { log.configure(name, level_of(logs, name)); };
  for (uint32_t c = 0; c < platform.switch_count(); ++c) {
    model::SwitchChip& chip = platform.chip(c);
    configure(chip.log(), base_name(chip));
    configure(platform.register_log(c), base_name(chip) + ".csr");
  }
  for (uint32_t g = 0; g < platform.gpu_count(); ++g) configure(platform.gpu(g).log(), base_name(platform.gpu(g)));
  for (LinkDirection d : {LinkDirection::gpu_to_switch, LinkDirection::switch_to_gpu}) {
    for (uint32_t g = 0; g < platform.gpu_count(); ++g) {
      for (uint32_t l = 0; l < platform.links_per_gpu(); ++l) {
        model::NvlinkPort& port = platform.link(d, g, l);
        configure(port.log(), base_name(port));
      }
    }
  }
  configure(hal.log(), kFirmware);
}

ComponentTrace::ComponentTrace(Platform& platform, const std::vector<std::string>& patterns, const std::string& dir,
                               const std::string& label) {
  auto named = [&](const std::string& name) {
    return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) { return component_matches(p, name); });
  };
  // The links: named themselves, or through their GPU or their chip.
  std::vector<bool> chip_named(platform.switch_count());
  chips_.assign(platform.switch_count(), named(kFirmware));
  for (uint32_t c = 0; c < platform.switch_count(); ++c) {
    const std::string chip = base_name(platform.chip(c));
    chip_named[c] = named(chip);
    if (named(chip + ".csr")) chips_[c] = true;
  }
  for (LinkDirection d : {LinkDirection::gpu_to_switch, LinkDirection::switch_to_gpu}) {
    for (uint32_t g = 0; g < platform.gpu_count(); ++g) {
      const bool gpu_named = named(base_name(platform.gpu(g)));
      for (uint32_t l = 0; l < platform.links_per_gpu(); ++l) {
        model::NvlinkPort& port = platform.link(d, g, l);
        const LinkEnd end = platform.link_end(g, l);
        if (!gpu_named && !chip_named[end.chip] && !named(base_name(port))) continue;
        LinkColumns& columns = links_[&port];
        columns.prefix = base_name(port) + (d == LinkDirection::gpu_to_switch ? ",gpu_to_switch," : ",switch_to_gpu,") +
                         std::to_string(g) + "," + std::to_string(l) + "," + std::to_string(end.chip) + "," +
                         std::to_string(end.port) + ",";
        columns.flit_bytes = port.params().flit_bytes;
        port.attach_observer(this);
      }
    }
  }
  const bool any_chip = std::find(chips_.begin(), chips_.end(), true) != chips_.end();
  if (links_.empty() && !any_chip) return;
  std::filesystem::create_directories(dir);
  if (!links_.empty()) {
    transactions_path_ = (std::filesystem::path(dir) / ("transactions_" + label + ".csv")).string();
    transactions_.open(transactions_path_, std::ios::binary | std::ios::trunc);
    if (!transactions_) throw std::runtime_error("cannot write " + transactions_path_);
    transactions_ << "time_ns,component,direction,gpu,link,chip,port,kind,traffic_class,vc,source,destination,bytes,"
                     "payload_bytes,sequence,arrival_ns,packet,packets\n";
  }
  if (any_chip) {
    registers_path_ = (std::filesystem::path(dir) / ("registers_" + label + ".csv")).string();
    registers_.open(registers_path_, std::ios::binary | std::ios::trunc);
    if (!registers_) throw std::runtime_error("cannot write " + registers_path_);
    registers_ << "time_ns,chip,access,offset,register,data,status,access_ns\n";
    platform.attach_register_observer(this);
  }
}

ComponentTrace::~ComponentTrace() {
  try {
    close();
  } catch (const std::exception&) {  // a destructor reports nothing; close() is called first on the normal path
  }
}

void ComponentTrace::close() {
  for (auto [file, path] : {std::pair{&transactions_, &transactions_path_}, std::pair{&registers_, &registers_path_}}) {
    if (!file->is_open()) continue;
    file->flush();
    const bool written = static_cast<bool>(*file);
    file->close();
    if (!written) throw std::runtime_error("could not write all of " + *path);
  }
}

void ComponentTrace::message_sent(const model::NvlinkPort& link, const tlm::tlm_generic_payload& payload,
                                  const sc_core::sc_time& start) {
  const model::NvlinkExtension& ext = model::extension_of(payload);
  write_transaction(link, ext, std::to_string(ext.vc), ext.packet_index, ext.packet_count, ext.wire_flits,
                    ext.payload_bytes, start, ext.tail_arrival);
}

// A fast fabric packet: the row a packet fabric packet gets, without a VC (the fast fabric pools a
// class's VCs).
void ComponentTrace::packet_sent(const model::NvlinkPort& link, const tlm::tlm_generic_payload& message,
                                 uint32_t packet_index, uint32_t packet_count, uint32_t wire_flits,
                                 uint32_t payload_bytes, const sc_core::sc_time& start,
                                 const sc_core::sc_time& tail_arrival) {
  write_transaction(link, model::extension_of(message), "", packet_index, packet_count, wire_flits, payload_bytes,
                    start, tail_arrival);
}

void ComponentTrace::write_transaction(const model::NvlinkPort& link, const model::NvlinkExtension& ext,
                                       const std::string& vc, uint32_t packet_index, uint32_t packet_count,
                                       uint32_t wire_flits, uint64_t payload_bytes, const sc_core::sc_time& start,
                                       const sc_core::sc_time& tail_arrival) {
  const auto found = links_.find(&link);
  if (found == links_.end()) return;
  const LinkColumns& columns = found->second;
  transactions_ << time_ns(start) << ',' << columns.prefix << model::to_string(ext.opcode) << ','
                << model::to_string(ext.traffic_class) << ',' << vc << ',' << ext.source_gpu << ',' << ext.target_gpu
                << ',' << uint64_t{wire_flits} * columns.flit_bytes << ',' << payload_bytes << ',' << ext.sequence
                << ',' << time_ns(tail_arrival) << ',' << packet_index << ',' << packet_count << '\n';
  ++messages_;
}

void ComponentTrace::register_accessed(uint32_t chip, const tlm::tlm_generic_payload& payload,
                                       const sc_core::sc_time& delay) {
  if (chip >= chips_.size() || !chips_[chip]) return;
  uint32_t data = 0;
  if (payload.get_data_length() >= 4) std::memcpy(&data, payload.get_data_ptr(), 4);
  const auto offset = static_cast<uint32_t>(payload.get_address());
  registers_ << time_ns(sc_core::sc_time_stamp()) << ',' << chip << ','
             << (payload.get_command() == tlm::TLM_READ_COMMAND ? "read" : "write") << ',' << hex(offset) << ','
             << switch_register_name(offset) << ',' << hex(data) << ',' << payload.get_response_string() << ','
             << time_ns(delay) << '\n';
  ++register_accesses_;
}

}  // namespace nvsvp::platform
