// Switch allocators that match a crossbar's free outputs to its inputs in one decision, as a
// router's cycle-based allocator does (BookSim's and Garnet's iSLIP and wavefront), where the
// output arbiters (arbiter.hpp) let each output choose on its own as its link frees. SystemC-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nvsvp::model {

// A request that may be granted now: `output` may take the head of `requester` (input * group + VC).
struct MatchRequest {
  uint16_t output;
  uint32_t requester;
};

class MatchingAllocator {
 public:
  enum class Kind : uint8_t { islip, wavefront };
  // `outputs` and `inputs` of the crossbar, `group` requester ids per input; `iterations` of
  // request-grant-accept (iSLIP; the wavefront needs one).
  MatchingAllocator(Kind kind, uint32_t outputs, uint32_t inputs, uint32_t group, uint32_t iterations);

  // Matches `requests` (each output and each input at most once) into `grants`, one per matched
  // output, and moves the priorities as the allocator does.
  void match(const std::vector<MatchRequest>& requests, std::vector<MatchRequest>& grants);

 private:
  void match_islip(const std::vector<MatchRequest>& requests, std::vector<MatchRequest>& grants);
  void match_wavefront(const std::vector<MatchRequest>& requests, std::vector<MatchRequest>& grants);

  Kind kind_;
  uint32_t group_;
  uint32_t iterations_;
  uint32_t size_;                   // the wavefront's square: max(outputs, inputs)
  std::vector<uint32_t> grant_after_;   // iSLIP [output]: the input after which its grant rotation starts
  std::vector<uint32_t> accept_after_;  // iSLIP [input]: the output after which its accept rotation starts
  uint32_t diagonal_ = 0;           // the wavefront's priority diagonal this decision
  // Scratch, reused per decision.
  std::vector<int64_t> output_match_, input_match_;
  std::vector<int64_t> granted_requester_;  // iSLIP [output]: the requester it grants this iteration
  std::vector<std::vector<uint32_t>> grants_to_input_;  // iSLIP [input]: outputs granting it
  std::vector<MatchRequest> ordered_;
};

// "islip" and "wavefront": the switch arbiters that are matching allocators.
const std::vector<std::string>& matching_allocator_names();
bool is_matching_allocator(const std::string& arbiter);
MatchingAllocator::Kind matching_allocator_kind(const std::string& arbiter);

}  // namespace nvsvp::model
