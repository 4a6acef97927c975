// Differential target for the checkpointed chunks: bytes -> a valid workload
// (a row count and that many 4-byte offsets, each taken modulo its row's new
// tokens, then Mamba's decoder: at most 256 chunks) -> one implementation,
// picked by byte 0, judged by the oracle against the reference and, for the
// reference itself, the contract's invariants 1-3 (fuzz_differential).
#include "fuzz_implementations.hpp"
#include "mamba_checkpointed_chunks/checkpointed_chunks_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chunkmeta::harness;
  return fuzz_differential({&checkpointed_chunks_spec()}, data, size, "checkpointed_chunks_differential");
}
