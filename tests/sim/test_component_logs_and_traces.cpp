// Logging and tracing per component (platform/observability.hpp) on an elaborated platform: the
// names the patterns match are the modules' own, a transaction trace holds exactly the messages
// its links counted, a register trace exactly the bring-up's accesses, and log levels apply to
// the components named and to no other.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <systemc>

#include "../common/test_support.hpp"
#include "nvsvp/model/component_log.hpp"
#include "nvsvp/platform/observability.hpp"
#include "nvsvp/platform/platform.hpp"

namespace nvsvp::platform {
namespace {

constexpr uint32_t kGpus = 3;

// GPU 0 writes to GPUs 1 and 2 and reads from GPU 2; they wait for the writes.
void small_workload(TlmHal& hal, Platform&) {
  constexpr uint32_t kWrites = 20;
  constexpr uint32_t kReads = 6;
  hw::WorkSequence writer;
  for (uint32_t i = 0; i < kWrites; ++i) writer.tasks.push_back(hw::Task::send(0, 1 + i % 2, 0, i * 256ull, 256, 0));
  for (uint32_t i = 0; i < kReads; ++i) writer.tasks.push_back(hw::Task::read(0, 2, i * 512ull, 0x10000 + i * 512ull, 512, 1));
  writer.tasks.push_back(hw::Task::wait(0, 1, kReads));
  hal.submit(0, std::move(writer));
  for (uint32_t g = 1; g < kGpus; ++g) {
    hw::WorkSequence reader;
    reader.tasks.push_back(hw::Task::wait(0, 0, kWrites / 2));
    hal.submit(g, std::move(reader));
  }
  hal.wait_all_finished();
}

std::vector<std::vector<std::string>> read_csv_with_header(const std::string& path, std::string& header) {
  std::ifstream file(path);
  EXPECT_TRUE(file.good()) << path;
  std::getline(file, header);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(file, line);) {
    std::vector<std::string>& row = rows.emplace_back();
    std::stringstream fields(line);
    for (std::string field; std::getline(fields, field, ',');) row.push_back(field);
  }
  return rows;
}

TEST(ComponentNames, AreThePlatformsModuleNames) {
  const PlatformSpec spec = test::small_platform(kGpus, {2, 1});
  test::Machine machine(spec, [](TlmHal&, Platform&) {});
  std::vector<std::string> modules;
  for (uint32_t c = 0; c < spec.switch_chips; ++c) modules.push_back(machine.platform.chip(c).basename());
  for (uint32_t c = 0; c < spec.switch_chips; ++c) {
    const model::SwitchChip& chip = machine.platform.chip(c);
    modules.push_back(std::string(chip.basename()) + "." + chip.csr.basename());
  }
  for (uint32_t g = 0; g < kGpus; ++g) modules.push_back(machine.platform.gpu(g).basename());
  for (LinkDirection d : {LinkDirection::gpu_to_switch, LinkDirection::switch_to_gpu}) {
    for (uint32_t g = 0; g < kGpus; ++g) {
      for (uint32_t l = 0; l < machine.platform.links_per_gpu(); ++l) {
        modules.push_back(machine.platform.link(d, g, l).basename());
      }
    }
  }
  modules.push_back(machine.host.basename());
  EXPECT_EQ(modules, component_names(spec));
  // Each lives right below the top module the runner names "platform" (the firmware is a top module).
  EXPECT_EQ(std::string(machine.platform.link(LinkDirection::switch_to_gpu, 2, 2).name()), "platform.switch_to_gpu_8");
}

TEST(ComponentTrace, HoldsExactlyTheNamedLinksMessagesAndRegisterAccesses) {
  const test::TempDir dir;
  const PlatformSpec spec = test::small_platform(kGpus, {2, 1});
  test::Machine machine(spec, small_workload);
  // GPU 0's links through its name, and one more link of GPU 2 by its own; chip 1's register block.
  ComponentTrace trace(machine.platform, {"gpu_0", "switch_to_gpu_8", "switch_1.csr"}, dir.path(), "test");
  machine.run();
  trace.close();

  std::string header;
  const auto rows = read_csv_with_header(dir.path() + "/transactions_test.csv", header);
  EXPECT_EQ(header,
            "time_ns,component,direction,gpu,link,chip,port,kind,traffic_class,vc,source,destination,bytes,"
            "payload_bytes,sequence,arrival_ns,packet,packets");
  EXPECT_EQ(rows.size(), trace.messages());
  struct Seen {
    uint64_t messages = 0;
    uint64_t wire_bytes = 0;
    uint64_t payload_bytes = 0;
  };
  std::map<std::string, Seen> per_link;  // component
  double last_time = -1.0;
  std::map<std::string, double> last_on_link;
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 18u);
    EXPECT_EQ(row[16], "0") << "the message fabric moves whole messages";
    EXPECT_EQ(row[17], "1");
    Seen& seen = per_link[row[1]];
    seen.messages++;
    seen.wire_bytes += std::stoull(row[12]);
    seen.payload_bytes += std::stoull(row[13]);
    const double start = std::stod(row[0]);
    EXPECT_GE(start, last_on_link[row[1]]) << "a link's rows are in the order it sent them";
    last_on_link[row[1]] = start;
    EXPECT_GT(std::stod(row[15]), start) << "the tail arrives after the head leaves";
    last_time = std::max(last_time, start);
  }
  EXPECT_GT(last_time, 0.0);
  uint64_t traced_links = 0;
  for (LinkDirection d : {LinkDirection::gpu_to_switch, LinkDirection::switch_to_gpu}) {
    for (uint32_t g = 0; g < kGpus; ++g) {
      for (uint32_t l = 0; l < machine.platform.links_per_gpu(); ++l) {
        const model::NvlinkPort& port = machine.platform.link(d, g, l);
        const model::LinkStats& stats = port.stats();
        const bool named = g == 0 || std::string(port.basename()) == "switch_to_gpu_8";
        const auto found = per_link.find(port.basename());
        if (!named) {
          EXPECT_EQ(found, per_link.end()) << port.basename() << " was not named";
          continue;
        }
        ++traced_links;
        const Seen seen = found == per_link.end() ? Seen{} : found->second;
        EXPECT_EQ(seen.messages, stats.messages[0] + stats.messages[1]) << port.basename();
        EXPECT_EQ(seen.wire_bytes, stats.wire_bytes) << port.basename();
        EXPECT_EQ(seen.payload_bytes, stats.payload_bytes) << port.basename();
      }
    }
  }
  EXPECT_EQ(traced_links, 2u * machine.platform.links_per_gpu() + 1);
  EXPECT_GT(per_link["switch_to_gpu_8"].messages, 0u) << "GPU 2's last link carried writes";

  // Chip 1's bring-up (fw::SwitchFabric::bring_up): 10 reads (7 identity registers, ERROR_STATUS
  // before and after programming, CONTEXTS_ENABLED read back) and 2 + 2 x GPUs writes (INT_ENABLE,
  // CONTEXTS_ENABLED, route words 0 and 1 per GPU: a chip of up to 64 ports). Chip 0's accesses are not in the file.
  const auto registers = read_csv_with_header(dir.path() + "/registers_test.csv", header);
  EXPECT_EQ(header, "time_ns,chip,access,offset,register,data,status,access_ns");
  std::map<std::string, uint64_t> accesses;  // "read ID", ...
  for (const auto& row : registers) {
    ASSERT_EQ(row.size(), 8u);
    EXPECT_EQ(row[1], "1");
    EXPECT_EQ(row[6], "TLM_OK_RESPONSE");
    accesses[row[2] + " " + row[4]]++;
  }
  EXPECT_EQ(registers.size(), 10u + 2u + 2u * kGpus);
  EXPECT_EQ(trace.register_accesses(), registers.size());
  for (const char* identity : {"ID", "VERSION", "CHIP_INDEX", "PORT_COUNT", "MULTICAST_SLOTS", "REDUCTION_CONTEXTS",
                               "ROUTE_ENTRIES"}) {
    EXPECT_EQ(accesses[std::string("read ") + identity], 1u) << identity;
  }
  EXPECT_EQ(accesses["read ERROR_STATUS"], 2u);
  EXPECT_EQ(accesses["write INT_ENABLE"], 1u);
  EXPECT_EQ(accesses["write CONTEXTS_ENABLED"], 1u);
  EXPECT_EQ(accesses["read CONTEXTS_ENABLED"], 1u);
  for (uint32_t g = 0; g < kGpus; ++g) {
    EXPECT_EQ(accesses["write ROUTE[" + std::to_string(g) + "].W0"], 1u) << g;
    EXPECT_EQ(accesses["write ROUTE[" + std::to_string(g) + "].W1"], 1u) << g;
  }
}

