#include "chunkmeta/harness/json.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace chunkmeta::harness {
namespace {

// The field names the protocol uses besides the specs' inputs and outputs: an
// Error's field is a view of one of these or of a name a spec describes.
constexpr std::array<std::string_view, 6> kProtocolFields = {"max_tokens", "max_rows", "max_sequences",
                                                             "dtype",      "spec",     "id"};

// The default spec's workloads and answers are spelled as they always were, without "spec".
bool named_on_the_wire(const Spec& spec) { return &spec != &default_spec(); }

// The inputs a workload of `spec` sends, in the wire's order (Slot's).
std::vector<const Input*> sent_inputs(const Spec& spec) {
  std::vector<const Input*> sent;
  for (const Slot slot : {Slot::chunk_size, Slot::block_size, Slot::per_row, Slot::offsets}) {
    if (const Input* input = spec.input(slot)) sent.push_back(input);
  }
  return sent;
}

Json index_json(std::int64_t index) { return index == Error::kNoIndex ? Json(nullptr) : Json(index); }

Json error_object(std::string_view code, std::string_view field, std::int64_t index, const std::string& message) {
  Json error = Json::object();
  error["code"] = code;
  error["field"] = field;
  error["index"] = index_json(index);
  error["message"] = message;
  return Json{{"error", std::move(error)}};
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

// JSON integers are read as int64; larger integers and non-integers are refused here,
// the domain (negative, above 2^31-1) is the library's to judge.
std::variant<std::int64_t, InputError> read_integer(const Json& v, std::string_view field, std::int64_t index) {
  const std::string where = index == Error::kNoIndex ? std::string(field) : std::string(field) + "[" + std::to_string(index) + "]";
  const auto beyond_64_bits = [&](bool positive) {
    return positive ? input_error("value_too_large", std::string(field), index,
                                  where + " is " + v.dump() + "; values must be at most 2^31-1")
                    : input_error("negative_value", std::string(field), index,
                                  where + " is " + v.dump() + "; values must be at least 0");
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
      j[key] = array_in(workload, input->slot);
    } else {
      j[key] = scalar_in(workload, input->slot);
    }
  }
  if (spec.reads_dtype() && workload.dtype == Dtype::int64) j["dtype"] = to_string(workload.dtype);
  return j;
}

Json description_json(const Spec& spec) {
  Json inputs = Json::array();
  for (const auto& input : spec.inputs()) {
    static constexpr const char* kSlots[] = {"chunk_size", "block_size", "per_row", "offsets", "rows"};
    const char* kind = input.slot == Slot::rows ? "rows" : is_array(input.slot) ? "array" : "scalar";
    Json dtypes = Json::array();
    if (is_array(input.slot)) dtypes = input.wide ? Json{"int32", "int64"} : Json{"int32"};
    inputs.push_back(Json{{"name", input.name},
                          {"kind", kind},
                          {"slot", kSlots[static_cast<int>(input.slot)]},
                          {"dtypes", std::move(dtypes)}});
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
              {"outputs", std::move(outputs)}};
}

Json descriptions_json() {
  Json all = Json::object();
  for (const Spec* spec : all_specs()) all[std::string(spec->name())] = description_json(*spec);
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

namespace {

// Appends "name":[v0,v1,...] (with a leading comma unless first); with two
// columns, [[v0,v1],[v2,v3],...].
template <typename Int, typename Allocator>
void append_array(std::string& out, std::string_view name, const std::vector<Int, Allocator>& values,
                  bool first = false, int columns = 1) {
  if (!first) out += ',';
  out += '"';
  out += name;
  out += "\":[";
  char digits[24];
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    if (columns == 2 && i % 2 == 0) out += '[';
    const auto end = std::to_chars(digits, digits + sizeof digits, values[i]).ptr;
    out.append(digits, end);
    if (columns == 2 && (i % 2 == 1 || i + 1 == values.size())) out += ']';
  }
  out += ']';
}

}  // namespace

std::string result_line(const Json& id, const Spec& spec, const Arrays& arrays) {
  std::size_t entries = 0;
  for (const auto& array : arrays) entries += array.size();
  std::string out;
  out.reserve(64 + 12 * entries);
  out += '{';
  if (!id.is_null()) out += "\"id\":" + dump_line(id) + ',';
  const auto outputs = spec.outputs();
  for (std::size_t a = 0; a < outputs.size() && a < arrays.size(); ++a)
    append_array(out, outputs[a].name, arrays[a], a == 0, outputs[a].columns);
  out += '}';
  return out;
}

std::string request_line(std::uint64_t id, const Spec& spec, const Workload& workload) {
  std::string out;
  out.reserve(64 + 12 * (workload.num_computed_tokens.size() + workload.query_start_loc.size()));
  out += "{\"id\":" + std::to_string(id);
  if (named_on_the_wire(spec)) {
    out += ",\"spec\":\"";
    out += spec.name();
    out += '"';
  }
  for (const Input* input : sent_inputs(spec)) {
    if (is_array(input->slot)) {
      append_array(out, input->name, array_in(workload, input->slot));
    } else {
      out += ",\"";
      out += input->name;
      out += "\":" + std::to_string(scalar_in(workload, input->slot));
    }
  }
  if (spec.reads_dtype() && workload.dtype == Dtype::int64) out += ",\"dtype\":\"int64\"";
  out += '}';
  return out;
}

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
      array_in(workload, input->slot) = std::move(std::get<0>(values));
    } else {
      auto scalar = read_integer(given, input->name, Error::kNoIndex);
      if (auto* bad = std::get_if<InputError>(&scalar)) return std::move(*bad);
      scalar_in(workload, input->slot) = std::get<std::int64_t>(scalar);
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

namespace {

// Why the parser refuses `text`: its first error, as the parser words it.
class FirstParseError final : public nlohmann::json_sax<Json> {
 public:
  std::string message = "not valid JSON";
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t value, const string_t&) override {
    // The DOM refuses what a double cannot hold (found by fuzz_json_line: 1E4748).
    if (!std::isfinite(value)) message = "JSON the parser cannot hold: a number beyond a double";
    return std::isfinite(value);
  }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool key(string_t&) override { return true; }
  bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception& e) override {
    message = "not valid JSON at byte " + std::to_string(byte) + ": " + e.what();
    return false;
  }
};

}  // namespace

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

