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

constexpr std::array<std::string_view, 3> kWorkloadKeys = {"chunk_size", "num_computed_tokens", "query_start_loc"};
constexpr std::array<std::string_view, 6> kKnownFields = {"chunk_size",      "num_computed_tokens",
                                                          "query_start_loc", "cu_chunk_seqlen",
                                                          "seq_idx",         "last_chunk_indices"};

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

}  // namespace

Json to_json(const Workload& workload) {
  Json j = Json::object();
  j["chunk_size"] = workload.chunk_size;
  j["num_computed_tokens"] = workload.num_computed_tokens;
  j["query_start_loc"] = workload.query_start_loc;
  return j;
}

Json to_json(const ChunkMetadata& result) {
  Json j = Json::object();
  j["cu_chunk_seqlen"] = result.cu_chunk_seqlen;
  j["seq_idx"] = result.seq_idx;
  j["last_chunk_indices"] = result.last_chunk_indices;
  return j;
}

Json to_json(const Outcome& outcome) { return outcome.ok() ? to_json(outcome.value()) : error_json(outcome.error()); }

Json error_json(const Error& error) {
  return error_object(to_string(error.code), error.field, error.index, error.message());
}

Json error_json(const InputError& error) { return error_object(error.code, error.field, error.index, error.message); }

std::string dump_line(const Json& value) { return value.dump(-1, ' ', false, Json::error_handler_t::replace); }

namespace {

// Appends "name":[v0,v1,...] (with a leading comma unless first).
template <typename Int, typename Allocator>
void append_array(std::string& out, std::string_view name, const std::vector<Int, Allocator>& values,
                  bool first = false) {
  if (!first) out += ',';
  out += '"';
  out += name;
  out += "\":[";
  char digits[24];
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    const auto end = std::to_chars(digits, digits + sizeof digits, values[i]).ptr;
    out.append(digits, end);
  }
  out += ']';
}

}  // namespace

std::string result_line(const Json& id, const ChunkMetadata& result) {
  std::string out;
  out.reserve(64 + 12 * (result.cu_chunk_seqlen.size() + result.seq_idx.size() + result.last_chunk_indices.size()));
  out += '{';
  if (!id.is_null()) out += "\"id\":" + dump_line(id) + ',';
  append_array(out, "cu_chunk_seqlen", result.cu_chunk_seqlen, true);
  append_array(out, "seq_idx", result.seq_idx);
  append_array(out, "last_chunk_indices", result.last_chunk_indices);
  out += '}';
  return out;
}

std::string request_line(std::uint64_t id, const Workload& workload) {
  std::string out;
  out.reserve(64 + 12 * (workload.num_computed_tokens.size() + workload.query_start_loc.size()));
  out += "{\"id\":" + std::to_string(id) + ",\"chunk_size\":" + std::to_string(workload.chunk_size);
  append_array(out, "num_computed_tokens", workload.num_computed_tokens);
  append_array(out, "query_start_loc", workload.query_start_loc);
  out += '}';
  return out;
}