std::vector<std::string>& captured_lines() {
  static std::vector<std::string> lines;
  return lines;
}

void capture(hw::LogLevel level, std::string_view component, const sc_core::sc_time& now, std::string_view message) {
  captured_lines().push_back(model::format_log_line(level, component, now, message));
}

size_t count_containing(const std::string& text) {
  size_t n = 0;
  for (const std::string& line : captured_lines()) n += line.find(text) != std::string::npos ? 1 : 0;
  return n;
}

TEST(ComponentLogs, PrintOnlyTheNamedComponentsAtTheirLevels) {
  const PlatformSpec spec = test::small_platform(kGpus, {2, 1});
  test::Machine machine(spec, small_workload);
  // The last setting that names a component wins: gpu_1 stays at warn, gpu_0 prints debug.
  configure_logs(machine.platform, machine.hal,
                 {parse_log_setting("gpu*=debug"), parse_log_setting("gpu_[12]=warn"),
                  parse_log_setting("switch_1.csr=debug"), parse_log_setting("firmware=info")});
  model::set_log_sink(&capture);
  machine.run();
  model::set_log_sink(nullptr);

  // GPU 0 logged its 20 sends at debug, each as it started and finished; GPUs 1 and 2 nothing.
  EXPECT_EQ(count_containing("[debug] gpu_0: send to GPU "), 20u);
  EXPECT_EQ(count_containing("[debug] gpu_0: stream 0: send starts"), 20u);
  EXPECT_EQ(count_containing("gpu_1:"), 0u);
  EXPECT_EQ(count_containing("gpu_2:"), 0u);
  // Links are named by gpu* too, but log only at trace level.
  EXPECT_EQ(count_containing("gpu_to_switch_"), 0u);
  // Chip 1's register block: one debug line per access of its bring-up (as the trace counts them).
  EXPECT_EQ(count_containing("[debug] switch_1.csr: "), 10u + 2u + 2u * kGpus);
  EXPECT_EQ(count_containing("switch_1.csr: write ROUTE[2].W1 (0x1024) = 0x0: TLM_OK_RESPONSE"), 1u);
  EXPECT_EQ(count_containing("switch_0.csr"), 0u);
  // Firmware at info: the bring-up's start and end, not its per-chip debug lines.
  EXPECT_EQ(count_containing("[info] firmware: bring-up: 2 switch chips, 3 GPUs"), 1u);
  EXPECT_EQ(count_containing("[info] firmware: bring-up done in "), 1u);
  EXPECT_EQ(count_containing("[debug] firmware"), 0u);
  // Every line starts with the simulated time.
  for (const std::string& line : captured_lines()) EXPECT_NE(line.find(" ns ["), std::string::npos) << line;
}

}  // namespace
}  // namespace nvsvp::platform
