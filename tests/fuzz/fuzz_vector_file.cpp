// Fuzzes the testbench's vector-file reader (`nvsvp rtl-check --vectors`), the input being the
// file, read as each floating-point type in turn (the digits allowed per field depend on it).
// Bad input must raise VectorFileError; anything else is a finding.
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "nvsvp/testbench/vector_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const nvsvp::fuzz::ScratchDirectory scratch(NVSVP_FUZZ_CONFIG_DIR, "vectors");
  const std::string file = scratch.write("fuzz_vectors.txt", std::string(reinterpret_cast<const char*>(data), size));
  using nvsvp::reduction::ReduceType;
  for (const ReduceType type : {ReduceType::f16, ReduceType::bf16, ReduceType::f32}) {
    try {
      nvsvp::testbench::read_vector_file(file, type);
    } catch (const nvsvp::testbench::VectorFileError&) {
      // Refused as bad input: the documented outcome.
    }
  }
  return 0;
}
