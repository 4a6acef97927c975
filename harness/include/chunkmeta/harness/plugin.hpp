// Implementations from a shared library that exports the C ABI of
// <chunkmeta/plugin.h>, run in this process (the CLI isolates them in a
// child process unless told otherwise; the fuzz target runs them here).
#pragma once

#include <string>
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

}  // namespace chunkmeta::harness
