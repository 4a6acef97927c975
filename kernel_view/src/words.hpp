// How the kernels' view names token ranges in its faults.
#pragma once

#include <cstdint>
#include <string>

namespace chunkmeta::kernel_view {

// The tokens [begin, end): "9..12", "9", or "none" when empty.
inline std::string span_words(std::int64_t begin, std::int64_t end) {
  if (end <= begin) return "none";
  if (end - begin == 1) return std::to_string(begin);
  return std::to_string(begin) + ".." + std::to_string(end - 1);
}

// The same as a count of tokens: "token 9", "tokens 9..12", "no token".
inline std::string tokens_words(std::int64_t begin, std::int64_t end) {
  if (end <= begin) return "no token";
  return (end - begin == 1 ? "token " : "tokens ") + span_words(begin, end);
}

}  // namespace chunkmeta::kernel_view
