// The JSON forms of the specs' values: workloads, outcomes, errors and the
// specs' descriptions, written and read through nlohmann::json (the
// definition every faster reader is fuzzed against).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/printable.hpp"
#include "json_values.hpp"

namespace chunkmeta::harness {

namespace wire {

bool named_on_the_wire(const Spec& spec) { return &spec != &default_spec(); }

std::vector<const Input*> sent_inputs(const Spec& spec) {
  std::vector<const Input*> sent;
  for (const Slot slot : {Slot::chunk_size, Slot::block_size, Slot::per_row, Slot::offsets, Slot::second_per_row,
                          Slot::optional_scalar, Slot::flag}) {
    if (const Input* input = spec.input(slot)) sent.push_back(input);
  }
  // Then the fields past the named ones, each kind in the spec's order.
  for (const Slot slot : {Slot::more_scalar, Slot::more_per_row, Slot::more_optional, Slot::more_flag}) {
    for (const auto& input : spec.inputs()) {
      if (input.slot == slot) sent.push_back(&input);
    }
  }
  return sent;
}

InputError input_error(std::string code, std::string field, std::int64_t index, std::string message) {
  return {std::move(code), std::move(field), index, std::move(message)};
}

std::string type_name(const Json& v) {
  if (v.is_number_float()) return "a non-integer number " + v.dump();
  if (v.is_number_integer() && !v.is_number_unsigned()) return "a negative number " + v.dump();
  if (v.is_null()) return "null";
  const std::string name = v.type_name();
  return (name[0] == 'a' || name[0] == 'o' ? "an " : "a ") + name;
}

}  // namespace wire

namespace {

using wire::input_error;
using wire::named_on_the_wire;
using wire::sent_inputs;
using wire::type_name;

// The field names the protocol uses besides the specs' inputs and outputs: an
// Error's field is a view of one of these or of a name a spec describes.
constexpr std::array<std::string_view, 6> kProtocolFields = {"max_tokens", "max_rows", "max_sequences",
                                                             "dtype",      "spec",     "id"};

Json index_json(std::int64_t index) { return index == Error::kNoIndex ? Json(nullptr) : Json(index); }

Json error_object(std::string_view code, std::string_view field, std::int64_t index, const std::string& message) {
  Json error = Json::object();
  error["code"] = code;
  error["field"] = field;
  error["index"] = index_json(index);
  error["message"] = message;
  return Json{{"error", std::move(error)}};
}

// JSON integers are read as int64; larger integers and non-integers are refused here,
// the domain (negative, above 2^31-1) is the library's to judge.
std::variant<std::int64_t, InputError> read_integer(const Json& v, std::string_view field, std::int64_t index) {
  const std::string where = index == Error::kNoIndex ? std::string(field) : std::string(field) + "[" + std::to_string(index) + "]";
  // Beyond uint64 the parser keeps only a double: its digits are not the caller's, so "about".
  const auto beyond_64_bits = [&](bool positive) {
    const std::string given = where + " is " + (v.is_number_float() ? "about " : "") + v.dump() +
                              ", out of range: it does not fit in int64";
    return positive ? input_error("value_too_large", std::string(field), index, given + "; values must be at most 2^31-1")
                    : input_error("negative_value", std::string(field), index, given + "; values must be at least 0");
  };
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return beyond_64_bits(true);
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) {
    // An integer literal beyond 64 bits arrives as a double: it is an integer out of range.
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) >= 9223372036854775808.0) return beyond_64_bits(d > 0);
  }
  return input_error("wrong_type", std::string(field), index, where + " must be an integer, not " + type_name(v));
}

std::variant<std::vector<std::int64_t>, InputError> read_array(const Json& v, std::string_view field) {
  if (!v.is_array())
    return input_error("wrong_type", std::string(field), Error::kNoIndex,
                       std::string(field) + " must be an array of integers, not " + type_name(v));
  std::vector<std::int64_t> values;
  values.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    auto value = read_integer(v[i], field, static_cast<std::int64_t>(i));
    if (auto* bad = std::get_if<InputError>(&value)) return std::move(*bad);
    values.push_back(std::get<std::int64_t>(value));
  }
  return values;
}

