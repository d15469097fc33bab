#include "nvsvp/fw/moe_workload.hpp"

#include <algorithm>

#include "nvsvp/hw/bit_mask.hpp"

namespace nvsvp::fw {

const char* to_string(DataType type) {
  switch (type) {
    case DataType::fp8: return "fp8";
    case DataType::bf16: return "bf16";
    case DataType::fp32: return "fp32";
  }
  return "?";
}

bool parse_data_type(const std::string& text, DataType& type) {
  if (text == "fp8") type = DataType::fp8;
  else if (text == "bf16") type = DataType::bf16;
  else if (text == "fp32") type = DataType::fp32;
  else return false;
  return true;
}

const char* to_string(LayerPass pass) { return pass == LayerPass::backward ? "backward" : "forward"; }

bool parse_layer_pass(const std::string& text, LayerPass& pass) {
  if (text == "forward") pass = LayerPass::forward;
  else if (text == "backward") pass = LayerPass::backward;
  else return false;
  return true;
}

uint64_t vector_bytes(DataType type, uint32_t hidden) {
  switch (type) {
    case DataType::fp8: return hidden + 4ull * ((hidden + 127) / 128);
    case DataType::bf16: return 2ull * hidden;
    case DataType::fp32: return 4ull * hidden;
  }
  return 0;
}

const char* to_string(WeightDtype type) {
  switch (type) {
    case WeightDtype::fp8: return "fp8";
    case WeightDtype::fp4: return "fp4";
    case WeightDtype::bf16: return "bf16";
  }
  return "?";
}

bool parse_weight_dtype(const std::string& text, WeightDtype& type) {
  if (text == "fp8") type = WeightDtype::fp8;
  else if (text == "fp4") type = WeightDtype::fp4;
  else if (text == "bf16") type = WeightDtype::bf16;
  else return false;
  return true;
}

uint64_t weight_bytes(WeightDtype type, uint64_t parameters) {
  switch (type) {
    case WeightDtype::fp4: return parameters / 2 + parameters / 16;
    case WeightDtype::fp8: return parameters;
    case WeightDtype::bf16: return 2 * parameters;
  }
  return 0;
}

hw::Precision gemm_precision(WeightDtype type) {
  switch (type) {
    case WeightDtype::fp4: return hw::Precision::fp4;
    case WeightDtype::fp8: return hw::Precision::fp8;
    case WeightDtype::bf16: return hw::Precision::bf16;
  }
  return hw::Precision::fp8;
}

void destination_gpus(const MoeRouting& routing, uint64_t token, std::vector<uint32_t>& out) {
  out.clear();
  const uint16_t* experts = routing.experts_of(token);
  const uint32_t per = routing.experts_per_gpu();
  if (routing.gpus <= hw::kMaxGpus) {
    // A set of GPUs as a bit mask, read out in ascending order: planning, checks and reports ask
    // this for every token, and sorting the top-k list cost more than the rest.
    hw::GpuMask mask;
    for (uint32_t k = 0; k < routing.top_k; ++k) mask.set(experts[k] / per);
    for (uint32_t gpu : mask) out.push_back(gpu);
    return;
  }
  for (uint32_t k = 0; k < routing.top_k; ++k) out.push_back(experts[k] / per);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

}  // namespace nvsvp::fw
