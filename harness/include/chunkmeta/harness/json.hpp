// JSON forms of workloads, outcomes and errors: the CLI protocol (JSON Lines),
// reports and corpus entries. The DOM reading (nlohmann) is the definition;
// the compact hand reader that serves traffic and the binary answer frames
// are fast paths that agree with it (fuzz/request_line.cpp, fuzz/answer_line.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "chunkmeta/harness/oracle.hpp"

namespace chunkmeta::harness {

using Json = nlohmann::ordered_json;

// A line of input that is not a workload at all: malformed JSON, a missing,
// unknown or repeated key, an unknown spec, a value of the wrong type.
// Library validation errors are Error.
struct InputError {
  std::string code;   // malformed_json, missing_key, unknown_key, duplicate_key, unknown_spec, wrong_type, value_too_large
  std::string field;  // "" for the line as a whole
  std::int64_t index = Error::kNoIndex;
  std::string message;
};

// A workload in its spec's words (Spec::inputs): the default spec's as it
// always was, {"chunk_size", "num_computed_tokens", "query_start_loc"};
// another spec's named, with its inputs and (when int64) the dtype,
//   {"spec": "fla.chunk_indices", "chunk_size", "cu_seqlens", "dtype": "int64"}.
Json to_json(const Spec& spec, const Workload& workload);
// What a spec is, for programs that serve every spec (the Python adapter) and
// for `chunkmeta specs --json`: {"name", "summary", "unit", "named_on_the_wire",
// "inputs": [{"name", "kind": "scalar" | "array" | "rows", "slot", "dtypes"}],
// "outputs": [{"name", "columns", "dtype": "int32" | "int64" | "of_input"}]}.
Json description_json(const Spec& spec);
// Every spec's description by name: what a started program finds in the
// environment variable kSpecsVariable.
Json descriptions_json();
inline constexpr const char* kSpecsVariable = "CHUNKMETA_SPECS";
// Outputs by name, in the spec's order; a 2-column array as [[a, b], ...].
Json to_json(const Spec& spec, const Arrays& arrays);
Json to_json(const Spec& spec, const Outcome& outcome);  // the outputs, or {"error": {...}}
Json error_json(const Error& error);   // {"error": {code, field, index, message}}
Json error_json(const InputError& error);

struct SpecWorkload {
  const Spec* spec = nullptr;
  Workload workload;
};
// The "spec" key names the spec (no key: the default spec); its own keys give the workload.
std::variant<SpecWorkload, InputError> parse_workload(const Json& value);
std::variant<SpecWorkload, InputError> parse_workload_line(std::string_view line);

// One line of the JSON Lines protocol: a workload, and the "id" the answer
// must echo (null when the line has none, or when its id is not an unsigned
// integer: that line is refused with wrong_type at "id").
struct Request {
  Json id;
  const Spec* spec = nullptr;  // the line's spec (Mamba without "spec"); null when unreadable
  std::variant<Workload, InputError> workload;
};
// The protocol's definition: the line read as a DOM, strictly (no NUL byte, no
// byte-order mark, no repeated key, an unsigned integer id).
Request parse_request_dom(std::string_view line);
// What `chunkmeta compute` serves traffic with: the harness's compact lines
// read without a DOM, anything else by parse_request_dom. The two agree on
// every line (fuzz/request_line.cpp compares them).
Request parse_request_line(std::string_view line);

// The answer line's object: {"id": ...} (when id is not null) followed by `body`'s keys.
Json answer_json(const Json& id, const Json& body);

// {"failure": {"kind", "summary", "detail"}}: an implementation that could not answer.
Json failure_json(const Misbehaviour& misbehaviour);

// The deepest nesting of arrays and objects any reader here accepts. Protocol
// lines, reports and corpus entries nest a few levels; deeper text (from a
// hostile program or file) is refused before it is parsed, so nothing that
// walks a parsed value recursively (dump, destruction, readers) meets it.
inline constexpr int kMaxJsonDepth = 64;
// True when `text` nests arrays or objects deeper than `limit` (text inside strings skipped).
bool nests_deeper_than(std::string_view text, int limit = kMaxJsonDepth) noexcept;
// `text` parsed without exceptions and never deeper than kMaxJsonDepth: the
// value, or why not ("nested more than 64 deep", "not valid JSON"). Every
// reader of untrusted JSON (corpus files, answers, plugin tables) starts here.
std::variant<Json, std::string> parse_json_bounded(std::string_view text);

// One compact line; invalid UTF-8 (echoed from bad input) is replaced, not thrown.
std::string dump_line(const Json& value);

// The hot lines of the protocol written without a DOM (a result can hold
// millions of entries): byte for byte dump_line(answer_json(id, to_json(...))).
std::string result_line(const Json& id, const Spec& spec, const Arrays& arrays);
std::string request_line(std::uint64_t id, const Spec& spec, const Workload& workload);

// The library's spelling of a field name ("query_start_loc", ...), nullopt if unknown.
std::optional<std::string_view> known_field(std::string_view name);

// A result answer: its id (an unsigned "id", if any) and its outputs.
struct ResultLine {
  std::optional<std::uint64_t> id;
  Arrays arrays;
};
// The compact answers chunkmeta's own writers and compact JSON dumps produce,
// read without a DOM: nullopt for anything else (an error, a failure, another
// key, a repeated key, whitespace, not JSON), which is for parse_outcome to
// read from the DOM. Wherever this reads a line, the DOM reads the same.
std::optional<ResultLine> parse_result_line(const Spec& spec, std::string_view line);

// Reads an outcome written by to_json(spec, Outcome); nullopt if it is not one.
std::optional<Outcome> parse_outcome(const Spec& spec, const Json& value);

// The binary answer, opt-in per process. The harness starts every `cmd:`
// program with CHUNKMETA_ANSWER_ENCODING=int32le in its environment; such a
// program may then answer a result (never an error or a failure) with a header
// line and, right after its newline, the entries as little-endian int32:
//   {"id":N,"int32le":[a,b,c]}\n  + 4*(a+b+c) bytes
// (one count per output array, in the spec's order: Mamba's cu_chunk_seqlen,
// seq_idx, last_chunk_indices; FLA's one array, 2N entries for chunk_indices).
// Any line may still be JSON. Text costs far more than the numbers: Python's
// json writes ~200 ns per entry, a tensor's bytes ~20.
inline constexpr const char* kAnswerEncodingVariable = "CHUNKMETA_ANSWER_ENCODING";
inline constexpr std::string_view kInt32le = "int32le";
// The payload's size if `line` is an int32le header, else nullopt (any other line).
std::optional<std::size_t> int32le_payload_bytes(std::string_view line);
// The answer of a header and its payload (of the size the header gives), for
// a spec with as many outputs as the header has counts.
std::optional<ResultLine> parse_int32le_answer(const Spec& spec, std::string_view header, std::string_view payload);
// A header line, its newline and the payload.
std::string int32le_answer(const Json& id, const Arrays& arrays);

}  // namespace chunkmeta::harness
