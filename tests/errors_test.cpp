// The library's errors, shared by every spec: stable names that round-trip,
// and a message for each code that names the field, the value and the bound.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "chunkmeta/types.hpp"

namespace chunkmeta {
namespace {

TEST(Errors, HaveStableNamesThatRoundTrip) {
  for (int raw = 0; raw <= static_cast<int>(kLastErrorCode); ++raw) {
    const auto code = static_cast<ErrorCode>(raw);
    EXPECT_EQ(parse_error_code(to_string(code)), code);
  }
  EXPECT_EQ(parse_error_code("no_such_code"), std::nullopt);
}

TEST(Errors, EachCodeHasAMessageNamingTheFieldTheValueAndTheBound) {
  const std::vector<Error> errors = {
      {ErrorCode::chunk_size_not_positive, "chunk_size", Error::kNoIndex, -4, 0},
      {ErrorCode::length_mismatch, "query_start_loc", 3, 3, 5},
      {ErrorCode::negative_value, "num_computed_tokens", 1, -7, 0},
      {ErrorCode::value_too_large, "query_start_loc", 2, kMaxValue + 9, kMaxValue},
      {ErrorCode::query_start_loc_decreasing, "query_start_loc", 2, 4, 5},
      {ErrorCode::sequence_too_long, "num_computed_tokens", 6, kMaxValue + 1, kMaxValue},
      {ErrorCode::output_too_large, "cu_chunk_seqlen", Error::kNoIndex, 1001, 1000},
      {ErrorCode::output_buffer_too_small, "seq_idx", Error::kNoIndex, 3, 8},
      {ErrorCode::length_mismatch, "cu_seqlens", 0, 0, 1},
      {ErrorCode::cu_seqlens_decreasing, "cu_seqlens", 3, 4, 9},
      {ErrorCode::not_positive, "block_size", Error::kNoIndex, -3, 0},
      {ErrorCode::not_a_multiple, "block_size", Error::kNoIndex, 1000, 64},
      {ErrorCode::not_increasing, "query_start_loc", 2, 5, 5},
      {ErrorCode::below_minimum, "seq_lens", 1, 3, 8},
  };
  for (const Error& error : errors) {
    const std::string message = error.message();
    EXPECT_NE(message.find(std::to_string(error.value)), std::string::npos) << message;
    if (error.bound != 0) {
      EXPECT_NE(message.find(std::to_string(error.bound)), std::string::npos) << message;
    }
    if (error.code != ErrorCode::output_too_large) {
      const std::string where = error.index == Error::kNoIndex ? std::string(error.field)
                                                                : std::to_string(error.index);
      EXPECT_NE(message.find(where), std::string::npos) << message;
    }
    std::ostringstream printed;
    printed << error;
    EXPECT_EQ(printed.str().rfind("error " + std::string(to_string(error.code)) + " at " + std::string(error.field), 0), 0u)
        << printed.str();
    EXPECT_NE(printed.str().find(message), std::string::npos);
  }
}

}  // namespace
}  // namespace chunkmeta
