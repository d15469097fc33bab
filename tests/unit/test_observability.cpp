// The --log and --trace options' parsing and matching (platform/observability.hpp): levels,
// globs whose wildcards stop at '.', the component names of a platform, patterns that name
// nothing, and the register map's names in the register trace.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "nvsvp/hw/switch_registers.hpp"
#include "nvsvp/platform/observability.hpp"
#include "nvsvp/platform/register_names.hpp"

namespace nvsvp::platform {
namespace {

PlatformSpec two_chip_platform() {
  PlatformSpec spec;
  spec.gpus = 3;
  spec.switch_chips = 2;
  spec.links_per_chip = {2, 1};
  return spec;
}

TEST(LogSetting, ParsesPatternAndEveryLevel) {
  const LogSetting s = parse_log_setting("switch*=debug");
  EXPECT_EQ(s.pattern, "switch*");
  EXPECT_EQ(s.level, hw::LogLevel::debug);
  const std::vector<std::pair<std::string, hw::LogLevel>> levels = {{"error", hw::LogLevel::error},
                                                                    {"warn", hw::LogLevel::warn},
                                                                    {"info", hw::LogLevel::info},
                                                                    {"debug", hw::LogLevel::debug},
                                                                    {"trace", hw::LogLevel::trace}};
  for (const auto& [name, level] : levels) EXPECT_EQ(parse_log_setting("gpu_1=" + name).level, level) << name;
  // The last '=' splits: a pattern may hold one (it then names nothing, which check_patterns says).
  EXPECT_EQ(parse_log_setting("a=b=info").pattern, "a=b");
}

TEST(LogSetting, RejectsAnUnknownLevelOrAMissingOne) {
  for (const std::string bad : {"switch*=verbose", "switch*=", "switch*", "=debug", "gpu_0=DEBUG", "gpu_0=off"}) {
    try {
      parse_log_setting(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const ConfigError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("--log " + bad), std::string::npos) << message;
      EXPECT_NE(message.find("error, warn, info, debug, trace"), std::string::npos) << message;
    }
  }
}

TEST(ComponentMatches, WildcardsStopAtADot) {
  EXPECT_TRUE(component_matches("switch*", "switch_0"));
  EXPECT_TRUE(component_matches("switch*", "switch_to_gpu_7"));
  EXPECT_FALSE(component_matches("switch*", "switch_0.csr"));
  EXPECT_TRUE(component_matches("switch_*.csr", "switch_3.csr"));
  EXPECT_TRUE(component_matches("*.csr", "switch_3.csr"));
  EXPECT_FALSE(component_matches("*.csr", "gpu_3"));
  EXPECT_TRUE(component_matches("gpu_?", "gpu_3"));
  EXPECT_FALSE(component_matches("gpu_?", "gpu_13"));
  EXPECT_TRUE(component_matches("gpu_[0-3]", "gpu_2"));
  EXPECT_FALSE(component_matches("gpu_[0-3]", "gpu_5"));
  EXPECT_FALSE(component_matches("gpu_1", "gpu_10"));
  EXPECT_TRUE(component_matches("firmware", "firmware"));
}

TEST(ComponentNames, EveryChipRegisterBlockGpuLinkAndTheFirmware) {
  const std::vector<std::string> expected = {
      "switch_0",        "switch_1",        "switch_0.csr",    "switch_1.csr",    "gpu_0",           "gpu_1",
      "gpu_2",           "gpu_to_switch_0", "gpu_to_switch_1", "gpu_to_switch_2", "gpu_to_switch_3", "gpu_to_switch_4",
      "gpu_to_switch_5", "gpu_to_switch_6", "gpu_to_switch_7", "gpu_to_switch_8", "switch_to_gpu_0", "switch_to_gpu_1",
      "switch_to_gpu_2", "switch_to_gpu_3", "switch_to_gpu_4", "switch_to_gpu_5", "switch_to_gpu_6", "switch_to_gpu_7",
      "switch_to_gpu_8", "firmware"};
  EXPECT_EQ(component_names(two_chip_platform()), expected);
}

TEST(CheckPatterns, APatternThatNamesNothingIsBadInputListingTheNames) {
  Observability observe;
  observe.logs.push_back(parse_log_setting("switch*=debug"));
  observe.traces = {"gpu_2", "switch_*.csr", "firmware"};
  EXPECT_NO_THROW(check_patterns(observe, two_chip_platform()));

  observe.traces.push_back("gpu_3");  // the platform has 3 GPUs
  try {
    check_patterns(observe, two_chip_platform());
    FAIL() << "gpu_3 was accepted";
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("--trace 'gpu_3': matches no component"), std::string::npos) << message;
    EXPECT_NE(message.find("switch_0 .. switch_1, switch_0.csr .. switch_1.csr, gpu_0 .. gpu_2, gpu_to_switch_0 .. "
                           "gpu_to_switch_8, switch_to_gpu_0 .. switch_to_gpu_8, firmware"),
              std::string::npos)
        << message;
  }
  Observability log_only;
  log_only.logs.push_back(parse_log_setting("nvswitch*=info"));
  EXPECT_THROW(check_patterns(log_only, two_chip_platform()), ConfigError);
}

TEST(SwitchRegisterName, NamesWhatTheRegisterMapHas) {
  namespace regs = hw::switch_regs;
  EXPECT_EQ(switch_register_name(regs::kId), "ID");
  EXPECT_EQ(switch_register_name(regs::kContextsEnabled), "CONTEXTS_ENABLED");
  EXPECT_EQ(switch_register_name(regs::route_word(5, 0)), "ROUTE[5].W0");
  EXPECT_EQ(switch_register_name(regs::route_word(63, 1)), "ROUTE[63].W1");
  EXPECT_EQ(switch_register_name(regs::route_word(127, 3)), "ROUTE[127].W3");
  EXPECT_EQ(switch_register_name(regs::kCounterReplications + 4), "REPLICATIONS_HI");
  EXPECT_EQ(switch_register_name(regs::kCounterPartitionErrors), "PARTITION_ERRORS_LO");
  EXPECT_EQ(switch_register_name(regs::group_register(2, regs::group_members_word(2))), "GROUP[2].MEMBERS_W2");
  EXPECT_EQ(switch_register_name(regs::link_down_ports_word(3)), "LINK_DOWN_PORTS_W3");
  EXPECT_EQ(switch_register_name(regs::kChipControl), "CHIP_CONTROL");
  EXPECT_EQ(switch_register_name(regs::port_partition_register(71)), "PORT_PARTITION[71]");
  EXPECT_EQ(switch_register_name(regs::port_error_register(70, regs::kPortTxReplays)), "PORT_ERRORS[70].TX_REPLAYS");
  EXPECT_EQ(switch_register_name(regs::group_register(0, regs::kGroupControl)), "GROUP[0].CONTROL");
  EXPECT_EQ(switch_register_name(0x03C), "");                    // a hole in the map
  EXPECT_EQ(switch_register_name(regs::route_word(128, 0)), "");  // past the route table
  EXPECT_EQ(switch_register_name(regs::group_register(0, 0x30)), "");  // a reserved word of a slot
  EXPECT_EQ(switch_register_name(regs::kGroupTable + 4), "");    // a reserved word of a slot
}

}  // namespace
}  // namespace nvsvp::platform
