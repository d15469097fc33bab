// Routing generation: deterministic, distinct experts per token, and the statistics each kind
// promises (uniform counts, normal skew growing with std, zipf rank ratios), trace round trip.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <functional>
#include <numeric>

#include "nvsvp/platform/routing_generator.hpp"
#include "../common/test_workloads.hpp"

namespace nvsvp::platform {
namespace {

WorkloadSpec workload(uint32_t experts, uint32_t top_k, uint32_t tokens_per_gpu, const std::string& kind,
                      uint64_t seed = 1) {
  return test::generated_workload(experts, top_k, tokens_per_gpu, kind, seed);
}

std::vector<uint64_t> expert_counts(const fw::MoeRouting& routing) {
  std::vector<uint64_t> counts(routing.experts, 0);
  for (uint16_t e : routing.expert_ids) ++counts[e];
  return counts;
}

double coefficient_of_variation(const std::vector<uint64_t>& counts) {
  const double mean = std::accumulate(counts.begin(), counts.end(), 0.0) / counts.size();
  double var = 0.0;
  for (uint64_t c : counts) var += (c - mean) * (c - mean);
  return std::sqrt(var / counts.size()) / mean;
}

void expect_distinct_and_in_range(const fw::MoeRouting& routing) {
  ASSERT_EQ(routing.expert_ids.size(), routing.tokens() * routing.top_k);
  for (uint64_t t = 0; t < routing.tokens(); ++t) {
    std::vector<uint16_t> ids(routing.experts_of(t), routing.experts_of(t) + routing.top_k);
    for (uint16_t e : ids) ASSERT_LT(e, routing.experts) << "token " << t;
    std::sort(ids.begin(), ids.end());
    ASSERT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end()) << "token " << t << " repeats an expert";
  }
}

TEST(Routing, SameSeedSameRoutingOtherSeedOtherRouting) {
  for (const char* kind : {"uniform", "normal", "zipf"}) {
    const fw::MoeRouting a = generate_routing(workload(64, 8, 256, kind, 5), 8);
    const fw::MoeRouting b = generate_routing(workload(64, 8, 256, kind, 5), 8);
    const fw::MoeRouting c = generate_routing(workload(64, 8, 256, kind, 6), 8);
    EXPECT_EQ(a.expert_ids, b.expert_ids) << kind;
    EXPECT_NE(a.expert_ids, c.expert_ids) << kind;
    EXPECT_EQ(a.gpus, 8u);
    EXPECT_EQ(a.experts, 64u);
    EXPECT_EQ(a.top_k, 8u);
    EXPECT_EQ(a.tokens_per_gpu, 256u);
  }
}

// The generator is ours end to end (no std:: distributions), so a seed's routing is the same on
// every platform: these values lock it down. A deliberate change of the generator updates them.
TEST(Routing, FixedSeedGivesAFixedRouting) {
  const std::vector<std::pair<std::string, std::vector<uint16_t>>> golden = {
      {"uniform", {44, 33, 36, 25, 44, 9, 4, 24}},
      {"normal", {0, 26, 20, 45, 20, 45, 53, 37}},  // issue 19: std relative to the mean
      {"zipf", {57, 37, 16, 52, 57, 37, 54, 17}},
  };
  for (const auto& [kind, ids] : golden) {
    EXPECT_EQ(generate_routing(workload(64, 4, 2, kind, 1), 1).expert_ids, ids) << kind;
  }
}

TEST(Routing, ExpertsOfATokenAreDistinct) {
  for (const char* kind : {"uniform", "normal", "zipf", "drifting", "balanced"}) {
    expect_distinct_and_in_range(generate_routing(workload(64, 8, 512, kind), 8));
    expect_distinct_and_in_range(generate_routing(workload(16, 16, 64, kind), 4));  // every expert
    expect_distinct_and_in_range(generate_routing(workload(256, 32, 64, kind), 32));
  }
  // Extreme skew exercises the exact fallback after repeated rejections.
  WorkloadSpec w = workload(64, 16, 1024, "zipf");
  w.routing.exponent = 6.0;
  expect_distinct_and_in_range(generate_routing(w, 8));
  w = workload(64, 16, 1024, "normal");
  w.routing.std = 1.0;
  expect_distinct_and_in_range(generate_routing(w, 8));
}

// The perfect router of TensorRT-LLM's benchmarks: every expert the same share, and on GPUs a
// multiple of top_k each token's experts on top_k different GPUs (DeepSeek-V3's 256 experts,
// top-8, at EP 8 to 64; at EP 4 a token can only reach 4 GPUs).
TEST(Routing, BalancedGivesEveryExpertTheSameShareAndATokenTopKGpus) {
  for (uint32_t gpus : {4u, 8u, 16u, 32u, 64u}) {
    const fw::MoeRouting routing = generate_routing(workload(256, 8, 128, "balanced"), gpus);
    const std::vector<uint64_t> counts = expert_counts(routing);
    for (uint64_t c : counts) EXPECT_EQ(c, routing.tokens() * 8 / 256) << gpus << " GPUs";
    const uint32_t per_gpu = 256 / gpus;
    for (uint64_t t = 0; t < routing.tokens(); ++t) {
      std::vector<uint32_t> ranks;
      for (uint32_t j = 0; j < 8; ++j) ranks.push_back(routing.expert_ids[t * 8 + j] / per_gpu);
      std::sort(ranks.begin(), ranks.end());
      const auto distinct = std::unique(ranks.begin(), ranks.end()) - ranks.begin();
      ASSERT_EQ(distinct, std::min<int64_t>(gpus, 8)) << gpus << " GPUs, token " << t;
    }
  }
}

// What the static replication policy places from: per expert, the token-expert pairs its
// popularity implies, including the cap of one pick per token that proportional shares ignore.
TEST(Routing, ExpectedLoadsMatchWhatTheGeneratorDraws) {
  for (const char* kind : {"zipf", "normal", "uniform"}) {
    for (double exponent : {0.6, 1.2}) {
      SCOPED_TRACE(std::string(kind) + " " + std::to_string(exponent));
      WorkloadSpec w = workload(64, 8, 8192, kind, 7);
      w.routing.exponent = exponent;
      w.routing.std = 0.05;
      const fw::MoeRouting routing = generate_routing(w, 8);
      const std::vector<double> expected = expected_expert_loads(w, routing);
      const std::vector<uint64_t> counts = expert_counts(routing);
      ASSERT_EQ(expected.size(), counts.size());
      const double pairs = static_cast<double>(routing.tokens()) * routing.top_k;
      EXPECT_NEAR(std::accumulate(expected.begin(), expected.end(), 0.0), pairs, 1e-6 * pairs);
      const uint32_t hottest = static_cast<uint32_t>(std::max_element(counts.begin(), counts.end()) - counts.begin());
      EXPECT_LE(expected[hottest], static_cast<double>(routing.tokens()));  // one pick per token at most
      // 65536 tokens drawn: a few per cent of the hottest expert's count, whatever the skew.
      EXPECT_NEAR(expected[hottest], static_cast<double>(counts[hottest]), 0.03 * counts[hottest]);
    }
  }
}

TEST(Routing, UniformCountsStayWithinAFewSigma) {
  const uint32_t experts = 64, top_k = 8, gpus = 8, tokens_per_gpu = 25000;  // 200k tokens
  const fw::MoeRouting r = generate_routing(workload(experts, top_k, tokens_per_gpu, "uniform", 11), gpus);
  const double tokens = static_cast<double>(gpus) * tokens_per_gpu;
  const double p = static_cast<double>(top_k) / experts;
  const double mean = tokens * p;
  const double sigma = std::sqrt(tokens * p * (1 - p));
  for (uint64_t c : expert_counts(r)) EXPECT_NEAR(static_cast<double>(c), mean, 5 * sigma);
}

TEST(Routing, LargerNormalStdGivesMoreSkewedLoads) {
  double previous = 0.0;
  for (double std_dev : {0.005, 0.02, 0.05}) {
    WorkloadSpec w = workload(256, 8, 4096, "normal", 3);
    w.routing.std = std_dev;
    const double cv = coefficient_of_variation(expert_counts(generate_routing(w, 32)));
    EXPECT_GT(cv, previous) << "std " << std_dev;
    previous = cv;
  }
  // Close to uniform for a tiny std: the CV is then mostly sampling noise.
  const double uniform_cv = coefficient_of_variation(expert_counts(generate_routing(workload(256, 8, 4096, "uniform", 3), 32)));
  WorkloadSpec tiny = workload(256, 8, 4096, "normal", 3);
  tiny.routing.std = 1e-6;
  EXPECT_NEAR(coefficient_of_variation(expert_counts(generate_routing(tiny, 32))), uniform_cv, 0.02);
}

using test::max_over_mean;

// `std` is relative to the mean selection probability (docs/decisions.md, "Routing normal: std is
// relative to the mean"): the study's range 0.01-0.05 gives every model of the study the same
// near-balanced to mildly skewed expert loads, as aux-loss-balanced training does. Under the
// absolute reading it replaced, L-8 at 0.032 had a coefficient of variation of about 1 (hottest
// expert 3.3x the mean) where S-8 had 0.26. The table it prints is the one in decisions.md.
TEST(Routing, NormalStdGivesEveryModelTheSameMildSkew) {
  struct Model {
    const char* name;
    uint32_t experts, top_k, tokens_per_gpu;
  };
  const uint32_t gpus = 32;
  for (const Model& m : {Model{"S-8", 64, 8, 2048}, Model{"M-8", 128, 8, 4096}, Model{"L-8", 256, 8, 8192},
                         Model{"L-32", 256, 32, 8192}}) {
    double previous_expert = 0.0;
    for (double std_dev : {0.01, 0.032, 0.05}) {
      WorkloadSpec w = workload(m.experts, m.top_k, m.tokens_per_gpu, "normal", 1);
      w.routing.std = std_dev;
      const fw::MoeRouting routing = generate_routing(w, gpus);
      std::vector<double> per_expert(m.experts, 0.0), per_gpu(gpus, 0.0);
      for (uint16_t e : routing.expert_ids) per_expert[e] += 1.0, per_gpu[routing.gpu_of_expert(e)] += 1.0;
      const double expert = max_over_mean(per_expert), gpu = max_over_mean(per_gpu);
      std::cout << m.name << " std " << std_dev << ": max/mean per GPU " << gpu << ", per expert " << expert << "\n";
      EXPECT_LT(gpu, 1.12) << m.name << " std " << std_dev;
      EXPECT_LT(expert, 1.25) << m.name << " std " << std_dev;
      EXPECT_GT(expert, previous_expert) << m.name << " std " << std_dev;
      previous_expert = expert;
    }
  }
}

TEST(Routing, ZipfRankSharesFollowThePowerLaw) {
  for (double exponent : {1.0, 1.5, 2.0}) {
    WorkloadSpec w = workload(64, 1, 25000, "zipf", 9);  // top_k 1: shares are the weights exactly
    w.routing.exponent = exponent;
    std::vector<uint64_t> counts = expert_counts(generate_routing(w, 8));
    std::sort(counts.rbegin(), counts.rend());
    for (int rank = 2; rank <= 3; ++rank) {
      const double ratio = static_cast<double>(counts[0]) / counts[rank - 1];
      EXPECT_NEAR(ratio, std::pow(rank, exponent), 0.1 * std::pow(rank, exponent))
          << "exponent " << exponent << " rank " << rank;
    }
  }
}

TEST(Routing, ZipfHotExpertsDependOnTheSeed) {
  auto hottest = [](uint64_t seed) {
    WorkloadSpec w = workload(64, 1, 1000, "zipf", seed);
    const std::vector<uint64_t> counts = expert_counts(generate_routing(w, 8));
    return std::max_element(counts.begin(), counts.end()) - counts.begin();
  };
  std::vector<long> hot;
  for (uint64_t seed = 1; seed <= 8; ++seed) hot.push_back(hottest(seed));
  std::sort(hot.begin(), hot.end());
  EXPECT_GT(std::unique(hot.begin(), hot.end()) - hot.begin(), 1);
}

TEST(Routing, TraceRoundTrip) {
  const fw::MoeRouting original = generate_routing(workload(64, 8, 100, "zipf", 4), 8);
  const std::string file = (std::filesystem::temp_directory_path() /
                            ("nvsvp_trace_round_trip_" + std::to_string(::getpid()) + ".csv")).string();
  {
    std::ofstream out(file);
    out << "# written by TraceRoundTrip\n";
    for (uint64_t t = 0; t < original.tokens(); ++t) {
      for (uint32_t k = 0; k < original.top_k; ++k) out << (k ? (t % 2 ? " " : ",") : "") << original.experts_of(t)[k];
      out << (t % 3 ? "\n" : "   # comment\n");
    }
  }
  WorkloadSpec w = workload(64, 8, 100, "trace");
  w.routing.file = file;
  const fw::MoeRouting back = generate_routing(w, 8);
  std::filesystem::remove(file);
  EXPECT_EQ(back.expert_ids, original.expert_ids);
  EXPECT_EQ(back.tokens(), original.tokens());
}

TEST(Routing, BadSpecIsAConfigError) {
  EXPECT_THROW(generate_routing(workload(60, 8, 10, "uniform"), 8), ConfigError);   // 60 % 8
  EXPECT_THROW(generate_routing(workload(64, 65, 10, "uniform"), 8), ConfigError);  // top_k > experts
  EXPECT_THROW(generate_routing(workload(64, 8, 10, "gauss"), 8), ConfigError);
  WorkloadSpec w = workload(64, 8, 10, "trace");
  w.routing.file = "/nonexistent/trace.csv";
  EXPECT_THROW(generate_routing(w, 8), ConfigError);
}

}  // namespace
}  // namespace nvsvp::platform
