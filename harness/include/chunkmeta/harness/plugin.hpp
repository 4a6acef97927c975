// Implementations from a shared library that exports the C ABI of
// <chunkmeta/plugin.h>, run in this process (the CLI isolates them in a
// child process unless told otherwise; the fuzz target runs them here).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "chunkmeta/harness/implementation.hpp"

namespace chunkmeta::harness {

// `text` is PATH (every implementation in the library) or PATH#NAME (one).
// Each is named "plugin:PATH#NAME" and computes the spec it names (ABI
// version 2) or Mamba's (version 1). Returns a sentence saying what is wrong
// otherwise (cannot load, no entry point, ABI version, unknown spec or NAME).
std::variant<std::vector<Implementation>, std::string> load_plugin(const std::string& text);

// PATH and NAME of `text`: the whole text when it names a file, else the
// shortest prefix before a '#' that does ('#' may appear in either part).
struct PluginName {
  std::string path;
  std::string name;  // empty: every implementation
};
PluginName split_plugin_name(const std::string& text);

// ABI version 3's scalars of a workload, in the spec's order: an integer
// input as itself, an optional one as two (1 and its value, or 0 and 0 when
// none is given), a flag as 1 or 0. A "rows" input is not passed.
std::vector<std::int64_t> abi_scalars(const Spec& spec, const Workload& workload);
// The input whose ABI scalar is at `position` of abi_scalars.
std::string_view abi_scalar_input(const Spec& spec, std::size_t position);
// The other way (a plugin's side): the scalars into the workload's slots; those past the end are left as they are.
void read_abi_scalars(const Spec& spec, std::span<const std::int64_t> scalars, Workload& workload);

}  // namespace chunkmeta::harness
