// Routing generation. The RNG (hw::Xoshiro256) and every sampler are our own, so a seed gives the
// same routing with any compiler and standard library.
#include "nvsvp/platform/routing_generator.hpp"

#include "nvsvp/platform/config_reader.hpp"
#include "nvsvp/hw/xoshiro256.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>

namespace nvsvp::platform {

namespace {

class Rng {
 public:
  explicit Rng(uint64_t seed) : core_(seed) {}

  uint64_t next() { return core_.next(); }

  // Uniform in [0, 1), 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Uniform integer in [0, n), n > 0, unbiased (Lemire's multiply-and-reject on 32 bits).
  uint32_t below(uint32_t n) {
    uint64_t m = static_cast<uint64_t>(static_cast<uint32_t>(next() >> 32)) * n;
    uint32_t low = static_cast<uint32_t>(m);
    if (low < n) {
      const uint32_t threshold = (0u - n) % n;
      while (low < threshold) {
        m = static_cast<uint64_t>(static_cast<uint32_t>(next() >> 32)) * n;
        low = static_cast<uint32_t>(m);
      }
    }
    return static_cast<uint32_t>(m >> 32);
  }

  // Standard normal deviate: Box-Muller in Marsaglia's polar form (no trigonometry), the second
  // deviate of each pair kept for the next call.
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u, v, s;
    do {
      u = 2.0 * uniform() - 1.0;
      v = 2.0 * uniform() - 1.0;
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double factor = std::sqrt(-2.0 * std::log(s) / s);
    spare_ = v * factor;
    has_spare_ = true;
    return u * factor;
  }

 private:
  hw::Xoshiro256 core_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

// Walker/Vose alias table: O(1) draws from a fixed discrete distribution.
class AliasTable {
 public:
  explicit AliasTable(const std::vector<double>& weights) : probability_(weights.size()), alias_(weights.size()) {
    const size_t n = weights.size();
    double total = 0.0;
    for (double w : weights) total += w;
    std::vector<double> scaled(n);
    std::vector<uint32_t> small, large;
    for (size_t i = 0; i < n; ++i) {
      scaled[i] = weights[i] * static_cast<double>(n) / total;
      (scaled[i] < 1.0 ? small : large).push_back(static_cast<uint32_t>(i));
    }
    while (!small.empty() && !large.empty()) {
      const uint32_t s = small.back();
      small.pop_back();
      const uint32_t l = large.back();
      probability_[s] = scaled[s];
      alias_[s] = l;
      scaled[l] = (scaled[l] + scaled[s]) - 1.0;
      if (scaled[l] < 1.0) {
        large.pop_back();
        small.push_back(l);
      }
    }
    // What is left is 1 up to rounding.
    for (uint32_t i : large) probability_[i] = 1.0, alias_[i] = i;
    for (uint32_t i : small) probability_[i] = 1.0, alias_[i] = i;
  }

  uint32_t sample(Rng& rng) const {
    const uint32_t column = rng.below(static_cast<uint32_t>(probability_.size()));
    return rng.uniform() < probability_[column] ? column : alias_[column];
  }

 private:
  std::vector<double> probability_;
  std::vector<uint32_t> alias_;
};

// Draws top_k distinct experts per token by successive sampling without replacement: a draw that
// repeats an expert of the token is rejected, which is exactly sampling from the remaining
// weights. When most of the weight is already taken, or after a few rejections in a row, the
// pick is made exactly instead: a scan of the untaken experts, heaviest first, so it usually
// stops after a few experts.
class DistinctSampler {
 public:
  // Empty weights mean uniform.
  DistinctSampler(uint32_t experts, std::vector<double> weights)
      : experts_(experts), weights_(std::move(weights)), taken_(experts, 0) {
    if (weights_.empty()) return;
    alias_ = std::make_unique<AliasTable>(weights_);
    heaviest_first_.resize(experts_);
    for (uint32_t e = 0; e < experts_; ++e) heaviest_first_[e] = e;
    // Ties broken by ID: a strict total order, so the result does not depend on the sort.
    std::sort(heaviest_first_.begin(), heaviest_first_.end(), [this](uint32_t a, uint32_t b) {
      return weights_[a] != weights_[b] ? weights_[a] > weights_[b] : a < b;
    });
    for (double w : weights_) total_ += w;
  }