// The keys a spec's workload has, in the order they are written.
std::vector<std::string_view> workload_keys(const Spec& spec) {
  std::vector<std::string_view> keys;
  if (named_on_the_wire(spec)) keys.push_back("spec");
  for (const Input* input : sent_inputs(spec)) keys.push_back(input->name);
  if (spec.reads_dtype()) keys.push_back("dtype");
  return keys;
}

}  // namespace

Json to_json(const Spec& spec, const Workload& workload) {
  Json j = Json::object();
  if (named_on_the_wire(spec)) j["spec"] = spec.name();
  for (const Input* input : sent_inputs(spec)) {
    const std::string key(input->name);
    if (is_array(input->slot)) {
      j[key] = array_in(workload, input->slot, input->index);
    } else if (is_optional(input->slot)) {
      const auto value = optional_in(workload, input->slot, input->index);
      j[key] = value ? Json(*value) : Json(nullptr);
    } else if (is_flag(input->slot)) {
      j[key] = flag_in(workload, input->slot, input->index);
    } else {
      j[key] = scalar_in(workload, input->slot, input->index);
    }
  }
  if (spec.reads_dtype() && workload.dtype == Dtype::int64) j["dtype"] = to_string(workload.dtype);
  return j;
}

Json description_json(const Spec& spec) {
  Json inputs = Json::array();
  for (const auto& input : spec.inputs()) {
    const char* kind = input.slot == Slot::rows     ? "rows"
                       : is_optional(input.slot)    ? "optional"
                       : is_flag(input.slot)        ? "flag"
                       : !is_array(input.slot)      ? "scalar"
                       : input.as_list              ? "list"
                                                    : "array";
    Json dtypes = Json::array();
    if (is_array(input.slot)) dtypes = input.wide ? Json{"int32", "int64"} : Json{"int32"};
    Json described{{"name", input.name}, {"kind", kind}, {"slot", to_string(input.slot)}, {"dtypes", std::move(dtypes)}};
    const bool more = input.slot == Slot::more_scalar || input.slot == Slot::more_per_row ||
                      input.slot == Slot::more_optional || input.slot == Slot::more_flag;
    if (more) described["index"] = input.index;  // which of its slot's fields
    inputs.push_back(std::move(described));
  }
  Json outputs = Json::array();
  for (const auto& output : spec.outputs()) {
    const char* dtype = output.dtype == OutputDtype::int32 ? "int32" : output.dtype == OutputDtype::int64 ? "int64" : "of_input";
    outputs.push_back(Json{{"name", output.name}, {"columns", output.columns}, {"dtype", dtype}});
  }
  return Json{{"name", spec.name()},
              {"summary", spec.summary()},
              {"unit", spec.unit()},
              {"named_on_the_wire", named_on_the_wire(spec)},
              {"inputs", std::move(inputs)},
              {"outputs", std::move(outputs)},
              {"judged_by", spec.judged_by_reference() ? "reference" : "kernels_view"},
              {"kernels_view", spec.has_kernels_view() ? Json(spec.kernels_view_covers()) : Json(nullptr)}};
}

Json descriptions_json() {
  Json all = Json::object();
  for (const auto* specs : {&all_specs(), &kernel_formulations()}) {
    for (const Spec* spec : *specs) all[std::string(spec->name())] = description_json(*spec);
  }
  return all;
}

Json to_json(const Spec& spec, const Arrays& arrays) {
  Json j = Json::object();
  const auto outputs = spec.outputs();
  for (std::size_t a = 0; a < outputs.size() && a < arrays.size(); ++a) {
    const auto& values = arrays[a];
    if (outputs[a].columns == 1) {
      j[std::string(outputs[a].name)] = values;
      continue;
    }
    Json rows = Json::array();
    for (std::size_t k = 0; k < values.size(); k += 2) {
      Json row = Json::array();
      for (std::size_t c = k; c < k + 2 && c < values.size(); ++c) row.push_back(values[c]);  // an odd last entry alone
      rows.push_back(std::move(row));
    }
    j[std::string(outputs[a].name)] = std::move(rows);
  }
  return j;
}

