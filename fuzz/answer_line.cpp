// Answer-line target: the readers the harness reads implementations' answers
// with, against the DOM reading that defines them. Byte 0 picks the spec
// (mod 3), the rest is one answer line:
//   - parse_result_line (the compact reader, no DOM): wherever it accepts the
//     line, Json::parse + parse_outcome gives the same outputs and the same id;
//   - the int32le header: wherever int32le_payload_bytes reads the line as
//     one, a payload of that size is read back by parse_int32le_answer into
//     the spec's shapes or refused, never out of bounds.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "chunkmeta/harness/json.hpp"

namespace {

using namespace chunkmeta::harness;

[[noreturn]] void fail(const char* why, const Spec& spec, std::string_view line) {
  std::fprintf(stderr, "answer_line (%.*s): %s\ninput line (%zu bytes):", static_cast<int>(spec.name().size()),
               spec.name().data(), why, line.size());
  for (unsigned char byte : line) std::fprintf(stderr, " %02x", byte);
  std::fprintf(stderr, "\n");
  std::abort();
}

void check_compact_reader(const Spec& spec, std::string_view line) {
  const auto fast = parse_result_line(spec, line);
  if (!fast) return;  // left to the DOM: nothing to compare
  const Json value = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) fail("the compact reader accepted a line that is not JSON", spec, line);
  const auto outcome = parse_outcome(spec, value);
  if (!outcome || !outcome->ok()) fail("the compact reader accepted a line the DOM does not read as a result", spec, line);
  if (outcome->value() != fast->arrays) fail("the compact reader and the DOM read different outputs", spec, line);
  std::optional<std::uint64_t> id;
  if (value.contains("id") && value["id"].is_number_unsigned()) id = value["id"].get<std::uint64_t>();
  if (id != fast->id) fail("the compact reader and the DOM read different ids", spec, line);
}

void check_int32le_header(const Spec& spec, std::string_view line) {
  const auto bytes = int32le_payload_bytes(line);
  if (!bytes) return;
  if (*bytes > (std::size_t{1} << 20)) return;  // a payload that large is not this target's to allocate
  const std::string payload(*bytes, '\x7f');
  const auto read = parse_int32le_answer(spec, line, payload);
  if (!read) return;  // another spec's shape
  std::size_t entries = 0;
  for (std::size_t a = 0; a < read->arrays.size(); ++a) {
    if (read->arrays[a].size() % static_cast<std::size_t>(spec.outputs()[a].columns) != 0)
      fail("an int32le answer read into an array of broken rows", spec, line);
    entries += read->arrays[a].size();
  }
  if (read->arrays.size() != spec.outputs().size() || 4 * entries != *bytes)
    fail("an int32le answer read into other shapes than its header gives", spec, line);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;  // no spec byte
  const Spec& spec = *all_specs()[data[0] % all_specs().size()];
  const std::string_view line(reinterpret_cast<const char*>(data + 1), size - 1);
  check_compact_reader(spec, line);
  check_int32le_header(spec, line);
  return 0;
}
