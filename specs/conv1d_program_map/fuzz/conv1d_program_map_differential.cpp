// Differential target for the conv1d program map: bytes -> a valid
// query_start_loc and block_m (FLA's cu_seqlens decoder, at most 256
// programs, int32) -> one implementation, picked by byte 0 (fuzz_differential),
// judged by the oracle (harness::judge): equal to the reference entry by
// entry, and when the reference itself is picked, its map against the
// contract's four invariants.
#include "fuzz_implementations.hpp"
#include "conv1d_program_map/conv1d_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chunkmeta::harness;
  return fuzz_differential({&conv1d_program_map_spec()}, data, size, "conv1d_program_map_differential");
}