Json to_json(const Spec& spec, const Outcome& outcome) {
  return outcome.ok() ? to_json(spec, outcome.value()) : error_json(outcome.error());
}

Json error_json(const Error& error) {
  return error_object(to_string(error.code), error.field, error.index, error.message());
}

Json error_json(const InputError& error) { return error_object(error.code, error.field, error.index, error.message); }

std::string dump_line(const Json& value) { return value.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::variant<SpecWorkload, InputError> parse_workload(const Json& value) {
  if (!value.is_object())
    return input_error("wrong_type", "", Error::kNoIndex, "a workload must be a JSON object, not " + type_name(value));
  const Spec* spec = &default_spec();
  if (value.contains("spec")) {
    const Json& named = value["spec"];
    if (!named.is_string())
      return input_error("wrong_type", "spec", Error::kNoIndex, "spec must be a string, not " + type_name(named));
    spec = find_spec(named.get<std::string>());
    if (spec == nullptr)
      return input_error("unknown_spec", "spec", Error::kNoIndex,
                         "unknown spec \"" + named.get<std::string>() + "\"; the specs are " + spec_names());
  }
  const auto keys = workload_keys(*spec);
  for (const auto& [key, unused] : value.items()) {
    if (key == "spec" || std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    std::string listed;
    for (auto name : keys) listed += (listed.empty() ? "" : ", ") + std::string(name);
    return input_error("unknown_key", key, Error::kNoIndex,
                       "unknown key \"" + key + "\"; a " + std::string(spec->name()) + " workload has " + listed);
  }
  for (auto name : keys) {
    if (name == "spec" || name == "dtype") continue;  // optional
    if (!value.contains(name))
      return input_error("missing_key", std::string(name), Error::kNoIndex, "the key \"" + std::string(name) + "\" is missing");
  }
  Workload workload;
  for (const Input* input : sent_inputs(*spec)) {
    const Json& given = value[std::string(input->name)];
    if (is_array(input->slot)) {
      auto values = read_array(given, input->name);
      if (auto* bad = std::get_if<InputError>(&values)) return std::move(*bad);
      array_in(workload, input->slot, input->index) = std::move(std::get<0>(values));
    } else if (is_flag(input->slot)) {
      if (!given.is_boolean())
        return input_error("wrong_type", std::string(input->name), Error::kNoIndex,
                           std::string(input->name) + " must be true or false, not " + type_name(given));
      set_flag(workload, input->slot, input->index, given.get<bool>());
    } else if (is_optional(input->slot) && given.is_null()) {
      optional_in(workload, input->slot, input->index).reset();
    } else if (is_optional(input->slot)) {
      auto scalar = read_integer(given, input->name, Error::kNoIndex);
      if (auto* bad = std::get_if<InputError>(&scalar)) return std::move(*bad);
      optional_in(workload, input->slot, input->index) = std::get<std::int64_t>(scalar);
    } else {
      auto scalar = read_integer(given, input->name, Error::kNoIndex);
      if (auto* bad = std::get_if<InputError>(&scalar)) return std::move(*bad);
      scalar_in(workload, input->slot, input->index) = std::get<std::int64_t>(scalar);
    }
  }
  spec->fill_unread_rows(workload);
  if (spec->reads_dtype() && value.contains("dtype")) {
    const Json& dtype = value["dtype"];
    const auto parsed = dtype.is_string() ? parse_dtype(dtype.get<std::string>()) : std::nullopt;
    if (!parsed)
      return input_error("wrong_type", "dtype", Error::kNoIndex, "dtype must be \"int32\" or \"int64\", not " + dtype.dump());
    workload.dtype = *parsed;
  }
  return SpecWorkload{spec, std::move(workload)};
}

bool nests_deeper_than(std::string_view text, int limit) noexcept {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;  // the escaped character cannot end the string
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

Json wire::parse_noting_repeated_key(std::string_view text, std::optional<std::string>& repeated) {
  std::vector<std::vector<std::string>> keys;  // of each object open, outermost first
  const Json::parser_callback_t note_keys = [&](int, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) {
      keys.emplace_back();
    } else if (event == Json::parse_event_t::object_end && !keys.empty()) {
      keys.pop_back();
    } else if (event == Json::parse_event_t::key && !keys.empty() && !repeated) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (std::find(keys.back().begin(), keys.back().end(), key) != keys.back().end()) repeated = key;
      keys.back().push_back(key);
    }
    return true;
  };
  return Json::parse(text, note_keys, /*allow_exceptions=*/false);
}

std::variant<Json, std::string> parse_json_bounded(std::string_view text) {
  if (nests_deeper_than(text)) return "nested more than " + std::to_string(kMaxJsonDepth) + " deep";
  // A key given twice would be read as its last value: what a request may not do, an answer or a file may not either.
  std::optional<std::string> repeated;
  Json value = wire::parse_noting_repeated_key(text, repeated);
  if (value.is_discarded()) return std::string("not valid JSON");
  if (repeated) return "not one value per key: the key \"" + printable_line(*repeated) + "\" appears twice in one object";
  return value;
}

std::optional<std::string_view> known_field(std::string_view name) {
  for (auto field : kProtocolFields) {
    if (name == field) return field;
  }
  for (const Spec* spec : all_specs()) {
    for (const auto& input : spec->inputs()) {
      if (name == input.name) return input.name;
    }
    for (const auto& output : spec->outputs()) {
      if (name == output.name) return output.name;
    }
  }
  return std::nullopt;
}

std::optional<Outcome> parse_outcome(const Spec& spec, const Json& value) {
  if (!value.is_object()) return std::nullopt;
  if (value.contains("error")) {
    const Json& e = value["error"];
    if (!e.is_object() || !e.contains("code") || !e["code"].is_string()) return std::nullopt;
    const auto code = parse_error_code(e["code"].get<std::string>());
    if (!code) return std::nullopt;
    Error error{*code, {}, Error::kNoIndex, 0, 0};
    if (e.contains("field") && e["field"].is_string()) error.field = known_field(e["field"].get<std::string>()).value_or("");
    if (e.contains("index") && e["index"].is_number_integer()) error.index = e["index"].get<std::int64_t>();
    return Outcome(error);
  }
  // Entries must be integers that fit the int32 outputs; anything else is not an outcome.
  const auto fits = [](std::int64_t v) {
    return v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max();
  };
  const auto one_column = [&](const Json& array, std::string_view key) -> std::optional<Int32Array> {
    auto wide = read_array(array, key);
    if (std::holds_alternative<InputError>(wide)) return std::nullopt;
    Int32Array narrow;
    for (auto v : std::get<0>(wide)) {
      if (!fits(v)) return std::nullopt;
      narrow.push_back(static_cast<std::int32_t>(v));
    }
    return narrow;
  };
  Arrays arrays;
  for (const auto& output : spec.outputs()) {
    if (!value.contains(output.name)) return std::nullopt;
    const Json& array = value[std::string(output.name)];
    if (output.columns == 1) {
      auto values = one_column(array, output.name);
      if (!values) return std::nullopt;
      arrays.push_back(std::move(*values));
      continue;
    }
    if (!array.is_array()) return std::nullopt;
    Int32Array flat;
    for (const Json& row : array) {
      if (!row.is_array() || row.size() != static_cast<std::size_t>(output.columns)) return std::nullopt;
      auto values = one_column(row, output.name);
      if (!values) return std::nullopt;
      flat.insert(flat.end(), values->begin(), values->end());
    }
    arrays.push_back(std::move(flat));
  }
  return Outcome(std::move(arrays));
}

}  // namespace chunkmeta::harness
