// Differential target for the virtual batches of chunked local attention:
// bytes -> a valid workload (Mamba's decoder, at most 256 chunks, rows without
// new tokens left out, then one byte for A in page sizes) -> one
// implementation, picked by the input's first byte, judged by the oracle
// (harness::judge): equal to the reference entry by entry, and when the
// reference itself is picked, its virtual batches against the contract's
// invariants 1-4.
#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/report.hpp"
#include "fuzz_implementations.hpp"
#include "local_attn_virtual_batches/local_attn_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chunkmeta::harness;
  const std::span<const std::uint8_t> input(data, size);
  const Spec& spec = local_attn_spec();
  const auto& implementations = fuzz_implementations(spec);
  if (implementations.empty()) return 0;  // a plugin without a virtual-batch implementation: nothing to compare
  const Implementation& chosen = implementations[(size == 0 ? 0 : data[0]) % implementations.size()];
  const Workload workload = spec.decode_fuzz_input(input);
  abort_on_failure(check_one(workload, chosen, "fuzz local_attn_differential", chosen.name == "reference"), input,
                   "local_attn_differential");
  return 0;
}