std::variant<Workload, InputError> parse_workload(const Json& value) {
  if (!value.is_object())
    return input_error("wrong_type", "", Error::kNoIndex, "a workload must be a JSON object, not " + type_name(value));
  for (const auto& [key, unused] : value.items()) {
    bool known = false;
    for (auto name : kWorkloadKeys) known = known || key == name;
    if (!known)
      return input_error("unknown_key", key, Error::kNoIndex,
                         "unknown key \"" + key + "\"; a workload has chunk_size, num_computed_tokens, query_start_loc");
  }
  for (auto name : kWorkloadKeys) {
    if (!value.contains(name))
      return input_error("missing_key", std::string(name), Error::kNoIndex, "the key \"" + std::string(name) + "\" is missing");
  }
  Workload workload;
  auto chunk = read_integer(value["chunk_size"], "chunk_size", Error::kNoIndex);
  if (auto* bad = std::get_if<InputError>(&chunk)) return std::move(*bad);
  workload.chunk_size = std::get<std::int64_t>(chunk);
  auto computed = read_array(value["num_computed_tokens"], "num_computed_tokens");
  if (auto* bad = std::get_if<InputError>(&computed)) return std::move(*bad);
  workload.num_computed_tokens = std::move(std::get<0>(computed));
  auto starts = read_array(value["query_start_loc"], "query_start_loc");
  if (auto* bad = std::get_if<InputError>(&starts)) return std::move(*bad);
  workload.query_start_loc = std::move(std::get<0>(starts));
  return workload;
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

std::variant<Workload, InputError> parse_workload_line(std::string_view line) {
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
  for (auto field : kKnownFields) {
    if (name == field) return field;
  }
  return std::nullopt;
}

namespace {

// SAX events of one result line; returning false stops the parse (the line is
// then not one this fast path reads).
class ResultLineReader final : public nlohmann::json_sax<Json> {
 public:
  ResultLine line;

  bool complete() const { return seen_ == 0b111 && depth_ == 0; }

  bool null() override { return false; }
  bool boolean(bool) override { return false; }
  bool number_integer(number_integer_t value) override { return add(value); }
  bool number_unsigned(number_unsigned_t value) override {
    if (depth_ == 1 && key_ == Key::id && !line.id) {
      line.id = value;
      key_ = Key::none;
      return true;
    }
    return value <= static_cast<number_unsigned_t>(std::numeric_limits<std::int32_t>::max()) &&
           add(static_cast<number_integer_t>(value));
  }
  bool number_float(number_float_t, const string_t&) override { return false; }
  bool string(string_t&) override { return false; }
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t) override { return depth_++ == 0; }
  bool end_object() override { return --depth_ == 0; }
  bool start_array(std::size_t) override {
    if (depth_ != 1 || target_ == nullptr) return false;
    ++depth_;
    return true;
  }
  bool end_array() override {
    --depth_;
    target_ = nullptr;
    key_ = Key::none;
    return true;
  }
  bool key(string_t& name) override {
    static constexpr std::array<std::string_view, 3> arrays = {"cu_chunk_seqlen", "seq_idx", "last_chunk_indices"};
    Int32Array* targets[3] = {&line.result.cu_chunk_seqlen, &line.result.seq_idx,
                                             &line.result.last_chunk_indices};
    if (name == "id") {
      key_ = Key::id;
      return !line.id;
    }
    for (std::size_t i = 0; i < arrays.size(); ++i) {
      if (name != arrays[i]) continue;
      if (seen_ & (1u << i)) return false;  // repeated: the DOM keeps the last, leave it to the DOM
      seen_ |= 1u << i;
      target_ = targets[i];
      target_->clear();  // ChunkMetadata starts with cu_chunk_seqlen = {0}
      key_ = Key::array;
      return true;
    }
    return false;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  enum class Key { none, id, array };
  bool add(number_integer_t value) {
    if (depth_ != 2 || target_ == nullptr) return false;
    if (value < std::numeric_limits<std::int32_t>::min() || value > std::numeric_limits<std::int32_t>::max())
      return false;
    target_->push_back(static_cast<std::int32_t>(value));
    return true;
  }
  int depth_ = 0;
  unsigned seen_ = 0;
  Key key_ = Key::none;
  Int32Array* target_ = nullptr;
};

}  // namespace

// The compact lines chunkmeta's own writers produce (result_line,
// request_line): no whitespace, plain integers, each key at most once, in any
// order. Anything else (including what it could read but would rather not,
// such as -0 or a leading zero) is left to the DOM or SAX readers, which are
// the reference this is tested against.
class CompactLine {
 public:
  explicit CompactLine(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  std::optional<ResultLine> read_result() {
    ResultLine line;
    const bool read = read_object([&](std::string_view key) -> unsigned {
      if (key == "id") return read_id(line.id) ? kIdBit : 0;
      if (key == "cu_chunk_seqlen") return read_array(line.result.cu_chunk_seqlen) ? 1 : 0;
      if (key == "seq_idx") return read_array(line.result.seq_idx) ? 2 : 0;
      if (key == "last_chunk_indices") return read_array(line.result.last_chunk_indices) ? 4 : 0;
      return 0;
    });
    if (!read) return std::nullopt;
    return line;
  }

  // A request with an unsigned id (or none) and the three workload keys.
  std::optional<Request> read_request() {
    std::optional<std::uint64_t> id;
    Workload workload;
    const bool read = read_object([&](std::string_view key) -> unsigned {
      if (key == "id") return read_id(id) ? kIdBit : 0;
      if (key == "chunk_size") return read_integer(workload.chunk_size) ? 1 : 0;
      if (key == "num_computed_tokens") return read_array(workload.num_computed_tokens) ? 2 : 0;
      if (key == "query_start_loc") return read_array(workload.query_start_loc) ? 4 : 0;
      return 0;
    });
    if (!read) return std::nullopt;
    return Request{id ? Json(*id) : Json(nullptr), std::move(workload)};
  }

 private:
  static constexpr unsigned kIdBit = 8;  // the optional key; bits 1, 2 and 4 are the three required ones

  // {"key":value,...} with each key at most once: `read_value` reads the value
  // of `key` and returns its bit, or 0 for an unknown key or a value it cannot
  // read. True when the object ends the text and holds the three required keys.
  template <typename ReadValue>
  bool read_object(ReadValue read_value) {
    unsigned seen = 0;
    if (!take('{')) return false;
    for (bool first = true; !take('}'); first = false) {
      if (!first && !take(',')) return false;
      const unsigned bit = read_value(read_key());
      if (bit == 0 || (seen & bit) != 0) return false;
      seen |= bit;
    }
    return p_ == end_ && (seen & 7) == 7;
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
  std::string_view read_key() {
    if (!take('"')) return {};
    const char* start = p_;
    while (p_ != end_ && *p_ != '"' && *p_ != '\\') ++p_;
    const std::string_view key(start, static_cast<std::size_t>(p_ - start));
    if (!take('"') || !take(':')) return {};
    return key;
  }
  // Digits without a leading zero (a lone 0 is fine).
  bool plain_digits(const char* start, const char* stop) const {
    return stop > start && (*start != '0' || stop - start == 1);
  }
  bool read_unsigned(std::uint64_t& value) {
    const auto [next, error] = std::from_chars(p_, end_, value);
    if (error != std::errc() || !plain_digits(p_, next)) return false;
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
  template <typename Int, typename Allocator>
  bool read_array(std::vector<Int, Allocator>& values) {
    values.clear();  // a default ChunkMetadata or Workload is not empty
    if (!take('[')) return false;
    if (take(']')) return true;
    do {
      Int value = 0;
      if (!read_integer(value)) return false;
      values.push_back(value);
    } while (take(','));
    return take(']');
  }

  const char* p_;
  const char* end_;
};

Request parse_request_dom(std::string_view line) {
  auto value = parse_json_line(line);
  if (auto* bad = std::get_if<InputError>(&value)) return {Json(nullptr), std::move(*bad)};
  Json& object = std::get<Json>(value);
  Json id = nullptr;
  if (object.is_object() && object.contains("id")) {
    // Echoed as it is, so only what the protocol allows: an unsigned integer.
    if (!object["id"].is_number_unsigned())
      return {Json(nullptr), input_error("wrong_type", "id", Error::kNoIndex,
                                         "id must be an unsigned integer, not " + type_name(object["id"]))};
    id = object["id"];
    object.erase("id");
  }
  return {std::move(id), parse_workload(object)};
}

Request parse_request_line(std::string_view line) {
  // The harness's own lines, without a DOM (a request can hold 100,000 rows).
  if (auto compact = CompactLine(line).read_request()) return std::move(*compact);
  return parse_request_dom(line);
}

std::optional<ResultLine> parse_result_line(std::string_view line) {
  if (auto compact = CompactLine(line).read_result()) return compact;
  ResultLineReader reader;
  if (!Json::sax_parse(line, &reader) || !reader.complete()) return std::nullopt;
  return std::move(reader.line);
}

namespace {

// The header's id (if an unsigned one) and its three counts; nullopt if `line` is no header.
struct Int32leHeader {
  std::optional<std::uint64_t> id;
  std::size_t counts[3] = {0, 0, 0};
};

std::optional<Int32leHeader> read_int32le_header(std::string_view line) {
  // A header is short; a long line (a JSON result) is not parsed twice.
  constexpr std::size_t kLongestHeader = 256;
  if (line.size() > kLongestHeader || line.find("\"int32le\"") == std::string_view::npos) return std::nullopt;
  const Json value = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!value.is_object() || value.size() > 2 || !value.contains(kInt32le)) return std::nullopt;
  const Json& counts = value[std::string(kInt32le)];
  if (!counts.is_array() || counts.size() != 3) return std::nullopt;
  Int32leHeader header;
  for (std::size_t i = 0; i < 3; ++i) {
    if (!counts[i].is_number_unsigned() || counts[i].get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxValue))
      return std::nullopt;
    header.counts[i] = counts[i].get<std::size_t>();
  }
  if (value.size() == 2) {
    if (!value.contains("id") || !value["id"].is_number_unsigned()) return std::nullopt;
    header.id = value["id"].get<std::uint64_t>();
  }
  return header;
}

}  // namespace

std::optional<std::size_t> int32le_payload_bytes(std::string_view line) {
  const auto header = read_int32le_header(line);
  if (!header) return std::nullopt;
  return 4 * (header->counts[0] + header->counts[1] + header->counts[2]);
}

std::optional<ResultLine> parse_int32le_answer(std::string_view header_line, std::string_view payload) {
  const auto header = read_int32le_header(header_line);
  if (!header || payload.size() != 4 * (header->counts[0] + header->counts[1] + header->counts[2])) return std::nullopt;
  ResultLine line;
  line.id = header->id;
  Int32Array* targets[3] = {&line.result.cu_chunk_seqlen, &line.result.seq_idx,
                                           &line.result.last_chunk_indices};
  const char* at = payload.data();
  for (std::size_t a = 0; a < 3; ++a) {
    auto& values = *targets[a];
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

std::string int32le_answer(const Json& id, const ChunkMetadata& result) {
  const Int32Array* arrays[3] = {&result.cu_chunk_seqlen, &result.seq_idx, &result.last_chunk_indices};
  std::string out = "{";
  if (!id.is_null()) {
    out += "\"id\":";
    out += dump_line(id);
    out += ',';
  }
  out += "\"int32le\":[";
  for (std::size_t a = 0; a < 3; ++a) {
    if (a > 0) out += ',';
    out += std::to_string(arrays[a]->size());
  }
  out += "]}\n";
  for (const auto* values : arrays) {
    if constexpr (std::endian::native == std::endian::little) {
      out.append(reinterpret_cast<const char*>(values->data()), 4 * values->size());
    } else {
      for (std::int32_t v : *values) {
        for (int b = 0; b < 4; ++b) out += static_cast<char>((static_cast<std::uint32_t>(v) >> (8 * b)) & 0xff);
      }
    }
  }
  return out;
}

std::optional<Outcome> parse_outcome(const Json& value) {
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
  const auto int32_array = [&](std::string_view key) -> std::optional<Int32Array> {
    if (!value.contains(key)) return std::nullopt;
    auto wide = read_array(value[key], key);
    if (std::holds_alternative<InputError>(wide)) return std::nullopt;
    Int32Array narrow;
    for (auto v : std::get<0>(wide)) {
      if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max()) return std::nullopt;
      narrow.push_back(static_cast<std::int32_t>(v));
    }
    return narrow;
  };
  auto cu = int32_array("cu_chunk_seqlen");
  auto seq = int32_array("seq_idx");
  auto last = int32_array("last_chunk_indices");
  if (!cu || !seq || !last) return std::nullopt;
  ChunkMetadata result{std::move(*cu), std::move(*seq), std::move(*last)};
  return Outcome(std::move(result));
}

}  // namespace chunkmeta::harness
