// Robustness target: bytes -> an arbitrary, mostly invalid workload. Invalid
// input must be rejected with the reference's error by every implementation,
// never computed, never crash; valid input must be computed correctly. A
// plugin (CHUNKMETA_FUZZ_PLUGIN) is sent invalid input only if its flags say it validates.
// The error is also printed (message() and operator<<, for people), which must
// name its code for any values (extreme ones included), under the sanitizers.
// On valid input, fast_into's buffer contract is checked too (harness::
// check_fast_into_buffers): each buffer one entry short (its error printed
// like the others), then all roomy.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/report.hpp"
#include "fuzz_implementations.hpp"

namespace {

void check_printed(const chunkmeta::Error& error) {
  std::ostringstream printed;
  printed << error;
  const std::string expected = "error " + std::string(chunkmeta::to_string(error.code)) + " at ";
  if (printed.str().rfind(expected, 0) != 0 || error.message().empty()) {
    std::fprintf(stderr, "an error printed as \"%s\", not starting \"%s\" with a message\n", printed.str().c_str(),
                 expected.c_str());
    std::abort();
  }
}

void check_caller_buffers(const chunkmeta::Workload& workload, std::span<const std::uint8_t> input) {
  using chunkmeta::harness::Counterexample;
  static constexpr std::array<std::array<std::int64_t, 3>, 4> kSlack = {{{-1, 0, 0}, {0, -1, 0}, {0, 0, -1}, {3, 3, 3}}};
  for (const auto& slack : kSlack) {
    chunkmeta::Error refusal{};
    auto finding = chunkmeta::harness::check_fast_into_buffers(workload, slack, &refusal);
    if (!finding && refusal.code == chunkmeta::ErrorCode::output_buffer_too_small) check_printed(refusal);
    if (finding) {
      Counterexample cx;
      cx.implementation = "fast_into";
      cx.property = "fuzz robustness: buffers of the needed sizes plus " + std::to_string(slack[0]) + ", " +
                    std::to_string(slack[1]) + ", " + std::to_string(slack[2]);
      cx.workload = workload;
      cx.finding = std::move(*finding);
      chunkmeta::harness::abort_on_failure({cx}, input);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chunkmeta::harness;
  const std::span<const std::uint8_t> input(data, size);
  const chunkmeta::Workload workload = decode_any_workload(input);
  const auto sizes = chunkmeta::output_sizes(chunkmeta::view_of(workload));
  if (!sizes.ok()) check_printed(sizes.error());
  // Valid but too large to compute within one iteration: output_sizes() has exercised validation.
  if (sizes.ok() && sizes.value().num_chunks() > kFuzzMaxChunks) return 0;
  abort_on_failure(check_all(workload, fuzz_implementations(), "fuzz robustness"), input);
  if (sizes.ok()) check_caller_buffers(workload, input);
  return 0;
}
