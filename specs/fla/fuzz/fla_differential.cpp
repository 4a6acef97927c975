// Differential target for FLA's chunk_indices and chunk_offsets: bytes -> a
// valid cu_seqlens (at most 256 chunks; byte 0's top bit its dtype) -> one
// implementation of either spec, picked by byte 0's other bits, judged by the
// oracle against its spec's reference and, when it is the reference, the
// spec's five invariants. As the Mamba target, one implementation per
// execution; `chunkmeta fuzz-shrink --target fla_differential` shrinks a finding.
#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/report.hpp"
#include "fla/fla_spec.hpp"
#include "fuzz_implementations.hpp"

namespace {

// Both specs' implementations, indices first: the picking order.
const std::vector<chunkmeta::harness::Implementation>& fla_implementations() {
  using namespace chunkmeta::harness;
  static const std::vector<Implementation> all = [] {
    std::vector<Implementation> both = fuzz_implementations(fla_chunk_indices_spec());
    const auto& offsets = fuzz_implementations(fla_chunk_offsets_spec());
    both.insert(both.end(), offsets.begin(), offsets.end());
    return both;
  }();
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chunkmeta::harness;
  const std::span<const std::uint8_t> input(data, size);
  const auto& implementations = fla_implementations();
  if (implementations.empty()) return 0;  // a plugin without an FLA implementation: nothing to compare
  const Implementation& chosen = implementations[(size == 0 ? 0 : data[0] & 0x7f) % implementations.size()];
  const Workload workload = decode_valid_cu_seqlens(input);
  abort_on_failure(check_one(workload, chosen, "fuzz fla_differential", chosen.name == "reference"), input,
                   "fla_differential");
  return 0;
}
