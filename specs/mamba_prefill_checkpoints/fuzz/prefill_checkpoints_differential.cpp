// Differential target for the prefill checkpoint planner: bytes -> a valid
// workload (M, the alignment and the flag from three bytes, the rows from
// Mamba's decoder: s = c + n, H its chunk size) -> one implementation, picked
// by byte 0, judged by the oracle against the reference and, for the
// reference itself, the contract's invariant 5 (fuzz_differential).
#include "fuzz_implementations.hpp"
#include "mamba_prefill_checkpoints/prefill_checkpoints_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chunkmeta::harness;
  return fuzz_differential({&prefill_checkpoints_spec()}, data, size, "prefill_checkpoints_differential");
}
