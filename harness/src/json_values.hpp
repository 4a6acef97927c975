// What the JSON forms (json_forms.cpp) and the protocol's lines
// (protocol_lines.cpp) both need: how a spec's workload is keyed on the wire,
// and the protocol's errors as they are worded.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/spec.hpp"

namespace chunkmeta::harness::wire {

// The default spec's workloads and answers are spelled as they always were, without "spec".
bool named_on_the_wire(const Spec& spec);
// The inputs a workload of `spec` sends, in the wire's order (Slot's).
std::vector<const Input*> sent_inputs(const Spec& spec);
InputError input_error(std::string code, std::string field, std::int64_t index, std::string message);
// "an array", "a negative number -3": a value as an error message names it.
std::string type_name(const Json& v);
// `text` parsed without exceptions (discarded when it is not JSON), and the
// first key given twice in one object, at any depth, in `repeated`: the
// parser would keep its last value, and no reader of untrusted JSON may.
Json parse_noting_repeated_key(std::string_view text, std::optional<std::string>& repeated);

}  // namespace chunkmeta::harness::wire
