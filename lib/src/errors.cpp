#include <cstdint>
#include <ostream>
#include <sstream>

#include "chunkmeta/types.hpp"

namespace chunkmeta {

std::string_view to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::chunk_size_not_positive: return "chunk_size_not_positive";
    case ErrorCode::length_mismatch: return "length_mismatch";
    case ErrorCode::negative_value: return "negative_value";
    case ErrorCode::value_too_large: return "value_too_large";
    case ErrorCode::query_start_loc_decreasing: return "query_start_loc_decreasing";
    case ErrorCode::sequence_too_long: return "sequence_too_long";
    case ErrorCode::output_too_large: return "output_too_large";
    case ErrorCode::output_buffer_too_small: return "output_buffer_too_small";
    case ErrorCode::cu_seqlens_decreasing: return "cu_seqlens_decreasing";
    case ErrorCode::not_positive: return "not_positive";
    case ErrorCode::not_a_multiple: return "not_a_multiple";
    case ErrorCode::not_increasing: return "not_increasing";
    case ErrorCode::below_minimum: return "below_minimum";
  }
  return "unknown_error";
}

std::optional<ErrorCode> parse_error_code(std::string_view name) noexcept {
  for (int raw = 0; raw <= static_cast<int>(kLastErrorCode); ++raw) {
    const auto code = static_cast<ErrorCode>(raw);
    if (to_string(code) == name) return code;
  }
  return std::nullopt;
}

ErrorKind kind_of(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::output_too_large:
    case ErrorCode::output_buffer_too_small: return ErrorKind::resource_limit;
    default: return ErrorKind::invalid_input;
  }
}

std::string Error::message() const {
  std::ostringstream os;
  const auto where = [&]() -> std::ostream& {
    os << field;
    if (index != kNoIndex) os << '[' << index << ']';
    return os;
  };
  switch (code) {
    case ErrorCode::chunk_size_not_positive:
      where() << " is " << value << "; the chunk size must be at least 1";
      break;
    case ErrorCode::length_mismatch:
      if (field == "cu_seqlens") {
        where() << ": cu_seqlens has " << value << " entries but must have at least " << bound;
      } else if (field != "query_start_loc") {  // a per-row array of another spec (seq_lens, checkpoint_offsets, ...)
        where() << ": " << field << " has " << value << " entries but must have " << bound;
      } else {
        where() << ": query_start_loc has " << value << " entries but must have " << bound
                << " (one more than num_computed_tokens)";
      }
      break;
    case ErrorCode::negative_value:
      where() << " is " << value << "; values must be at least 0";
      break;
    case ErrorCode::value_too_large:
      // Most fields are bounded by int32; some by another field (a row index by the rows there are).
      where() << " is " << value << "; values must be at most " << (bound == INT32_MAX ? "2^31-1 = " : "") << bound;
      break;
    case ErrorCode::query_start_loc_decreasing:
      where() << " is " << value << ", below the previous entry " << bound
              << "; query_start_loc must be non-decreasing";
      break;
    case ErrorCode::sequence_too_long:
      os << "row " << index << ": num_computed_tokens[" << index << "] plus its new tokens is " << value
         << "; a sequence must be at most 2^31-1 = " << bound << " tokens";
      break;
    case ErrorCode::output_too_large:
      os << "the workload needs " << value << " chunks, above the documented cap of " << bound
         << " (Limits::max_chunks)";
      break;
    case ErrorCode::output_buffer_too_small:
      where() << ": the buffer holds " << value << " entries but " << bound << " are needed";
      break;
    case ErrorCode::cu_seqlens_decreasing:
      where() << " is " << value << ", below the previous entry " << bound << "; cu_seqlens must be non-decreasing";
      break;
    case ErrorCode::not_positive:
      where() << " is " << value << "; it must be at least 1";
      break;
    case ErrorCode::not_a_multiple:
      where() << " is " << value << "; it must be a multiple of " << bound;
      break;
    case ErrorCode::not_increasing:
      where() << " is " << value << ", not above the previous entry " << bound << "; " << field
              << " must increase";
      break;
    case ErrorCode::below_minimum:
      where() << " is " << value << "; it must be at least " << bound;
      break;
  }
  return os.str();
}

namespace {
template <typename Int, typename Allocator>
std::ostream& print_array(std::ostream& os, const std::vector<Int, Allocator>& values) {
  os << '[';
  for (std::size_t i = 0; i < values.size(); ++i) os << (i ? ", " : "") << values[i];
  return os << ']';
}
}  // namespace

std::ostream& operator<<(std::ostream& os, ErrorCode code) { return os << to_string(code); }

std::ostream& operator<<(std::ostream& os, const Workload& workload) {
  os << "{chunk_size: " << workload.chunk_size << ", num_computed_tokens: ";
  print_array(os, workload.num_computed_tokens) << ", query_start_loc: ";
  return print_array(os, workload.query_start_loc) << '}';
}

std::ostream& operator<<(std::ostream& os, const ChunkMetadata& result) {
  os << "{cu_chunk_seqlen: ";
  print_array(os, result.cu_chunk_seqlen) << ", seq_idx: ";
  print_array(os, result.seq_idx) << ", last_chunk_indices: ";
  return print_array(os, result.last_chunk_indices) << '}';
}

std::ostream& operator<<(std::ostream& os, const Error& error) {
  os << "error " << error.code << " at " << error.field;
  if (error.index != Error::kNoIndex) os << '[' << error.index << ']';
  return os << ": " << error.message();
}

std::ostream& operator<<(std::ostream& os, const OutputSizes& sizes) {
  return os << "{cu_chunk_seqlen: " << sizes.cu_chunk_seqlen << ", seq_idx: " << sizes.seq_idx
            << ", last_chunk_indices: " << sizes.last_chunk_indices << '}';
}

}  // namespace chunkmeta
