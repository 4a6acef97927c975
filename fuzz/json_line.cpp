// JSON-line target: bytes -> the CLI's input parsing (any spec's workload) -> one output line.
// Anything but a well-formed answer (a throw, a crash, an answer that is not
// JSON, a workload computed wrongly) is a finding.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/report.hpp"

namespace {
[[noreturn]] void fail(const char* why, std::string_view line) {
  std::fprintf(stderr, "json_line: %s\ninput: %.*s\n", why, static_cast<int>(line.size()), line.data());
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chunkmeta::harness;
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  const auto parsed = parse_workload_line(line);
  Json answer;
  if (const auto* bad = std::get_if<InputError>(&parsed)) {
    if (bad->code.empty() || bad->message.empty()) fail("input error without a code or message", line);
    answer = error_json(*bad);
  } else {
    const auto& [spec, workload] = std::get<SpecWorkload>(parsed);
    const auto chunks = spec->chunks(workload);
    if (chunks && *chunks > kFuzzMaxChunks) return 0;  // too large for one iteration
    const Implementation fast = *spec->find_builtin("fast");
    const Outcome outcome = std::get<Outcome>(fast.compute(workload));
    abort_on_failure(check_one(workload, fast, "fuzz json_line", true), {data, size}, "json_line");
    answer = to_json(*spec, outcome);
  }
  const std::string out = dump_line(answer);
  if (out.find('\n') != std::string::npos) fail("answer spans more than one line", line);
  if (!Json::accept(out)) fail("answer is not valid JSON", line);
  return 0;
}
