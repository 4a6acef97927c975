// Differential target for the conv1d program map: bytes -> a valid
// query_start_loc and block_m (FLA's cu_seqlens decoder, at most 256
// programs, int32) -> one implementation, picked by the input's first byte,
// judged by the oracle (harness::judge): equal to the reference entry by
// entry, and when the reference itself is picked, its map against the
// contract's four invariants.
#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/report.hpp"
#include "conv1d_program_map/conv1d_spec.hpp"
#include "fuzz_implementations.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chunkmeta::harness;
  const std::span<const std::uint8_t> input(data, size);
  const Spec& spec = conv1d_program_map_spec();
  const auto& implementations = fuzz_implementations(spec);
  if (implementations.empty()) return 0;  // a plugin without a program-map implementation: nothing to compare
  const Implementation& chosen = implementations[(size == 0 ? 0 : data[0] & 0x7f) % implementations.size()];
  const Workload workload = spec.decode_fuzz_input(input);
  abort_on_failure(check_one(workload, chosen, "fuzz conv1d_program_map_differential", chosen.name == "reference"),
                   input, "conv1d_program_map_differential");
  return 0;
}
