#include "chunkmeta/harness/implementations.hpp"

#include <algorithm>

#include "chunkmeta/harness/plugin.hpp"
#include "chunkmeta/harness/report.hpp"
#include "chunkmeta/harness/subprocess.hpp"

namespace chunkmeta::harness {
namespace {

// The engine hands int32 tensors to the int32 entry points. A wide value that
// does not fit cannot reach them, so such a workload is answered with the
// rejection validation gives it (the engine's own int32 conversion would fail).
struct Int32Copy {
  std::vector<std::int32_t> computed;
  std::vector<std::int32_t> starts;
  WorkloadView32 view(std::int64_t chunk_size) const { return {chunk_size, computed, starts}; }
};

std::optional<Int32Copy> to_int32(const Workload& workload) {
  if (!fits_int32(workload)) return std::nullopt;
  return Int32Copy{{workload.num_computed_tokens.begin(), workload.num_computed_tokens.end()},
                   {workload.query_start_loc.begin(), workload.query_start_loc.end()}};
}

template <typename Compute32>
Outcome through_int32(const Workload& workload, Compute32&& compute) {
  auto copy = to_int32(workload);
  if (!copy) return *validate(workload);
  return compute(copy->view(workload.chunk_size));
}

// Sizes the buffers with output_sizes(), then writes them with fast_into. The
// fill value -7 makes an entry fast_into forgot to write visible to the oracle.
template <typename View>
Outcome into_buffers(const View& view) {
  auto sizes = output_sizes(view);
  if (!sizes.ok()) return sizes.error();
  ChunkMetadata out;
  out.cu_chunk_seqlen.assign(static_cast<std::size_t>(sizes.value().cu_chunk_seqlen), -7);
  out.seq_idx.assign(static_cast<std::size_t>(sizes.value().seq_idx), -7);
  out.last_chunk_indices.assign(static_cast<std::size_t>(sizes.value().last_chunk_indices), -7);
  auto written = fast_into(view, {out.cu_chunk_seqlen, out.seq_idx, out.last_chunk_indices});
  if (!written.ok()) return written.error();
  return out;
}

std::vector<Implementation> make_builtins() {
  return {
      in_process("reference", "the SPEC's procedure, ported line by line", [](const Workload& w) { return reference(w); }),
      in_process("fast", "production implementation, returning, int64 input", [](const Workload& w) { return fast(w); }),
      in_process("fast-int32", "production implementation, returning, engine int32 input",
       [](const Workload& w) {
         return through_int32(w, [](const WorkloadView32& v) { return fast(v); });
       }),
      in_process("fast-into", "production implementation, caller buffers, int64 input",
       [](const Workload& w) { return into_buffers(view_of(w)); }),
      in_process("fast-into-int32", "production implementation, caller buffers, engine int32 input",
       [](const Workload& w) {
         return through_int32(w, [](const WorkloadView32& v) { return into_buffers(v); });
       }),
  };
}

}  // namespace

const std::vector<Implementation>& builtin_implementations() {
  static const std::vector<Implementation> all = make_builtins();
  return all;
}

std::optional<Implementation> find_builtin(std::string_view name) {
  for (const auto& implementation : builtin_implementations()) {
    if (implementation.name == name) return implementation;
  }
  return std::nullopt;
}

bool fits_int32(const Workload& workload) {
  const auto fits = [](std::int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; };
  return std::all_of(workload.num_computed_tokens.begin(), workload.num_computed_tokens.end(), fits) &&
         std::all_of(workload.query_start_loc.begin(), workload.query_start_loc.end(), fits);
}

std::string builtin_names() {
  std::string names;
  for (const auto& impl : builtin_implementations()) names += (names.empty() ? "" : ", ") + impl.name;
  return names;
}

namespace {

bool starts_with(const std::string& text, std::string_view prefix) { return text.rfind(prefix, 0) == 0; }

}  // namespace

std::variant<std::vector<Implementation>, std::string> resolve_implementations(const std::string& spec,
                                                                                const ResolveOptions& options) {
  // `name` answered by `command` in a child process, registered for the caller's statistics.
  const auto in_child = [&options](const std::string& name, const std::string& command) {
    SubprocessOptions sub;
    sub.command = command;
    sub.timeout_seconds = options.timeout_seconds;
    std::shared_ptr<Subprocess> process;
    Implementation impl = subprocess_implementation(name, sub, &process);
    if (options.processes != nullptr) options.processes->emplace_back(name, process);
    return impl;
  };
  std::vector<Implementation> found;
  if (starts_with(spec, "cmd:")) {
    const std::string command = spec.substr(4);
    if (command.find_first_not_of(" \t") == std::string::npos) return std::string("cmd: needs a command, e.g. cmd:'chunkmeta compute'");
    found.push_back(in_child(spec, command));
  } else if (starts_with(spec, "plugin:")) {
    auto loaded = load_plugin(spec.substr(7));
    if (auto* why = std::get_if<std::string>(&loaded)) return *why;
    found = std::get<std::vector<Implementation>>(std::move(loaded));
    if (!options.plugins_in_process) {
      for (auto& impl : found) {
        Implementation isolated =
            in_child(impl.name, shell_quote(options.self_path) + " compute --impl " + shell_quote(impl.name));
        isolated.description = impl.description + " (plugin, in a child process)";
        isolated.rejects_invalid_input = impl.rejects_invalid_input;
        impl = std::move(isolated);
      }
    }
  } else if (auto builtin = find_builtin(spec)) {
    found.push_back(*builtin);
  } else {
    return "unknown implementation '" + spec + "' (known: " + builtin_names() + ", cmd:COMMAND, plugin:PATH[#NAME])";
  }
  if (options.valid_only) {
    for (auto& impl : found) impl.rejects_invalid_input = false;
  }
  return found;
}

}  // namespace chunkmeta::harness
