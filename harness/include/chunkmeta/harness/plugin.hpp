// Implementations from a shared library that exports the C ABI of
// <chunkmeta/plugin.h>, run in this process (the CLI isolates them in a
// child process unless told otherwise; the fuzz target runs them here).
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "chunkmeta/harness/oracle.hpp"

namespace chunkmeta::harness {

// `spec` is PATH (every implementation in the library) or PATH#NAME (one).
// Each is named "plugin:PATH#NAME". Returns a sentence saying what is wrong
// otherwise (cannot load, no entry point, ABI version, unknown NAME).
std::variant<std::vector<Implementation>, std::string> load_plugin(const std::string& spec);

}  // namespace chunkmeta::harness
