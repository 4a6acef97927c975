// Differential target for Mamba: bytes -> a valid workload (at most 256
// chunks) -> one implementation, picked by the input's first byte (the
// workload decoder leaves it unread), judged by the oracle (harness::judge).
// Each execution:
//   - runs the reference and the picked implementation on the workload;
//   - requires the answer to equal the reference's, entry by entry (a
//     differing answer is also checked against the spec's invariants);
//   - when the picked implementation is the reference itself, checks its
//     answer against the spec's seven invariants.
// One implementation per execution keeps executions short under ASan; over a
// run each implementation gets its share of inputs, and a mutation of byte 0
// replays a workload through another one. `chunkmeta fuzz-shrink` checks a
// finding against every implementation.
#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/report.hpp"
#include "fuzz_implementations.hpp"
#include "mamba/mamba_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chunkmeta::harness;
  const std::span<const std::uint8_t> input(data, size);
  const auto& implementations = fuzz_implementations(mamba_spec());
  if (implementations.empty()) return 0;  // a plugin without a Mamba implementation: nothing to compare
  const Implementation& chosen = implementations[(size == 0 ? 0 : data[0]) % implementations.size()];
  const Workload workload = decode_valid_workload(input);
  abort_on_failure(check_one(workload, chosen, "fuzz differential", chosen.name == "reference"), input, "differential");
  return 0;
}
