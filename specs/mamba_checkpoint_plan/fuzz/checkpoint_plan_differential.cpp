// Differential target for the checkpoint plan: bytes -> a valid workload
// (Mamba's decoder, at most 256 chunks, then one byte for the block size in
// chunk sizes) -> one implementation, picked by the input's first byte,
// judged by the oracle (harness::judge): equal to the reference entry by
// entry, and when the reference itself is picked, its plan against the
// contract's invariants 1-4 (which read Mamba's chunk metadata).
#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/report.hpp"
#include "fuzz_implementations.hpp"
#include "mamba_checkpoint_plan/checkpoint_plan_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chunkmeta::harness;
  const std::span<const std::uint8_t> input(data, size);
  const Spec& spec = checkpoint_plan_spec();
  const auto& implementations = fuzz_implementations(spec);
  if (implementations.empty()) return 0;  // a plugin without a checkpoint-plan implementation: nothing to compare
  const Implementation& chosen = implementations[(size == 0 ? 0 : data[0]) % implementations.size()];
  const Workload workload = spec.decode_fuzz_input(input);
  abort_on_failure(check_one(workload, chosen, "fuzz checkpoint_plan_differential", chosen.name == "reference"), input,
                   "checkpoint_plan_differential");
  return 0;
}