  void draw(Rng& rng, uint32_t top_k, uint16_t* out) {
    double taken_weight = 0.0;
    for (uint32_t count = 0; count < top_k; ++count) {
      uint32_t expert = 0;
      // When most of the weight is taken, rejection would mostly reject: go exact at once.
      const bool mostly_taken = alias_ ? taken_weight > 0.75 * total_ : count * 4 > experts_ * 3;
      uint32_t rejections = mostly_taken ? kMaxRejections : 0;
      for (;;) {
        if (rejections == kMaxRejections) {
          expert = draw_exact(rng, taken_weight);
          break;
        }
        expert = alias_ ? alias_->sample(rng) : rng.below(experts_);
        if (!taken_[expert]) break;
        ++rejections;
      }
      taken_[expert] = 1;
      if (alias_) taken_weight += weights_[expert];
      out[count] = static_cast<uint16_t>(expert);
    }
    for (uint32_t k = 0; k < top_k; ++k) taken_[out[k]] = 0;
    first_free_ = 0;
  }

 private:
  static constexpr uint32_t kMaxRejections = 8;

  // One expert from the weights of the experts not yet taken.
  uint32_t draw_exact(Rng& rng, double taken_weight) {
    if (weights_.empty()) {
      uint32_t free_count = 0;
      for (uint32_t e = 0; e < experts_; ++e) free_count += taken_[e] ? 0 : 1;
      uint32_t index = rng.below(free_count);
      for (uint32_t e = 0; e < experts_; ++e) {
        if (!taken_[e] && index-- == 0) return e;
      }
      return 0;  // unreachable: top_k <= experts is checked
    }
    // Skewed tokens take the heaviest experts first: skip the taken prefix once per token.
    while (taken_[heaviest_first_[first_free_]]) ++first_free_;
    double u = rng.uniform() * std::max(0.0, total_ - taken_weight);
    uint32_t last_free = 0;
    for (size_t i = first_free_; i < heaviest_first_.size(); ++i) {
      const uint32_t e = heaviest_first_[i];
      if (taken_[e]) continue;
      if (u < weights_[e]) return e;
      u -= weights_[e];
      last_free = e;
    }
    return last_free;  // rounding left u just above the remaining sum
  }

