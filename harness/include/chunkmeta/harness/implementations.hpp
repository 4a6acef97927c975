// The built-in implementations, each entry point exposed as an Implementation.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "chunkmeta/harness/oracle.hpp"

namespace chunkmeta::harness {

// reference, fast (returning, int64 input), fast-int32 (returning, engine int32
// input read in place), fast-into and fast-into-int32 (caller buffers).
const std::vector<Implementation>& builtin_implementations();
std::optional<Implementation> find_builtin(std::string_view name);

}  // namespace chunkmeta::harness
