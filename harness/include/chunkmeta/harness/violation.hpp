// A broken invariant with its detail written like a stream, for the specs'
// invariant checks: return Violation(number, name, row, chunk) << "...";
#pragma once

#include <optional>
#include <sstream>
#include <string>

#include "chunkmeta/harness/spec.hpp"

namespace chunkmeta::harness {

struct Violation {
  InvariantViolation value;
  Violation(int number, std::string name, std::int64_t row, std::int64_t chunk)
      : value{number, std::move(name), row, chunk, {}} {}
  template <typename T>
  Violation& operator<<(const T& part) {
    std::ostringstream os;
    os << part;
    value.detail += os.str();
    return *this;
  }
  operator std::optional<InvariantViolation>() const { return value; }  // NOLINT(google-explicit-constructor)
};

}  // namespace chunkmeta::harness
