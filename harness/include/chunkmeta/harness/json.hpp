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

// A line of input that is not a workload at all: malformed JSON, a missing or
// unknown key, a value of the wrong type. Library validation errors are Error.
struct InputError {
  std::string code;   // malformed_json, missing_key, unknown_key, wrong_type, value_too_large
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

// One compact line; invalid UTF-8 (echoed from bad input) is replaced, not thrown.
std::string dump_line(const Json& value);

// Reads an outcome written by to_json(Outcome); nullopt if it is not one.
std::optional<Outcome> parse_outcome(const Json& value);

}  // namespace chunkmeta::harness
