// Test-only: turns a finding of fuzz_differential_planted into the shrunk
// report (the same path `chunkmeta fuzz-shrink` takes for the built-ins).
//   planted_report CRASH_FILE REPORT_DIR   -> exit 0 when a report of at most 2 rows was written
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>

#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/report.hpp"
#include "chunkmeta/harness/shrink.hpp"
#include "fuzz_implementations.hpp"
#include "mamba/mamba_spec.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: planted_report CRASH_FILE REPORT_DIR\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  const std::vector<std::uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const auto found = chunkmeta::harness::decode_valid_workload(bytes);
  const auto failures =
      chunkmeta::harness::shrink_failure(found, fuzz_implementations(chunkmeta::harness::mamba_spec()), "fuzz differential");
  if (failures.empty()) {
    std::cerr << "planted_report: the input does not fail\n";
    return 1;
  }
  std::string error;
  const auto files = chunkmeta::harness::write_counterexample(failures.front(), argv[2], &error);
  std::cout << chunkmeta::harness::render(failures.front(), files);
  if (!files) {
    std::cerr << "planted_report: " << error << "\n";
    return 1;
  }
  return failures.front().workload.num_computed_tokens.size() <= 2 ? 0 : 1;
}
