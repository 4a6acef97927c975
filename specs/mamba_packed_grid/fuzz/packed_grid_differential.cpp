// Differential target for the packed grid's two forms: bytes -> a valid
// query_start_loc from 0 and a chunk size (FLA's cu_seqlens decoder, moved to
// start at 0; int32) -> one implementation of either spec, picked by byte 0's
// low bits, judged by the oracle against its spec's reference and, when it is
// the reference, the spec's invariants. `chunkmeta fuzz-shrink --target
// packed_grid_differential` shrinks a finding.
#include "chunkmeta/harness/report.hpp"
#include "fuzz_implementations.hpp"
#include "mamba_packed_grid/packed_grid_spec.hpp"

namespace {

// Both forms' implementations, vLLM's helper's first: the picking order.
const std::vector<chunkmeta::harness::Implementation>& packed_grid_implementations() {
  using namespace chunkmeta::harness;
  static const std::vector<Implementation> all = [] {
    std::vector<Implementation> both = fuzz_implementations(packed_grid_spec());
    const auto& indices = fuzz_implementations(mamba_ssm_chunk_indices_spec());
    both.insert(both.end(), indices.begin(), indices.end());
    return both;
  }();
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chunkmeta::harness;
  const std::span<const std::uint8_t> input(data, size);
  const auto& implementations = packed_grid_implementations();
  if (implementations.empty()) return 0;  // a plugin without a packed-grid implementation: nothing to compare
  const Implementation& chosen = implementations[(size == 0 ? 0 : data[0] & 0x7f) % implementations.size()];
  const Workload workload = chosen.spec->decode_fuzz_input(input);
  abort_on_failure(check_one(workload, chosen, "fuzz packed_grid_differential", chosen.name == "reference"), input,
                   "packed_grid_differential");
  return 0;
}
