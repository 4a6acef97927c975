// The DOM-free readers and writers of protocol lines against their
// definition, the DOM (Json::parse + parse_outcome / parse_request_dom), for
// every spec: wherever a fast reader accepts a line, both give the same
// result and the same id; every line a fast writer writes is the DOM's.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "chunkmeta/harness/answer_stream.hpp"
#include "chunkmeta/harness/json.hpp"
#include "fla/fla_spec.hpp"
#include "mamba/mamba_spec.hpp"

namespace chunkmeta {
namespace {

using harness::Arrays;
using harness::Json;
using harness::Workload;

// Random outputs of `spec`'s shapes (a 2-column array gets whole rows).
Arrays random_arrays(const harness::Spec& spec, std::mt19937_64& random, std::size_t most) {
  Arrays arrays;
  for (const auto& output : spec.outputs()) {
    Int32Array values((random() % most) / output.columns * output.columns);
    for (auto& v : values) v = static_cast<std::int32_t>(random());  // newline bytes among them too
    arrays.push_back(std::move(values));
  }
  return arrays;
}

// The DOM reading of a line: (id, outcome) or nothing.
std::optional<std::pair<std::optional<std::uint64_t>, harness::Outcome>> dom_reading(const harness::Spec& spec,
                                                                                      const std::string& line) {
  Json value;
  try {
    value = Json::parse(line);
  } catch (const Json::exception&) {
    return std::nullopt;
  }
  auto outcome = harness::parse_outcome(spec, value);
  if (!outcome) return std::nullopt;
  std::optional<std::uint64_t> id;
  if (value.is_object() && value.contains("id") && value["id"].is_number_unsigned()) id = value["id"].get<std::uint64_t>();
  return std::make_pair(id, std::move(*outcome));
}

void expect_agreement(const std::string& line, const harness::Spec& spec = harness::mamba_spec()) {
  const auto fast = harness::parse_result_line(spec, line);
  if (!fast) return;  // the caller falls back to the DOM
  const auto dom = dom_reading(spec, line);
  ASSERT_TRUE(dom.has_value()) << "fast reader accepted what the DOM reading refuses: " << line;
  EXPECT_EQ(fast->id, dom->first) << line;
  ASSERT_TRUE(dom->second.ok()) << line;
  EXPECT_EQ(fast->arrays, dom->second.value()) << line;
}

TEST(ResultLineReader, AgreesWithTheDomReadingOnEveryAnswerChunkmetaComputeWrites) {
  std::mt19937_64 random(20261202);
  for (const harness::Spec* spec : harness::all_specs()) {
    for (int i = 0; i < 2000; ++i) {
      const Arrays result = random_arrays(*spec, random, 20);
      const Json ids[] = {Json(nullptr), Json(random() >> (random() % 64)), Json("line-" + std::to_string(i)),
                          Json{{"batch", i}}};
      const Json& id = ids[i % 4];
      // compute writes answers without a DOM: byte for byte the DOM's line.
      const std::string line = harness::result_line(id, *spec, result);
      ASSERT_EQ(line, harness::dump_line(harness::answer_json(id, harness::to_json(*spec, harness::Outcome(result)))));
      expect_agreement(line, *spec);
      if (!id.is_null() && !id.is_number_unsigned()) continue;  // other ids are the DOM's to read
      const auto fast = harness::parse_result_line(*spec, line);
      ASSERT_TRUE(fast.has_value()) << line;
      EXPECT_EQ(fast->arrays, result) << line;
    }
  }
}

// A random workload as `spec` spells it: computed tokens only where it reads
// them (one per row), a dtype only where it has one.
Workload random_workload(const harness::Spec& spec, std::mt19937_64& random) {
  Workload w{static_cast<std::int64_t>(random()) >> (random() % 64), {}, {}, harness::Dtype::int32};
  w.query_start_loc.resize(random() % 21);
  for (auto& v : w.query_start_loc) v = static_cast<std::int64_t>(random()) >> (random() % 64);
  if (spec.reads(harness::Slot::per_row)) {
    w.num_computed_tokens.resize(random() % 20);
    for (auto& v : w.num_computed_tokens) v = static_cast<std::int64_t>(random()) >> (random() % 64);
  } else {
    w.num_computed_tokens.assign(w.query_start_loc.empty() ? 0 : w.query_start_loc.size() - 1, 0);
  }
  if (spec.reads_dtype() && random() % 2 == 1) w.dtype = harness::Dtype::int64;
  // Every other slot the spec reads, at values of any sign and size (none, for an optional scalar, a third of the time).
  if (spec.reads(harness::Slot::block_size)) w.block_size = static_cast<std::int64_t>(random()) >> (random() % 64);
  if (spec.reads(harness::Slot::second_per_row)) {
    w.second_per_row.resize(random() % 20);
    for (auto& v : w.second_per_row) v = static_cast<std::int64_t>(random()) >> (random() % 64);
  }
  if (spec.reads(harness::Slot::optional_scalar) && random() % 3 != 0)
    w.optional_scalar = static_cast<std::int64_t>(random()) >> (random() % 64);
  if (spec.reads(harness::Slot::flag)) w.flag = random() % 2 == 1;
  spec.fill_unread_rows(w);  // what the harness sends: the slots the spec reads
  return w;
}

TEST(RequestLine, IsTheDomsLineForEveryWorkloadTheHarnessSends) {
  std::mt19937_64 random(20261203);
  for (const harness::Spec* spec : harness::all_specs()) {
    for (int i = 0; i < 2000; ++i) {
      const Workload w = random_workload(*spec, random);
      const std::uint64_t id = random() >> (random() % 64);
      EXPECT_EQ(harness::request_line(id, *spec, w),
                harness::dump_line(harness::answer_json(Json(id), harness::to_json(*spec, w))));
    }
  }
}

// The request reader (chunkmeta compute's side) against the DOM reading that
// defines the protocol: the same id and the same workload or the same input error.
void expect_request_reading_agrees(const std::string& line) {
  const harness::Request read = harness::parse_request_line(line);
  const harness::Request dom = harness::parse_request_dom(line);
  EXPECT_EQ(read.id, dom.id) << line;
  EXPECT_EQ(read.spec, dom.spec) << line;
  ASSERT_EQ(read.workload.index(), dom.workload.index()) << line;
  if (const auto* w = std::get_if<Workload>(&read.workload)) {
    EXPECT_EQ(*w, std::get<Workload>(dom.workload)) << line;
  } else {
    EXPECT_EQ(std::get<harness::InputError>(read.workload).code, std::get<harness::InputError>(dom.workload).code) << line;
    EXPECT_EQ(std::get<harness::InputError>(read.workload).field, std::get<harness::InputError>(dom.workload).field) << line;
  }
}

TEST(RequestLineReader, ReadsEveryLineTheHarnessSendsLikeTheDom) {
  std::mt19937_64 random(20261204);
  for (const harness::Spec* spec : harness::all_specs()) {
    for (int i = 0; i < 2000; ++i) {
      const Workload w = random_workload(*spec, random);
      const std::uint64_t id = random() >> (random() % 64);
      const std::string line = harness::request_line(id, *spec, w);
      const harness::Request read = harness::parse_request_line(line);
      EXPECT_EQ(read.id, Json(id)) << line;
      EXPECT_EQ(read.spec, spec) << line;
      ASSERT_TRUE(std::holds_alternative<Workload>(read.workload)) << line;
      EXPECT_EQ(std::get<Workload>(read.workload), w) << line;
      expect_request_reading_agrees(line);
    }
  }
}

TEST(RequestLineReader, LeavesEveryUnusualLineToTheDomOrAgreesWithIt) {
  for (const std::string line : {
           R"({"chunk_size":8,"num_computed_tokens":[0],"query_start_loc":[0,5]})",
           R"({"query_start_loc":[0,5],"id":3,"num_computed_tokens":[0],"chunk_size":8})",
           R"({"id":3,"chunk_size":-0,"num_computed_tokens":[0],"query_start_loc":[0,5]})",
           R"({"id":3,"chunk_size":08,"num_computed_tokens":[0],"query_start_loc":[0,5]})",
           R"({"id":3,"chunk_size":8.0,"num_computed_tokens":[0],"query_start_loc":[0,5]})",
           R"({"id":3,"chunk_size":8e0,"num_computed_tokens":[0],"query_start_loc":[0,5]})",
           R"({"id":3,"chunk_size":9223372036854775808,"num_computed_tokens":[0],"query_start_loc":[0,5]})",
           R"({"id":3,"chunk_size":-9223372036854775809,"num_computed_tokens":[0],"query_start_loc":[0,5]})",
           R"({"id":3,"chunk_size":8,"num_computed_tokens":[0],"query_start_loc":[0,5],"chunk_size":9})",
           R"({"id":3,"chunk_size":8,"num_computed_tokens":[0],"query_start_loc":[0,5],"extra":1})",
           R"({"id":3,"chunk_size":8,"num_computed_tokens":[0]})",
           R"({"id":"a","chunk_size":8,"num_computed_tokens":[0],"query_start_loc":[0,5]})",
           R"({"id":-3,"chunk_size":8,"num_computed_tokens":[0],"query_start_loc":[0,5]})",
           R"({"id":3, "chunk_size":8,"num_computed_tokens":[0],"query_start_loc":[0,5]})",
           R"({"id":3,"chunk_size":8,"num_computed_tokens":[0,],"query_start_loc":[0,5]})",
           R"({"id":3,"chunk_size":8,"num_computed_tokens":[0],"query_start_loc":[0,5]}x)",
           R"({"id":3,"chunk_size":8,"num_computed_tokens":[],"query_start_loc":[-7]})",
           R"({"id":3,"chunk_size":null,"num_computed_tokens":[0],"query_start_loc":[0,5]})",
           R"({"id":3,"spec":"fla.chunk_indices","chunk_size":8,"cu_seqlens":[0,5]})",
           R"({"id":3,"spec":"fla.chunk_offsets","chunk_size":8,"cu_seqlens":[0,5],"dtype":"int64"})",
           R"({"id":3,"spec":"fla.chunk_offsets","chunk_size":8,"cu_seqlens":[0,5],"dtype":"int32"})",
           R"({"id":3,"spec":"fla.chunk_offsets","chunk_size":8,"cu_seqlens":[0,5],"dtype":"float"})",
           R"({"id":3,"spec":"fla.chunk_indices","chunk_size":8,"query_start_loc":[0,5]})",
           R"({"id":3,"spec":"fla.chunk_indices","chunk_size":8,"num_computed_tokens":[0],"cu_seqlens":[0,5]})",
           R"({"id":3,"spec":"mamba","chunk_size":8,"num_computed_tokens":[0],"query_start_loc":[0,5]})",
           R"({"id":3,"spec":"mamba","chunk_size":8,"num_computed_tokens":[0],"query_start_loc":[0,5],"dtype":"int64"})",
           R"({"id":3,"spec":"gdn","chunk_size":8,"cu_seqlens":[0,5]})",
           R"({"id":3,"spec":7,"chunk_size":8,"cu_seqlens":[0,5]})",
           R"({"id":3,"cu_seqlens":[0,5],"chunk_size":8,"spec":"fla.chunk_indices"})",
           R"({"id":3,"spec":"fla.chunk_indices","spec":"fla.chunk_offsets","chunk_size":8,"cu_seqlens":[0,5]})",
       }) {
    expect_request_reading_agrees(line);
  }
}

// What a new user's 20,000 mutated request lines found accepted and echoed:
// each is now refused with an error line, naming what is wrong, and no id echoed.
TEST(RequestLineReader, RefusesWhatTheProtocolDoesNotAllowInsteadOfEchoingIt) {
  const std::string body = R"("chunk_size":8,"num_computed_tokens":[0],"query_start_loc":[0,5]})";
  struct Refused {
    std::string line;
    std::string code;
    std::string field;
  };
  const std::vector<Refused> refused = {
      {"{\"id\":3," + body + std::string(1, '\0'), "malformed_json", ""},
      {"{\"id\":3," + body.substr(0, 10) + std::string(1, '\0') + body.substr(10), "malformed_json", ""},
      {"\xEF\xBB\xBF{\"id\":3," + body, "malformed_json", ""},
      {"{\"id\":3.5," + body, "wrong_type", "id"},
      {"{\"id\":3.0," + body, "wrong_type", "id"},
      {"{\"id\":3e2," + body, "wrong_type", "id"},
      {"{\"id\":-3," + body, "wrong_type", "id"},
      {"{\"id\":-0," + body, "wrong_type", "id"},
      {"{\"id\":\"3\"," + body, "wrong_type", "id"},
      {"{\"id\":null," + body, "wrong_type", "id"},
      {"{\"id\":[3]," + body, "wrong_type", "id"},
      {"{\"id\":18446744073709551616," + body, "wrong_type", "id"},
      {"{\"id\":3,\"id\":4," + body, "duplicate_key", "id"},
      {"{\"id\":3,\"chunk_size\":9," + body, "duplicate_key", "chunk_size"},
  };
  for (const auto& [line, code, field] : refused) {
    const harness::Request read = harness::parse_request_line(line);
    EXPECT_TRUE(read.id.is_null()) << line;
    const auto* error = std::get_if<harness::InputError>(&read.workload);
    ASSERT_NE(error, nullptr) << line;
    EXPECT_EQ(error->code, code) << line;
    EXPECT_EQ(error->field, field) << line;
    EXPECT_FALSE(error->message.empty());
    expect_request_reading_agrees(line);
  }
  // Whitespace, a key order of one's own and the largest id are JSON the protocol allows.
  for (const std::string& line : {"{\"id\":3," + body, " {\"id\": 3, " + body + " ",
                                 "{\"id\":18446744073709551615," + body, "{" + body}) {
    const harness::Request read = harness::parse_request_line(line);
    EXPECT_TRUE(std::holds_alternative<Workload>(read.workload)) << line;
    expect_request_reading_agrees(line);
  }
}

TEST(ResultLineReader, LeavesEveryUnusualLineToTheDomOrAgreesWithIt) {
  const std::vector<std::string> lines = {
      R"({"cu_chunk_seqlen":[0],"seq_idx":[],"last_chunk_indices":[]})",
      R"({"seq_idx":[0],"last_chunk_indices":[0],"id":3,"cu_chunk_seqlen":[0,5]})",
      R"({"id":1,"cu_chunk_seqlen":[0],"cu_chunk_seqlen":[0,1],"seq_idx":[0],"last_chunk_indices":[0]})",
      R"({"id":-1,"cu_chunk_seqlen":[0],"seq_idx":[],"last_chunk_indices":[]})",
      R"({"id":"7","cu_chunk_seqlen":[0],"seq_idx":[],"last_chunk_indices":[]})",
      R"({"id":1,"id":2,"cu_chunk_seqlen":[0],"seq_idx":[],"last_chunk_indices":[]})",
      R"({"cu_chunk_seqlen":[0.0],"seq_idx":[],"last_chunk_indices":[]})",
      R"({"cu_chunk_seqlen":[2147483648],"seq_idx":[],"last_chunk_indices":[]})",
      R"({"cu_chunk_seqlen":[-2147483648],"seq_idx":[],"last_chunk_indices":[]})",
      R"({"cu_chunk_seqlen":[-2147483649],"seq_idx":[],"last_chunk_indices":[]})",
      R"({"cu_chunk_seqlen":[[0]],"seq_idx":[],"last_chunk_indices":[]})",
      R"({"cu_chunk_seqlen":[0],"seq_idx":[],"last_chunk_indices":[],"extra":1})",
      R"({"cu_chunk_seqlen":[0],"seq_idx":[]})",
      R"({"cu_chunk_seqlen":[0],"seq_idx":[],"last_chunk_indices":[]} trailing)",
      R"({"cu_chunk_seqlen":[0],"seq_idx":[],"last_chunk_indices":[]}{})",
      R"([{"cu_chunk_seqlen":[0],"seq_idx":[],"last_chunk_indices":[]}])",
      R"({"cu_chunk_seqlen":0,"seq_idx":[],"last_chunk_indices":[]})",
      R"({"error":{"code":"length_mismatch"},"cu_chunk_seqlen":[0],"seq_idx":[],"last_chunk_indices":[]})",
      R"({"cu_chunk_seqlen":[0],"seq_idx":[null],"last_chunk_indices":[]})",
      R"({"cu_chunk_seqlen":[0],"seq_idx":[true],"last_chunk_indices":[]})",
      R"( {"cu_chunk_seqlen" : [ 0 , 1 ] , "seq_idx":[0],"last_chunk_indices":[0]} )",
      // Numbers the compact reader leaves to the others (JSON forbids some, others it would rather not read).
      R"({"cu_chunk_seqlen":[01],"seq_idx":[],"last_chunk_indices":[]})",
      R"({"cu_chunk_seqlen":[-0],"seq_idx":[],"last_chunk_indices":[]})",
      R"({"cu_chunk_seqlen":[1e3],"seq_idx":[],"last_chunk_indices":[]})",
      R"({"id":007,"cu_chunk_seqlen":[0],"seq_idx":[],"last_chunk_indices":[]})",
      R"({"id":18446744073709551616,"cu_chunk_seqlen":[0],"seq_idx":[],"last_chunk_indices":[]})",
      R"({"cu_chunk_seqlen":[0,],"seq_idx":[],"last_chunk_indices":[]})",
      R"({"cu_chunk_seqlen":[0],"seq_idx":[],"last_chunk_indices":[],})",
  };
  for (const auto& line : lines) expect_agreement(line);
  // Shapes the fast reader must leave to the DOM.
  for (const auto& line : {lines[2], lines[3], lines[4], lines[5], lines[6], lines[7], lines[9], lines[11], lines[13],
                           lines[14], lines[17]}) {
    EXPECT_FALSE(harness::parse_result_line(harness::mamba_spec(), line).has_value()) << line;
  }
  const auto& indices = harness::fla_chunk_indices_spec();
  const std::vector<std::string> pairs = {
      R"({"chunk_indices":[]})",
      R"({"id":2,"chunk_indices":[[0,0],[0,1],[1,0]]})",
      R"({"chunk_indices":[[0,0],[0]]})",
      R"({"chunk_indices":[[0,0,0]]})",
      R"({"chunk_indices":[0,0]})",
      R"({"chunk_indices":[[0,0]],"chunk_offsets":[0,1]})",
      R"({"chunk_indices":[[0, 0]]})",
      R"({"chunk_indices":[[2147483648,0]]})",
      R"({"chunk_offsets":[0,1]})",
  };
  for (const auto& line : pairs) expect_agreement(line, indices);
  EXPECT_TRUE(harness::parse_result_line(indices, pairs[1]).has_value());
  for (std::size_t i = 2; i < pairs.size(); ++i)
    EXPECT_FALSE(harness::parse_result_line(indices, pairs[i]).has_value()) << pairs[i];
}

// The binary answer (int32le): what compute writes is read back exactly, and a
// header is told from every other line by its own shape only.
TEST(Int32leAnswer, ReadsBackEveryResultComputeWrites) {
  std::mt19937_64 random(20261204);
  for (int i = 0; i < 1500; ++i) {
    const harness::Spec& spec = *harness::all_specs()[i % 3];
    const Arrays result = random_arrays(spec, random, 40);
    const Json id = i % 5 == 0 ? Json(nullptr) : Json(random() >> (random() % 64));
    const std::string frame = harness::int32le_answer(id, result);
    const auto newline = frame.find('\n');
    const std::string_view header = std::string_view(frame).substr(0, newline);
    const auto payload_bytes = harness::int32le_payload_bytes(header);
    ASSERT_TRUE(payload_bytes.has_value()) << header;
    ASSERT_EQ(newline + 1 + *payload_bytes, frame.size());
    const auto read = harness::parse_int32le_answer(spec, header, std::string_view(frame).substr(newline + 1));
    ASSERT_TRUE(read.has_value());
    EXPECT_EQ(read->arrays, result);
    EXPECT_EQ(read->id, id.is_null() ? std::nullopt : std::optional<std::uint64_t>(id.get<std::uint64_t>()));
  }
}

TEST(Int32leAnswer, IsNotSeenInAnyOtherLine) {
  for (const std::string line : {
           R"({"id":1,"cu_chunk_seqlen":[0],"seq_idx":[],"last_chunk_indices":[]})",
           R"({"id":1,"failure":{"kind":"raised","summary":"int32le"}})",
           R"({"id":1,"int32le":[]})",                  // no counts
           R"({"id":1,"int32le":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]})",  // more counts than any spec has outputs
           R"({"id":1,"int32le":[1,2,-3]})",            // a negative count
           R"({"id":1,"int32le":[1,2,2147483648]})",    // more entries than an output can have
           R"({"id":-1,"int32le":[1,0,0]})",            // not an id the harness sends
           R"({"id":1,"int32le":[1,0,0],"seq_idx":[]})",  // another key
           R"(["int32le",1,0,0])",
           R"({"id":1,"int32le":[1,0,0])",              // not JSON
       }) {
    EXPECT_FALSE(harness::int32le_payload_bytes(line).has_value()) << line;
  }
  EXPECT_EQ(harness::int32le_payload_bytes(R"({"id":7,"int32le":[1,0,1]})"), 8u);
  EXPECT_EQ(harness::int32le_payload_bytes(R"({"int32le":[3,2,1]})"), 24u);
  // A payload of another size than the header gives is no answer, nor one of another spec's shape.
  const auto& mamba = harness::mamba_spec();
  const auto& indices = harness::fla_chunk_indices_spec();
  EXPECT_FALSE(harness::parse_int32le_answer(mamba, R"({"int32le":[1,0,1]})", std::string(7, '\0')).has_value());
  EXPECT_FALSE(harness::parse_int32le_answer(mamba, R"({"int32le":[1,0,1]})", std::string(9, '\0')).has_value());
  EXPECT_FALSE(harness::parse_int32le_answer(mamba, R"({"int32le":[2]})", std::string(8, '\0')).has_value());
  EXPECT_FALSE(harness::parse_int32le_answer(indices, R"({"int32le":[1,0,1]})", std::string(8, '\0')).has_value());
  EXPECT_FALSE(harness::parse_int32le_answer(indices, R"({"int32le":[3]})", std::string(12, '\0')).has_value());
  EXPECT_TRUE(harness::parse_int32le_answer(indices, R"({"int32le":[2]})", std::string(8, '\0')).has_value());
}

// An integer no int64 holds, in any integer a request line carries for any
// spec, is named out of range with the caller's digits (or "about" the double
// the parser kept beyond uint64), never as a value clamped to int64.
TEST(RequestLineReader, NamesAnIntegerBeyondInt64AsOutOfRangeNeverAsAClampedValue) {
  std::mt19937_64 random(20261207);
  const std::vector<std::string> beyond = {"9223372036854775808", "18446744073709551616", "-9223372036854775809",
                                           "1000000000000000000000000000000"};
  for (const harness::Spec* spec : harness::all_specs()) {
    const Json line = Json::parse(harness::request_line(1, *spec, random_workload(*spec, random)));
    for (const auto& [key, value] : line.items()) {
      const bool entries = value.is_array() && !value.empty() && value.back().is_number_integer();
      if (key == "id" || !(value.is_number_integer() || entries)) continue;
      Json placed = line;
      (entries ? placed[key].back() : placed[key]) = "HUGE";
      const std::string text = placed.dump();
      for (const std::string& literal : beyond) {
        std::string huge = text;
        huge.replace(huge.find("\"HUGE\""), 6, literal);
        const harness::Request read = harness::parse_request_line(huge);
        ASSERT_TRUE(std::holds_alternative<harness::InputError>(read.workload)) << huge;
        const auto& error = std::get<harness::InputError>(read.workload);
        EXPECT_EQ(error.code, literal[0] == '-' ? "negative_value" : "value_too_large") << huge;
        EXPECT_EQ(error.field, key) << huge;
        EXPECT_EQ(error.index, entries ? static_cast<std::int64_t>(value.size()) - 1 : Error::kNoIndex) << huge;
        EXPECT_NE(error.message.find("out of range: it does not fit in int64"), std::string::npos) << error.message;
        EXPECT_TRUE(error.message.find(" is " + literal + ",") != std::string::npos ||
                    error.message.find(" is about ") != std::string::npos)
            << error.message;
        EXPECT_EQ(error.message.find("9223372036854775807"), std::string::npos) << error.message;
      }
    }
  }
}

// A failure line names its misbehaviour: every kind `chunkmeta compute` writes
// (failure_json) is read back as itself (an input changed in place too), a kind
// that is no misbehaviour as `raised`.
TEST(FailureLine, IsReadBackAsTheMisbehaviourItNamesForEveryKind) {
  int kinds = 0;
  for (int k = 0; harness::to_string(static_cast<harness::FindingKind>(k)) != "unknown"; ++k, ++kinds) {
    const auto kind = static_cast<harness::FindingKind>(k);
    const harness::Misbehaviour sent{kind, "its summary: " + std::string(harness::to_string(kind)), "its detail"};
    const std::string line = harness::dump_line(harness::answer_json(Json(7), harness::failure_json(sent))) + "\n";
    harness::AnswerDecoder decoder(harness::mamba_spec());
    decoder.begin_batch(7);
    std::vector<harness::Answer> answers;
    ASSERT_FALSE(decoder.take(line, 1, 1, answers).has_value()) << line;
    ASSERT_EQ(answers.size(), 1u) << line;
    const auto* read = std::get_if<harness::Misbehaviour>(&answers.front());
    ASSERT_NE(read, nullptr) << line;
    EXPECT_EQ(read->kind, harness::is_misbehaviour(kind) ? kind : harness::FindingKind::raised) << line;
    EXPECT_EQ(read->summary, sent.summary);
    EXPECT_EQ(read->detail, sent.detail);
    EXPECT_EQ(harness::parse_finding_kind(harness::to_string(kind)), kind);
  }
  EXPECT_GT(kinds, static_cast<int>(harness::FindingKind::changed_input));
}

}  // namespace
}  // namespace chunkmeta
