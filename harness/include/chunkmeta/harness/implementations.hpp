// The built-in implementations, each entry point exposed as an Implementation.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <string_view>
#include <variant>
#include <vector>

#include "chunkmeta/harness/oracle.hpp"

namespace chunkmeta::harness {

class Subprocess;

// reference, fast (returning, int64 input), fast-int32 (returning, engine int32
// input read in place), fast-into and fast-into-int32 (caller buffers).
const std::vector<Implementation>& builtin_implementations();
std::optional<Implementation> find_builtin(std::string_view name);
std::string builtin_names();  // "reference, fast, ...", for messages

// Whether every value fits the engine's int32 tensors. A workload that does not
// cannot reach an int32 implementation: it is answered with validate()'s
// rejection, as the engine's own int32 conversion would refuse it.
bool fits_int32(const Workload& workload);

struct ResolveOptions {
  double timeout_seconds = 10.0;  // per case, for subprocesses
  // Plugins run in a child (`SELF compute --impl plugin:...`) so that a crash or
  // a hang is a finding, not the end of the harness; true loads them here.
  bool plugins_in_process = false;
  std::string self_path;          // this chunkmeta executable, for the child
  bool valid_only = false;        // treat every implementation as valid-input-only
  // When set, receives (implementation name, process) for every subprocess
  // started, so a caller can report where the time went.
  std::vector<std::pair<std::string, std::shared_ptr<Subprocess>>>* processes = nullptr;
};

// An implementation spec as the CLI takes it:
//   a built-in name (reference, fast, ...);
//   cmd:COMMAND        a program speaking the JSON Lines protocol;
//   plugin:PATH[#NAME] implementations from a shared library (<chunkmeta/plugin.h>).
// Each implementation is named by the spec that resolves to it alone, so a
// report's replay command can name it. Returns a sentence on error.
std::variant<std::vector<Implementation>, std::string> resolve_implementations(const std::string& spec,
                                                                                const ResolveOptions& options);

}  // namespace chunkmeta::harness
