// Differential target for the virtual batches of chunked local attention:
// bytes -> a valid workload (Mamba's decoder, at most 256 chunks, rows without
// new tokens left out, then one byte for A in page sizes) -> one
// implementation, picked by byte 0 (fuzz_differential), judged by the oracle
// (harness::judge): equal to the reference entry by entry, and when the
// reference itself is picked, its virtual batches against the contract's
// invariants 1-4.
#include "fuzz_implementations.hpp"
#include "local_attn_virtual_batches/local_attn_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chunkmeta::harness;
  return fuzz_differential({&local_attn_spec()}, data, size, "local_attn_differential");
}
