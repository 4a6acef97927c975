// Differential target for the packed grid's two forms: bytes -> a valid
// query_start_loc from 0 and a chunk size (FLA's cu_seqlens decoder, moved to
// start at 0; int32) -> one implementation of either spec, picked by byte 0's
// low bits, judged by the oracle against its spec's reference and, when it is
// the reference, the spec's invariants. `chunkmeta fuzz-shrink --target
// packed_grid_differential` shrinks a finding.
#include "fuzz_implementations.hpp"
#include "mamba_packed_grid/packed_grid_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chunkmeta::harness;
  return fuzz_differential({&packed_grid_spec(), &mamba_ssm_chunk_indices_spec()}, data, size, "packed_grid_differential");
}
