// Differential target: bytes -> a valid workload -> every built-in
// implementation (fuzz_implementations()) against the reference and the SPEC invariants.
#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/report.hpp"
#include "fuzz_implementations.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chunkmeta::harness;
  const std::span<const std::uint8_t> input(data, size);
  const chunkmeta::Workload workload = decode_valid_workload(input);
  abort_on_failure(check_all(workload, fuzz_implementations(), "fuzz differential"), input);
  return 0;
}
