// Request-line target: the reader `chunkmeta compute` serves traffic with
// (harness::parse_request_line: a hand reader for the harness's compact lines,
// the DOM for anything else) against the DOM reading that defines the protocol
// (harness::parse_request_dom). Every line of the input, split as compute
// splits its stdin, must read the same both ways: the same id and the same
// workload, or the same refusal (code, field and index).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "chunkmeta/harness/json.hpp"

namespace {

using chunkmeta::harness::InputError;
using chunkmeta::harness::Request;

std::string describe(const Request& request) {
  std::string text = "id " + request.id.dump() + ", ";
  if (const auto* workload = std::get_if<chunkmeta::harness::Workload>(&request.workload))
    return text + "workload " + chunkmeta::harness::dump_line(chunkmeta::harness::to_json(*request.spec, *workload));
  const auto& error = std::get<InputError>(request.workload);
  return text + "refused: " + error.code + " at \"" + error.field + "\" index " + std::to_string(error.index) + ": " +
         error.message;
}

bool same_reading(const Request& served, const Request& defined) {
  if (served.id != defined.id || served.spec != defined.spec || served.workload.index() != defined.workload.index())
    return false;
  if (const auto* workload = std::get_if<chunkmeta::harness::Workload>(&served.workload))
    return *workload == std::get<chunkmeta::harness::Workload>(defined.workload);
  const auto& a = std::get<InputError>(served.workload);
  const auto& b = std::get<InputError>(defined.workload);
  return a.code == b.code && a.field == b.field && a.index == b.index;
}

void check_line(std::string_view line) {
  const Request served = chunkmeta::harness::parse_request_line(line);
  const Request defined = chunkmeta::harness::parse_request_dom(line);
  if (same_reading(served, defined)) return;
  std::fprintf(stderr, "request_line: compute's reader and the protocol's DOM reading disagree\n  compute: %s\n  DOM:     %s\n",
               describe(served).c_str(), describe(defined).c_str());
  std::fprintf(stderr, "input line (%zu bytes):", line.size());
  for (unsigned char byte : line) std::fprintf(stderr, " %02x", byte);
  std::fprintf(stderr, "\n");
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  // compute reads its input with std::getline: lines end at '\n', the last one at the end of input.
  while (!rest.empty()) {
    const auto newline = rest.find('\n');
    check_line(rest.substr(0, newline));
    if (newline == std::string_view::npos) break;
    rest.remove_prefix(newline + 1);
  }
  return 0;
}
