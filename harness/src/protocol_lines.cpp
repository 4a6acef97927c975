// The protocol's lines: requests and answers as JSON Lines (strict: a NUL, a
// byte-order mark or a repeated key is refused), the compact reader of the
// lines chunkmeta's own writers produce, and the int32le binary answer.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "chunkmeta/harness/json.hpp"
#include "json_values.hpp"

namespace chunkmeta::harness {

using wire::input_error;
using wire::named_on_the_wire;
using wire::sent_inputs;
using wire::type_name;

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
      append_array(out, input->name, array_in(workload, input->slot, input->index));
      continue;
    }
    out += ",\"";
    out += input->name;
    out += "\":";
    if (is_flag(input->slot)) {
      out += flag_in(workload, input->slot, input->index) ? "true" : "false";
    } else if (is_optional(input->slot)) {
      const auto value = optional_in(workload, input->slot, input->index);
      out += value ? std::to_string(*value) : "null";
    } else {
      out += std::to_string(scalar_in(workload, input->slot, input->index));
    }
  }
  if (spec.reads_dtype() && workload.dtype == Dtype::int64) out += ",\"dtype\":\"int64\"";
  out += '}';
  return out;
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

namespace {

std::string why_not_json(std::string_view text) {
  FirstParseError first;
  Json::sax_parse(text, &first);
  return first.message;
}

// One protocol line as JSON text, strictly: besides what the parser refuses,
// a NUL byte (the parser would end the text there), a leading byte-order mark
// (the parser would skip it) and a key repeated in one object, at any depth
// (the parser would keep the last value), are refused rather than read.
std::variant<Json, InputError> parse_json_line(std::string_view line) {
  if (const auto nul = line.find('\0'); nul != std::string_view::npos)
    return input_error("malformed_json", "", Error::kNoIndex,
                       "a NUL byte at byte " + std::to_string(nul) + "; a line must be JSON text only");
  if (line.starts_with("\xEF\xBB\xBF"))
    return input_error("malformed_json", "", Error::kNoIndex, "the line starts with a byte-order mark; JSON Lines are UTF-8 without one");
  if (nests_deeper_than(line))
    return input_error("malformed_json", "", Error::kNoIndex,
                       "arrays or objects nested more than " + std::to_string(kMaxJsonDepth) + " deep");
  std::optional<std::string> repeated;
  // Without exceptions: a line that is not JSON is common (fuzzing, a confused
  // program), and a throw costs more than parsing it twice.
  Json value = wire::parse_noting_repeated_key(line, repeated);
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
      enum class Kind { integer, array, null, boolean } kind = Kind::integer;
      std::int64_t scalar = 0;  // the integer, or the boolean as 0/1
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
      bool ok = false;
      if (p_ != end_ && *p_ == '[') {
        field.kind = Given::Kind::array;
        ok = read_array(field.values);
      } else if (take_literal("null")) {
        field.kind = Given::Kind::null;
        ok = true;
      } else if (const auto boolean = take_boolean()) {
        field.kind = Given::Kind::boolean;
        field.scalar = *boolean ? 1 : 0;
        ok = true;
      } else {
        ok = read_integer(field.scalar);
      }
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
      if (input == sent.end()) return std::nullopt;
      const Slot slot = (*input)->slot;
      const std::size_t index = (*input)->index;
      using Kind = Given::Kind;
      // Each key of its kind: an array, a boolean flag, an integer or null for an optional scalar, else an integer.
      const bool fits = is_array(slot)      ? field.kind == Kind::array
                        : is_flag(slot)     ? field.kind == Kind::boolean
                        : is_optional(slot) ? field.kind == Kind::integer || field.kind == Kind::null
                                            : field.kind == Kind::integer;
      if (!fits) return std::nullopt;
      if (is_array(slot)) {
        array_in(workload, slot, index) = std::move(field.values);
      } else if (is_flag(slot)) {
        set_flag(workload, slot, index, field.scalar != 0);
      } else if (is_optional(slot)) {
        if (field.kind == Kind::integer) optional_in(workload, slot, index) = field.scalar;
      } else {
        scalar_in(workload, slot, index) = field.scalar;
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
  static constexpr std::size_t kMostInputs = 16;  // bits 11 to 26; a spec with more goes through the DOM

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
  bool take_literal(std::string_view literal) {
    if (static_cast<std::size_t>(end_ - p_) < literal.size() || std::string_view(p_, literal.size()) != literal) return false;
    p_ += literal.size();
    return true;
  }
  std::optional<bool> take_boolean() {
    if (take_literal("true")) return true;
    if (take_literal("false")) return false;
    return std::nullopt;
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

}  // namespace chunkmeta::harness