std::variant<Json, std::string> parse_json_bounded(std::string_view text) {
  if (nests_deeper_than(text)) return "nested more than " + std::to_string(kMaxJsonDepth) + " deep";
  Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return std::string("not valid JSON");
  return value;
}

namespace {

std::string why_not_json(std::string_view text) {
  FirstParseError first;
  Json::sax_parse(text, &first);
  return first.message;
}

// One protocol line as JSON text, strictly: besides what the parser refuses,
// a NUL byte (the parser would end the text there), a leading byte-order mark
// (the parser would skip it) and a key repeated in the object (the parser would
// keep the last value) are refused rather than read.
std::variant<Json, InputError> parse_json_line(std::string_view line) {
  if (const auto nul = line.find('\0'); nul != std::string_view::npos)
    return input_error("malformed_json", "", Error::kNoIndex,
                       "a NUL byte at byte " + std::to_string(nul) + "; a line must be JSON text only");
  if (line.starts_with("\xEF\xBB\xBF"))
    return input_error("malformed_json", "", Error::kNoIndex, "the line starts with a byte-order mark; JSON Lines are UTF-8 without one");
  if (nests_deeper_than(line))
    return input_error("malformed_json", "", Error::kNoIndex,
                       "arrays or objects nested more than " + std::to_string(kMaxJsonDepth) + " deep");
  std::vector<std::string> keys;  // of the outermost object
  std::optional<std::string> repeated;
  const Json::parser_callback_t note_keys = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::key && depth == 1 && !repeated) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) repeated = key;
      keys.push_back(key);
    }
    return true;
  };
  // Without exceptions: a line that is not JSON is common (fuzzing, a confused
  // program), and a throw costs more than parsing it twice.
  Json value = Json::parse(line, note_keys, /*allow_exceptions=*/false);
  if (value.is_discarded()) return input_error("malformed_json", "", Error::kNoIndex, why_not_json(line));
  if (repeated) return input_error("duplicate_key", *repeated, Error::kNoIndex, "the key \"" + *repeated + "\" appears twice");
  return value;
}

}  // namespace

