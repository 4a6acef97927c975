// JSON forms of workloads, results and errors (the CLI protocol and reports).
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
// unknown or repeated key, a value of the wrong type. Library validation errors are Error.
struct InputError {
  std::string code;   // malformed_json, missing_key, unknown_key, duplicate_key, wrong_type, value_too_large
  std::string field;  // "" for the line as a whole
  std::int64_t index = Error::kNoIndex;
  std::string message;
};

Json to_json(const Workload& workload);
Json to_json(const ChunkMetadata& result);
Json to_json(const Outcome& outcome);  // the result, or {"error": {...}}
Json error_json(const Error& error);   // {"error": {code, field, index, message}}
Json error_json(const InputError& error);

std::variant<Workload, InputError> parse_workload(const Json& value);
std::variant<Workload, InputError> parse_workload_line(std::string_view line);

// One line of the JSON Lines protocol: a workload, and the "id" the answer
// must echo (null when the line has none, or when its id is not an unsigned
// integer: that line is refused with wrong_type at "id").
struct Request {
  Json id;
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

// One compact line; invalid UTF-8 (echoed from bad input) is replaced, not thrown.
std::string dump_line(const Json& value);

// The hot lines of the protocol written without a DOM (a result can hold
// millions of entries): byte for byte dump_line(answer_json(id, to_json(x))).
std::string result_line(const Json& id, const ChunkMetadata& result);
std::string request_line(std::uint64_t id, const Workload& workload);

// The library's spelling of a field name ("query_start_loc", ...), nullopt if unknown.
std::optional<std::string_view> known_field(std::string_view name);

// A result answer line read without building a DOM (a result can hold millions
// of entries): an object with "cu_chunk_seqlen", "seq_idx" and
// "last_chunk_indices" as arrays of int32 values and, optionally, an unsigned
// "id", in any order. nullopt for anything else (an error, a failure, another
// key, a repeated key, not JSON); parse that as a DOM, whose reading is the
// definition: wherever this accepts a line, parse_outcome() gives the same result.
struct ResultLine {
  std::optional<std::uint64_t> id;
  ChunkMetadata result;
};
std::optional<ResultLine> parse_result_line(std::string_view line);

// Reads an outcome written by to_json(Outcome); nullopt if it is not one.
std::optional<Outcome> parse_outcome(const Json& value);

// The binary answer, opt-in per process. The harness starts every `cmd:`
// program with CHUNKMETA_ANSWER_ENCODING=int32le in its environment; such a
// program may then answer a result (never an error or a failure) with a header
// line and, right after its newline, the entries as little-endian int32:
//   {"id":N,"int32le":[a,b,c]}\n  + 4*(a+b+c) bytes
// (cu_chunk_seqlen's a entries, seq_idx's b, last_chunk_indices's c). Any line
// may still be JSON. Text costs far more than the numbers: Python's json writes
// ~200 ns per entry, a tensor's bytes ~20.
inline constexpr const char* kAnswerEncodingVariable = "CHUNKMETA_ANSWER_ENCODING";
inline constexpr std::string_view kInt32le = "int32le";
// The payload's size if `line` is an int32le header, else nullopt (any other line).
std::optional<std::size_t> int32le_payload_bytes(std::string_view line);
// The answer of a header and its payload (of the size the header gives).
std::optional<ResultLine> parse_int32le_answer(std::string_view header, std::string_view payload);
// A header line, its newline and the payload.
std::string int32le_answer(const Json& id, const ChunkMetadata& result);

}  // namespace chunkmeta::harness
