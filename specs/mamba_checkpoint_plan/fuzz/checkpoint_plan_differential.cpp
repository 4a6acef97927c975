// Differential target for the checkpoint plan: bytes -> a valid workload
// (Mamba's decoder, at most 256 chunks, then one byte for the block size in
// chunk sizes) -> one implementation, picked by byte 0 (fuzz_differential),
// judged by the oracle (harness::judge): equal to the reference entry by
// entry, and when the reference itself is picked, its plan against the
// contract's invariants 1-4 (which read Mamba's chunk metadata).
#include "fuzz_implementations.hpp"
#include "mamba_checkpoint_plan/checkpoint_plan_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chunkmeta::harness;
  return fuzz_differential({&checkpoint_plan_spec()}, data, size, "checkpoint_plan_differential");
}