std::variant<SpecWorkload, InputError> parse_workload_line(std::string_view line) {
  auto value = parse_json_line(line);
  if (auto* bad = std::get_if<InputError>(&value)) return std::move(*bad);
  return parse_workload(std::get<Json>(value));
}

Json answer_json(const Json& id, const Json& body) {
  if (id.is_null()) return body;
  Json answer = Json::object();
  answer["id"] = id;
  for (const auto& [key, value] : body.items()) answer[key] = value;
  return answer;
}

Json failure_json(const Misbehaviour& m) {
  Json failure = Json::object();
  failure["kind"] = to_string(m.kind);
  failure["summary"] = m.summary;
  failure["detail"] = m.detail;
  return Json{{"failure", std::move(failure)}};
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

// The compact lines chunkmeta's own writers produce (result_line,
// request_line, and Python's json.dumps with compact separators): no
// whitespace, plain integers, plain strings, each key at most once, in any
// order. Anything else (including what it could read but would rather not,
// such as -0 or a leading zero) is left to the DOM, which is the definition
// this is fuzzed against.
class CompactLine {
 public:
  explicit CompactLine(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  std::optional<ResultLine> read_result(const Spec& spec) {
    ResultLine line;
    const auto outputs = spec.outputs();
    line.arrays.resize(outputs.size());
    unsigned seen = 0;
    const unsigned all = (1u << outputs.size()) - 1;
    const bool read = read_object([&](std::string_view key) -> unsigned {
      if (key == "id") return read_id(line.id) ? kIdBit : 0;
      for (std::size_t a = 0; a < outputs.size(); ++a) {
        if (key != outputs[a].name) continue;
        return read_array(line.arrays[a], outputs[a].columns) ? 1u << a : 0;
      }
      return 0;
    }, seen);
    if (!read || (seen & all) != all) return std::nullopt;
    return line;
  }

  // A request with an unsigned id (or none), an optional spec, and that
  // spec's keys: its scalars as integers, its arrays as arrays.
  std::optional<Request> read_request() {
    std::optional<std::uint64_t> id;
    std::string_view spec_name;
    std::string_view dtype_name;
    struct Given {
      std::string_view key;
      bool array = false;
      std::int64_t scalar = 0;
      std::vector<std::int64_t> values;
    };
    std::vector<Given> given;
    unsigned seen = 0;
    const bool read = read_object([&](std::string_view key) -> unsigned {
      if (key == "id") return read_id(id) ? kIdBit : 0;
      if (key == "spec") return read_plain_string(spec_name) ? kSpecBit : 0;
      if (key == "dtype") return read_plain_string(dtype_name) ? kDtypeBit : 0;
      if (given.size() == kMostInputs) return 0;
      for (const auto& earlier : given) {
        if (earlier.key == key) return 0;
      }
      Given& field = given.emplace_back();
      field.key = key;
      field.array = p_ != end_ && *p_ == '[';
      const bool ok = field.array ? read_array(field.values) : read_integer(field.scalar);
      return ok ? kInputBit << (given.size() - 1) : 0;
    }, seen);
    if (!read) return std::nullopt;
    const Spec* spec = (seen & kSpecBit) != 0 ? find_spec(spec_name) : &default_spec();
    if (spec == nullptr) return std::nullopt;
    if ((seen & kDtypeBit) != 0 && !spec->reads_dtype()) return std::nullopt;
    // Exactly the spec's keys, each of its kind (dtype optional), else the DOM words the error.
    const auto sent = sent_inputs(*spec);
    if (given.size() != sent.size()) return std::nullopt;
    Workload workload;
    for (auto& field : given) {
      const auto input = std::find_if(sent.begin(), sent.end(), [&](const Input* in) { return in->name == field.key; });
      if (input == sent.end() || field.array != is_array((*input)->slot)) return std::nullopt;
      if (field.array) {
        array_in(workload, (*input)->slot) = std::move(field.values);
      } else {
        scalar_in(workload, (*input)->slot) = field.scalar;
      }
    }
    if ((seen & kDtypeBit) != 0) {
      const auto dtype = parse_dtype(dtype_name);
      if (!dtype) return std::nullopt;
      workload.dtype = *dtype;
    }
    spec->fill_unread_rows(workload);
    return Request{id ? Json(*id) : Json(nullptr), spec, std::move(workload)};
  }

 private:
  static constexpr unsigned kIdBit = 1u << 8;
  static constexpr unsigned kSpecBit = 1u << 9;
  static constexpr unsigned kDtypeBit = 1u << 10;
  static constexpr unsigned kInputBit = 1u << 11;  // the first input's; the next ones above it
  static constexpr std::size_t kMostInputs = 8;

  // {"key":value,...} with each key at most once: `read_value` reads the value
  // of `key` and returns its bit, or 0 for an unknown key or a value it cannot
  // read. True when the object ends the text; `seen` holds the keys' bits.
  template <typename ReadValue>
  bool read_object(ReadValue read_value, unsigned& seen) {
    if (!take('{')) return false;
    for (bool first = true; !take('}'); first = false) {
      if (!first && !take(',')) return false;
      const unsigned bit = read_value(read_key());
      if (bit == 0 || (seen & bit) != 0) return false;
      seen |= bit;
    }
    return p_ == end_;
  }
  bool read_id(std::optional<std::uint64_t>& id) {
    std::uint64_t value = 0;
    if (!read_unsigned(value)) return false;
    id = value;
    return true;
  }
  bool take(char c) {
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }
  // A string of printable ASCII without escapes.
  bool read_plain_string(std::string_view& text) {
    if (!take('"')) return false;
    const char* start = p_;
    while (p_ != end_ && *p_ != '"' && *p_ != '\\' && static_cast<unsigned char>(*p_) >= 0x20 &&
           static_cast<unsigned char>(*p_) < 0x7f)
      ++p_;
    text = std::string_view(start, static_cast<std::size_t>(p_ - start));
    return take('"');
  }
  std::string_view read_key() {
    std::string_view key;
    if (!read_plain_string(key) || !take(':')) return {};
    return key;
  }
  // Digits without a leading zero (a lone 0 is fine).
  bool plain_digits(const char* start, const char* stop) const {
    return stop > start && (*start != '0' || stop - start == 1);
  }
  bool read_unsigned(std::uint64_t& value) {
    const auto [next, error] = std::from_chars(p_, end_, value);
    if (error != std::errc() || !plain_digits(p_, next)) return false;
    if (next != end_ && (*next == '.' || *next == 'e' || *next == 'E')) return false;
    p_ = next;
    return true;
  }
  // An integer that fits Int, as a plain literal (no -0, no fraction or exponent).
  template <typename Int>
  bool read_integer(Int& value) {
    const bool negative = p_ != end_ && *p_ == '-';
    const auto [next, error] = std::from_chars(p_, end_, value);
    if (error != std::errc() || !plain_digits(p_ + (negative ? 1 : 0), next) || (negative && value == 0)) return false;
    if (next != end_ && (*next == '.' || *next == 'e' || *next == 'E')) return false;
    p_ = next;
    return true;
  }
  // [v, ...], or with two columns [[a, b], ...].
  template <typename Int, typename Allocator>
  bool read_array(std::vector<Int, Allocator>& values, int columns = 1) {
    values.clear();  // a default Workload is not empty
    if (!take('[')) return false;
    if (take(']')) return true;
    do {
      if (columns == 2 && !take('[')) return false;
      for (int c = 0; c < columns; ++c) {
        if (c > 0 && !take(',')) return false;
        Int value = 0;
        if (!read_integer(value)) return false;
        values.push_back(value);
      }
      if (columns == 2 && !take(']')) return false;
    } while (take(','));
    return take(']');
  }

  const char* p_;
  const char* end_;
};

Request parse_request_dom(std::string_view line) {
  auto value = parse_json_line(line);
  if (auto* bad = std::get_if<InputError>(&value)) return {Json(nullptr), nullptr, std::move(*bad)};
  Json& object = std::get<Json>(value);
  Json id = nullptr;
  if (object.is_object() && object.contains("id")) {
    // Echoed as it is, so only what the protocol allows: an unsigned integer.
    if (!object["id"].is_number_unsigned())
      return {Json(nullptr), nullptr,
              input_error("wrong_type", "id", Error::kNoIndex, "id must be an unsigned integer, not " + type_name(object["id"]))};
    id = object["id"];
    object.erase("id");
  }
  auto parsed = parse_workload(object);
  if (auto* bad = std::get_if<InputError>(&parsed)) return {std::move(id), nullptr, std::move(*bad)};
  auto& read = std::get<SpecWorkload>(parsed);
  return {std::move(id), read.spec, std::move(read.workload)};
}

Request parse_request_line(std::string_view line) {
  // The harness's own lines, without a DOM (a request can hold 100,000 rows).
  if (auto compact = CompactLine(line).read_request()) return std::move(*compact);
  return parse_request_dom(line);
}

std::optional<ResultLine> parse_result_line(const Spec& spec, std::string_view line) {
  return CompactLine(line).read_result(spec);
}

namespace {

// The header's id (if an unsigned one) and its counts; nullopt if `line` is no header.
struct Int32leHeader {
  std::optional<std::uint64_t> id;
  std::vector<std::size_t> counts;
};

std::optional<Int32leHeader> read_int32le_header(std::string_view line) {
  // A header is short; a long line (a JSON result) is not parsed twice.
  constexpr std::size_t kLongestHeader = 256;
  if (line.size() > kLongestHeader || line.find("\"int32le\"") == std::string_view::npos) return std::nullopt;
  const Json value = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!value.is_object() || value.size() > 2 || !value.contains(kInt32le)) return std::nullopt;
  const Json& counts = value[std::string(kInt32le)];
  constexpr std::size_t kMostArrays = 16;  // a spec's outputs; a header of more is no header
  if (!counts.is_array() || counts.empty() || counts.size() > kMostArrays) return std::nullopt;
  Int32leHeader header;
  for (const Json& count : counts) {
    if (!count.is_number_unsigned() || count.get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxValue))
      return std::nullopt;
    header.counts.push_back(count.get<std::size_t>());
  }
  if (value.size() == 2) {
    if (!value.contains("id") || !value["id"].is_number_unsigned()) return std::nullopt;
    header.id = value["id"].get<std::uint64_t>();
  }
  return header;
}

std::size_t payload_bytes(const Int32leHeader& header) {
  std::size_t entries = 0;
  for (auto count : header.counts) entries += count;
  return 4 * entries;
}

}  // namespace

