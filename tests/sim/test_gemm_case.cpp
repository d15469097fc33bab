// The GEMM anchors (configs/anchors/deepgemm-*.yaml, platform::run_gemm_case): each of DeepGEMM's
// grouped shapes runs as the schemes' expert GEMM task, in exactly the time the wave model gives
// (ceil(blocks / SMs) waves of one block at the SM's share of peak x gemm_efficiency), and never
// above the GPU's fp8 peak; a bad shape is refused before the simulation.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "../common/test_support.hpp"
#include "nvsvp/fw/moe_layer.hpp"
#include "nvsvp/platform/anchors.hpp"
#include "nvsvp/platform/gemm_case.hpp"
#include "nvsvp/platform/scenario.hpp"

namespace nvsvp::platform {
namespace {

void check_case(const std::string& name) {
  const AnchorCase anchor = load_anchor_case(test::config_dir() + "/anchors/" + name + ".yaml", test::config_dir());
  ASSERT_EQ(anchor.measure.kind, "gemm");
  const GemmCaseSpec* spec = &anchor.measure.gemm;
  const PlatformSpec& platform = anchor.scenario.platform;
  const GemmCaseResult result = run_gemm_case(platform, *spec);
  EXPECT_EQ(result.name, name);
  EXPECT_EQ(result.groups, spec->groups);
  // 128 x 128 tiles: each group's M and N padded to whole tiles.
  const uint64_t tile = spec->software.tile_tokens;
  const uint64_t columns = spec->software.tile_columns;
  const uint64_t blocks = spec->groups * ((spec->m_per_group + tile - 1) / tile) * ((spec->n + columns - 1) / columns);
  const uint64_t sms = platform.gpu.sms;
  const double block_us = 2.0 * static_cast<double>(tile * columns * spec->k) /
                          (platform.gpu.fp8_tflops * 1e12 * platform.gpu.gemm_efficiency / static_cast<double>(sms)) * 1e6;
  const double waves = static_cast<double>((blocks + sms - 1) / sms);
  EXPECT_NEAR(result.time_us, waves * block_us, 1e-5);
  const double flops = 2.0 * static_cast<double>(spec->groups * spec->m_per_group * spec->n * spec->k);
  EXPECT_DOUBLE_EQ(result.flops, flops);
  EXPECT_NEAR(result.tflops, flops / (result.time_us * 1e-6) / 1e12, 1e-9);
  EXPECT_LE(result.tflops, platform.gpu.fp8_tflops);
  EXPECT_LE(result.tflops, platform.gpu.fp8_tflops * platform.gpu.gemm_efficiency);
  EXPECT_NE(anchor.anchor.source.find("DeepGEMM"), std::string::npos);
}

TEST(GemmCase, ContiguousGemm1ShapeRunsInItsWaves) { check_case("deepgemm-h800-grouped-contiguous-n4096-k7168"); }
TEST(GemmCase, ContiguousGemm2ShapeRunsInItsWaves) { check_case("deepgemm-h800-grouped-contiguous-n7168-k2048"); }
TEST(GemmCase, MaskedShapeRunsInItsWaves) { check_case("deepgemm-h800-grouped-masked-n4096-k7168"); }

TEST(GemmCase, TheExpertGemmHasTheShapesBlocksAndFlops) {
  fw::SoftwareParams software;  // 128 x 128 tiles
  const hw::Task gemm1 = fw::grouped_expert_gemm(software, fw::ExpertGemm::gemm1, 3, 200, 4096, 7168);
  EXPECT_EQ(gemm1.kind, hw::TaskKind::gemm);
  EXPECT_EQ(gemm1.precision, hw::Precision::fp8);
  EXPECT_EQ(gemm1.thread_blocks, 3u * 2 * 32);  // 200 rows pad to 2 tiles
  EXPECT_DOUBLE_EQ(gemm1.flops_per_block, 2.0 * 128 * 128 * 7168);
  const hw::Task gemm2 = fw::grouped_expert_gemm(software, fw::ExpertGemm::gemm2, 3, 200, 7168, 2048);
  EXPECT_EQ(gemm2.thread_blocks, 3u * 2 * 56);
  EXPECT_DOUBLE_EQ(gemm2.flops_per_block, 2.0 * 128 * 128 * 2048);
  EXPECT_THROW(fw::grouped_expert_gemm(software, fw::ExpertGemm::gemm1, 1, 128, 4095, 7168), std::invalid_argument);
  EXPECT_THROW(fw::grouped_expert_gemm(software, fw::ExpertGemm::gemm2, 0, 128, 7168, 2048), std::invalid_argument);
}

}  // namespace
}  // namespace nvsvp::platform