  uint32_t experts_;
  std::vector<double> weights_;
  std::unique_ptr<AliasTable> alias_;
  std::vector<uint32_t> heaviest_first_;
  size_t first_free_ = 0;  // heaviest_first_[0, first_free_) are taken by the current token
  double total_ = 0.0;
  std::vector<uint8_t> taken_;
};

// normal: the probability that a token selects expert e, mean top_k / experts, drawn per expert
// with standard deviation `std` times that mean (std is relative: the same skew for every model,
// docs/decisions.md "Routing normal: std is relative to the mean"), floored at 1 % of the mean so
// no expert disappears, then rescaled to keep the mean.
std::vector<double> normal_weights(Rng& rng, uint32_t experts, uint32_t top_k, double relative_std) {
  const double mean = static_cast<double>(top_k) / experts;
  const double floor = 0.01 * mean;
  std::vector<double> weights(experts);
  double total = 0.0;
  for (double& w : weights) {
    w = std::max(floor, mean * (1.0 + relative_std * rng.normal()));
    total += w;
  }
  for (double& w : weights) w *= top_k / total;
  return weights;
}

// zipf: weight of popularity rank r (1-based) = r^-exponent; ranks are dealt to experts by a
// seeded permutation so the hot experts are not always the lowest IDs.
std::vector<double> zipf_weights(Rng& rng, uint32_t experts, double exponent) {
  std::vector<uint32_t> expert_of_rank(experts);
  for (uint32_t i = 0; i < experts; ++i) expert_of_rank[i] = i;
  for (uint32_t i = experts - 1; i > 0; --i) std::swap(expert_of_rank[i], expert_of_rank[rng.below(i + 1)]);
  std::vector<double> weights(experts);
  for (uint32_t rank = 1; rank <= experts; ++rank) {
    weights[expert_of_rank[rank - 1]] = std::pow(static_cast<double>(rank), -exponent);
  }
  return weights;
}

// A seed of its own for each (layer, iteration) stream of a drifting routing: splitmix64's
// finalizer over the seed and the indices, so neighbouring indices share no draws.
uint64_t derived_seed(uint64_t seed, uint64_t layer, uint64_t iteration) {
  uint64_t x = seed ^ (layer * 0x9e3779b97f4a7c15ull) ^ ((iteration + 1) * 0xc2b2ae3d27d4eb4full);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A trace field as a message shows it: control and non-ASCII bytes as \xNN (a NUL would cut the
// message short), at most 40 characters.
std::string printable_field(const std::string& field) {
  std::string out;
  for (size_t i = 0; i < field.size() && i < 40; ++i) {
    const auto c = static_cast<unsigned char>(field[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static const char* const hex = "0123456789abcdef";
      out += std::string("\\x") + hex[c >> 4] + hex[c & 15];
    }
  }
  if (field.size() > 40) out += "...";
  return out;
}

[[noreturn]] void trace_fail(const std::string& file, uint64_t line, const std::string& what) {
  throw ConfigError(file + ":" + std::to_string(line) + ": " + what);
}

// The trace format: one token per line, its expert IDs separated by commas and/or blanks; '#'
// starts a comment; blank lines are skipped. Token lines are global tokens 0, 1, ... in order.
void read_trace(const RoutingSpec& spec, fw::MoeRouting& routing) {
  if (const std::string why = unreadable_file(spec.file); !why.empty()) {
    throw ConfigError(spec.origin + ": workload.routing.file: expected a readable trace file (a regular file), got " +
                      spec.file + " (" + why + ")");
  }
  std::ifstream in(spec.file, std::ios::binary);
  const uint64_t needed = routing.tokens();
  if (needed > kMaxTraceTokens) {
    throw ConfigError(spec.origin + ": workload.routing.file: expected a trace of at most " +
                      std::to_string(kMaxTraceTokens) + " token lines (an input limit), got a layer of " +
                      std::to_string(needed) + " tokens (gpus x tokens_per_gpu) to read");
  }
  const std::string text = read_at_most(in, kMaxTraceFileBytes, spec.file, "a trace file");

  const uint32_t top_k = routing.top_k;
  const std::string shape = std::to_string(routing.gpus) + " GPUs x " +
                            std::to_string(routing.tokens_per_gpu) + " tokens per GPU";
  routing.expert_ids.assign(needed * top_k, 0);
  std::vector<uint8_t> seen(routing.experts, 0);

  uint64_t token = 0;
  uint64_t line_number = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    ++line_number;
    // Only this line is searched for '#': a search to the end of the text would be quadratic.
    const size_t stop = static_cast<size_t>(std::find(text.begin() + static_cast<std::ptrdiff_t>(pos),
                                                      text.begin() + static_cast<std::ptrdiff_t>(end), '#') -
                                            text.begin());
    const size_t line_start = pos;
    pos = end + 1;

    uint16_t* ids = nullptr;
    uint32_t count = 0;
    for (size_t i = line_start; i < stop;) {
      const char c = text[i];
      if (c == ' ' || c == '\t' || c == ',' || c == '\r') {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < stop && text[j] != ' ' && text[j] != '\t' && text[j] != ',' && text[j] != '\r') ++j;
      const std::string field = text.substr(i, j - i);
      i = j;
      if (!ids) {
        if (token >= needed) {
          trace_fail(spec.file, line_number,
                     "expected exactly " + std::to_string(needed) + " token lines (" + shape +
                         "), got more: this is token line " + std::to_string(token + 1));
        }
        ids = &routing.expert_ids[token * top_k];
      }
      const std::string where = "token " + std::to_string(token) + ": ";
      if (field.size() > 9 || field.find_first_not_of("0123456789") != std::string::npos) {
        trace_fail(spec.file, line_number,
                   where + "expected expert IDs (integers) separated by commas or blanks, got '" + printable_field(field) + "'");
      }
      const uint64_t expert = std::stoull(field);
      if (expert >= routing.experts) {
        trace_fail(spec.file, line_number,
                   where + "expected expert IDs in [0, " + std::to_string(routing.experts) + "), got " + field);
      }
      if (count == top_k) {
        trace_fail(spec.file, line_number,
                   where + "expected " + std::to_string(top_k) + " expert IDs (top_k), got more");
      }
      if (seen[expert]) {
        trace_fail(spec.file, line_number,
                   where + "expected " + std::to_string(top_k) + " distinct expert IDs, got " + field + " twice");
      }
      seen[expert] = 1;
      ids[count++] = static_cast<uint16_t>(expert);
    }
    if (!ids) continue;  // blank or comment-only line
    for (uint32_t k = 0; k < count; ++k) seen[ids[k]] = 0;
    if (count != top_k) {
      trace_fail(spec.file, line_number,
                 "token " + std::to_string(token) + ": expected " + std::to_string(top_k) +
                     " expert IDs (top_k), got " + std::to_string(count));
    }
    ++token;
  }
  if (token < needed) {
    trace_fail(spec.file, line_number + 1,
               "expected " + std::to_string(needed) + " token lines (" + shape + "), got " +
                   std::to_string(token));
  }
}

}  // namespace

// drifting: a zipf popularity whose ranks change hands as a serving run goes on. The layer's
// ranks are dealt once (its own seed); then at every iteration each rank, with chance
// 1 / (2 hot_lifetime), swaps its expert with a rank drawn uniformly. An expert leaves its rank
// when its rank is picked or is drawn as another's partner, so it keeps it hot_lifetime
// iterations on average: the hot set persists for that long and drifts.
//
// The ranks at iteration i are the ranks at i - 1 stepped once, so a stream asking for
// iterations 0, 1, 2, ... of a layer continues from the last one it asked for (kept per layer):
// time linear in the iterations, not quadratic. The draws, and so the result, are the same.
std::vector<double> drifting_popularity(const RoutingSpec& spec, uint32_t experts) {
  struct Ranks {
    uint64_t seed;
    uint32_t layer;
    uint32_t experts;
    double hot_lifetime;
    uint32_t iteration;  // the ranks below are the ones at this iteration
    Rng rng;
    std::vector<uint32_t> expert_of_rank;
  };
  constexpr size_t kLayersKept = 256;  // a stream's layers; beyond, the oldest is dropped
  thread_local std::vector<Ranks> kept;
  auto found = std::find_if(kept.begin(), kept.end(), [&](const Ranks& r) {
    return r.seed == spec.seed && r.layer == spec.layer && r.experts == experts &&
           r.hot_lifetime == spec.hot_lifetime && r.iteration <= spec.iteration;
  });
  if (found == kept.end()) {
    Ranks fresh{spec.seed, spec.layer, experts, spec.hot_lifetime, 0, Rng(derived_seed(spec.seed, spec.layer, ~0ull)), {}};
    fresh.expert_of_rank.resize(experts);
    for (uint32_t i = 0; i < experts; ++i) fresh.expert_of_rank[i] = i;
    for (uint32_t i = experts - 1; i > 0; --i) {
      std::swap(fresh.expert_of_rank[i], fresh.expert_of_rank[fresh.rng.below(i + 1)]);
    }
    // One entry per layer: an entry past the asked iteration is replaced.
    kept.erase(std::remove_if(kept.begin(), kept.end(),
                              [&](const Ranks& r) { return r.seed == spec.seed && r.layer == spec.layer; }),
               kept.end());
    if (kept.size() >= kLayersKept) kept.erase(kept.begin());
    kept.push_back(std::move(fresh));
    found = kept.end() - 1;
  }
  Ranks& ranks = *found;
  std::vector<uint32_t>& expert_of_rank = ranks.expert_of_rank;
  const double swap_chance = 0.5 / spec.hot_lifetime;
  for (; ranks.iteration < spec.iteration; ++ranks.iteration) {
    for (uint32_t rank = 0; rank < experts; ++rank) {
      if (ranks.rng.uniform() < swap_chance) std::swap(expert_of_rank[rank], expert_of_rank[ranks.rng.below(experts)]);
    }
  }
  std::vector<double> weights(experts);
  for (uint32_t rank = 1; rank <= experts; ++rank) {
    weights[expert_of_rank[rank - 1]] = std::pow(static_cast<double>(rank), -spec.exponent);
  }
  return weights;
}

fw::MoeRouting generate_routing(const WorkloadSpec& workload, uint32_t gpus) {
  const uint32_t experts = workload.model.experts;
  const uint32_t top_k = workload.top_k;
  const RoutingSpec& spec = workload.routing;
  // load_scenario has checked these; a hand-built spec gets a ConfigError rather than UB.
  if (gpus == 0 || experts == 0 || experts > 65535 || experts % gpus != 0 || top_k == 0 ||
      top_k > experts || workload.tokens_per_gpu == 0) {
    throw ConfigError(spec.origin + ": workload: expected gpus >= 1, experts in [1, 65535] divisible by gpus, "
                      "1 <= top_k <= experts and tokens_per_gpu >= 1, got gpus " + std::to_string(gpus) +
                      ", experts " + std::to_string(experts) + ", top_k " + std::to_string(top_k) +
                      ", tokens_per_gpu " + std::to_string(workload.tokens_per_gpu));
  }

  fw::MoeRouting routing;
  routing.gpus = gpus;
  routing.experts = experts;
  routing.top_k = top_k;
  routing.tokens_per_gpu = workload.tokens_per_gpu;

  if (spec.kind == "trace") {
    RoutingSpec one = spec;
    one.file = trace_file_of(spec.file, spec.layer, spec.iteration, spec.origin);
    read_trace(one, routing);
    return routing;
  }
  if (spec.kind == "balanced") {
    // A perfect router: token t's experts are t, t + s, t + 2s, ... (mod experts) with
    // s = experts / top_k, so every expert gets the same share and, with GPUs a multiple of
    // top_k, a token's experts sit on top_k different GPUs.
    const uint64_t stride = experts / top_k;
    const uint64_t tokens = routing.tokens();
    routing.expert_ids.resize(tokens * top_k);
    for (uint64_t token = 0; token < tokens; ++token) {
      for (uint32_t j = 0; j < top_k; ++j) {
        routing.expert_ids[token * top_k + j] = static_cast<uint16_t>((token + j * stride) % experts);
      }
    }
    return routing;
  }

  // A drifting layer's tokens are drawn from a stream of their own per iteration.
  Rng rng(spec.kind == "drifting" ? derived_seed(spec.seed, spec.layer, spec.iteration) : spec.seed);
  std::vector<double> weights;
  if (spec.kind == "normal") {
    weights = normal_weights(rng, experts, top_k, spec.std);
  } else if (spec.kind == "zipf") {
    weights = zipf_weights(rng, experts, spec.exponent);
  } else if (spec.kind == "drifting") {
    weights = drifting_popularity(spec, experts);
  } else if (spec.kind != "uniform") {
    throw ConfigError(spec.origin + ": workload.routing.kind: expected one of uniform, normal, zipf, drifting, trace, "
                      "got " + spec.kind);
  }
  DistinctSampler sampler(experts, std::move(weights));
  const uint64_t tokens = routing.tokens();
  routing.expert_ids.resize(tokens * top_k);
  for (uint64_t token = 0; token < tokens; ++token) {
    sampler.draw(rng, top_k, &routing.expert_ids[token * top_k]);
  }
  return routing;
}

std::vector<double> expected_expert_loads(const WorkloadSpec& workload, const fw::MoeRouting& routing) {
  const RoutingSpec& spec = workload.routing;
  const uint32_t experts = workload.model.experts;
  const double pairs = static_cast<double>(routing.tokens()) * workload.top_k;
  std::vector<double> weights;
  Rng rng(spec.seed);  // the generator's first draws are the popularity, so this repeats it
  if (spec.kind == "normal") {
    weights = normal_weights(rng, experts, workload.top_k, spec.std);
  } else if (spec.kind == "zipf") {
    weights = zipf_weights(rng, experts, spec.exponent);
  } else if (spec.kind == "drifting") {
    weights = drifting_popularity(spec, experts);
  } else if (spec.kind == "uniform" || spec.kind == "balanced") {
    return std::vector<double>(experts, pairs / experts);
  } else {
    // A trace has no distribution behind it: its own counts are the average.
    std::vector<double> loads(experts, 0.0);
    for (uint16_t e : routing.expert_ids) loads[e] += 1.0;
    return loads;
  }
  // A token takes top_k distinct experts, so a hot expert's share is below its weight's share
  // (it cannot be picked twice by one token): count how often the generator's own sampler picks
  // each expert over many tokens drawn with an RNG of their own.
  constexpr uint64_t kSampleTokens = 1 << 16;
  DistinctSampler sampler(experts, std::move(weights));
  Rng draws(spec.seed ^ 0x9e3779b97f4a7c15ull);
  std::vector<uint16_t> picked(workload.top_k);
  std::vector<double> loads(experts, 0.0);
  for (uint64_t t = 0; t < kSampleTokens; ++t) {
    sampler.draw(draws, workload.top_k, picked.data());
    for (uint16_t e : picked) loads[e] += 1.0;
  }
  for (double& l : loads) l *= pairs / (static_cast<double>(kSampleTokens) * workload.top_k);
  return loads;
}

}  // namespace nvsvp::platform
