// Robustness target: bytes -> an arbitrary, mostly invalid workload. Invalid
// input must be rejected with the reference's error by every implementation,
// never computed, never crash; valid input must be computed correctly. A
// plugin (CHUNKMETA_FUZZ_PLUGIN) is sent invalid input only if its flags say it validates.
#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/report.hpp"
#include "fuzz_implementations.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chunkmeta::harness;
  const std::span<const std::uint8_t> input(data, size);
  const chunkmeta::Workload workload = decode_any_workload(input);
  const auto sizes = chunkmeta::output_sizes(chunkmeta::view_of(workload));
  // Valid but too large to compute within one iteration: output_sizes() has exercised validation.
  if (sizes.ok() && sizes.value().num_chunks() > kFuzzMaxChunks) return 0;
  abort_on_failure(check_all(workload, fuzz_implementations(), "fuzz robustness"), input);
  return 0;
}