std::optional<std::size_t> int32le_payload_bytes(std::string_view line) {
  const auto header = read_int32le_header(line);
  if (!header) return std::nullopt;
  return payload_bytes(*header);
}

std::optional<ResultLine> parse_int32le_answer(const Spec& spec, std::string_view header_line, std::string_view payload) {
  const auto header = read_int32le_header(header_line);
  const auto outputs = spec.outputs();
  if (!header || header->counts.size() != outputs.size() || payload.size() != payload_bytes(*header)) return std::nullopt;
  ResultLine line;
  line.id = header->id;
  line.arrays.resize(outputs.size());
  const char* at = payload.data();
  for (std::size_t a = 0; a < outputs.size(); ++a) {
    if (header->counts[a] % static_cast<std::size_t>(outputs[a].columns) != 0) return std::nullopt;
    auto& values = line.arrays[a];
    values.resize(header->counts[a]);
    if (values.empty()) continue;  // memcpy is not given the null pointers of empty arrays
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(values.data(), at, 4 * values.size());
      at += 4 * values.size();
    } else {
      for (auto& v : values) {
        std::uint32_t u = 0;
        for (int b = 0; b < 4; ++b) u |= static_cast<std::uint32_t>(static_cast<unsigned char>(*at++)) << (8 * b);
        v = static_cast<std::int32_t>(u);
      }
    }
  }
  return line;
}

std::string int32le_answer(const Json& id, const Arrays& arrays) {
  std::string out = "{";
  if (!id.is_null()) {
    out += "\"id\":";
    out += dump_line(id);
    out += ',';
  }
  out += "\"int32le\":[";
  for (std::size_t a = 0; a < arrays.size(); ++a) {
    if (a > 0) out += ',';
    out += std::to_string(arrays[a].size());
  }
  out += "]}\n";
  for (const auto& values : arrays) {
    if constexpr (std::endian::native == std::endian::little) {
      out.append(reinterpret_cast<const char*>(values.data()), 4 * values.size());
    } else {
      for (std::int32_t v : values) {
        for (int b = 0; b < 4; ++b) out += static_cast<char>((static_cast<std::uint32_t>(v) >> (8 * b)) & 0xff);
      }
    }
  }
  return out;
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
