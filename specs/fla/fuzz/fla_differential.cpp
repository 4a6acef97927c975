// Differential target for FLA's chunk_indices and chunk_offsets: bytes -> a
// valid cu_seqlens (at most 256 chunks; byte 0's top bit its dtype) -> one
// implementation of either spec, picked by byte 0's other bits, judged by the
// oracle against its spec's reference and, when it is the reference, the
// spec's five invariants (fuzz_differential). `chunkmeta fuzz-shrink
// --target fla_differential` shrinks a finding.
#include "fuzz_implementations.hpp"
#include "fla/fla_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chunkmeta::harness;
  return fuzz_differential({&fla_chunk_indices_spec(), &fla_chunk_offsets_spec()}, data, size, "fla_differential");
}
