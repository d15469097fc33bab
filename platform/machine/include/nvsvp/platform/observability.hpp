// Logging and tracing per component (`nvsvp run --log PATTERN=LEVEL --trace PATTERN`).
//
// Components are named as the platform's SystemC modules are, below the top module "platform":
// switch_<c> (switch chip c), switch_<c>.csr (its register block), gpu_<g>, gpu_to_switch_<i> and
// switch_to_gpu_<i> (the link i = g x links_per_gpu + l, GPU g's link l, in one direction), and
// firmware (the firmware thread). Patterns are shell globs in which '*', '?' and '[...]' never
// cross a '.': `switch*` names the chips and the switch-to-GPU links, not the register blocks.
//
// Nothing is attached or formatted for a component no pattern names: a run without --log and
// --trace pays what it paid before (a level compare at a few cold call sites).
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "nvsvp/hw/log_level.hpp"
#include "nvsvp/model/message_observer.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::model {
class NvlinkPort;
struct NvlinkExtension;
}

namespace nvsvp::platform {

class Platform;
class TlmHal;

// One --log PATTERN=LEVEL.
struct LogSetting {
  std::string pattern;
  hw::LogLevel level = hw::kDefaultLogLevel;
};

struct Observability {
  std::vector<LogSetting> logs;     // in order: a later setting wins for the components both name
  std::vector<std::string> traces;  // --trace patterns
  std::string trace_dir;            // where the trace files go (the run's output folder)
  std::string file_label;           // the files' <scheme> part; empty: the scheme's name
};

// Parses one --log value, PATTERN=LEVEL. Throws ConfigError naming the option, the value and
// what was expected.
LogSetting parse_log_setting(const std::string& text);

// Whether `name` matches the glob `pattern` (wildcards do not cross '.').
bool component_matches(const std::string& pattern, const std::string& name);

// Every component of a platform of `spec`, in a fixed order: switch_<c>, switch_<c>.csr, gpu_<g>,
// gpu_to_switch_<i>, switch_to_gpu_<i>, firmware.
std::vector<std::string> component_names(const PlatformSpec& spec);

// Throws ConfigError for a --log or --trace pattern that names no component of `spec` (the
// message lists the component names).
void check_patterns(const Observability& observe, const PlatformSpec& spec);

// Sets the levels of the components the settings name and sends every printed line to stderr
// through spdlog, as "<simulated time> ns [<level>] <component>: <message>".
void configure_logs(Platform& platform, TlmHal& hal, const std::vector<LogSetting>& logs);

// The trace files of one scheme's run (<scheme> is `label`): transactions_<scheme>.csv, a row
// per message on each link a --trace pattern names (directly, or through its GPU or its switch
// chip), and registers_<scheme>.csv, a row per register access to the chips whose register block
// a pattern names (switch_<c>.csr; `firmware` names every chip's). A file is written only when
// some pattern names what it holds. Attaches itself to the platform on construction.
class ComponentTrace final : public model::MessageObserver {
 public:
  ComponentTrace(Platform& platform, const std::vector<std::string>& patterns, const std::string& dir,
                 const std::string& label);
  ComponentTrace(const ComponentTrace&) = delete;
  ComponentTrace& operator=(const ComponentTrace&) = delete;
  ~ComponentTrace() override;

  // Flushes and closes the files; throws std::runtime_error when one could not be written.
  void close();
  uint64_t messages() const { return messages_; }
  uint64_t register_accesses() const { return register_accesses_; }

  void message_sent(const model::NvlinkPort& link, const tlm::tlm_generic_payload& payload,
                    const sc_core::sc_time& start) override;
  void packet_sent(const model::NvlinkPort& link, const tlm::tlm_generic_payload& message, uint32_t packet_index,
                   uint32_t packet_count, uint32_t wire_flits, uint32_t payload_bytes, const sc_core::sc_time& start,
                   const sc_core::sc_time& tail_arrival) override;
  void credits_returned(const model::NvlinkPort&, const tlm::tlm_generic_payload&, uint32_t,
                        const sc_core::sc_time&) override {}
  void register_accessed(uint32_t chip, const tlm::tlm_generic_payload& payload,
                         const sc_core::sc_time& delay) override;

 private:
  // A row of the transactions file, if `link` is traced (`vc` empty: none).
  void write_transaction(const model::NvlinkPort& link, const model::NvlinkExtension& ext, const std::string& vc,
                         uint32_t packet_index, uint32_t packet_count, uint32_t wire_flits, uint64_t payload_bytes,
                         const sc_core::sc_time& start, const sc_core::sc_time& tail_arrival);
  struct LinkColumns {
    std::string prefix;  // component,direction,gpu,link,chip,port,
    uint32_t flit_bytes = 0;
  };
  std::unordered_map<const model::NvlinkPort*, LinkColumns> links_;
  std::vector<bool> chips_;  // [chip]: its register accesses are traced
  std::string transactions_path_;
  std::string registers_path_;
  std::ofstream transactions_;
  std::ofstream registers_;
  uint64_t messages_ = 0;
  uint64_t register_accesses_ = 0;
};

}  // namespace nvsvp::platform
