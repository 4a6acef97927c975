#include "chunkmeta/harness/implementation.hpp"

#include <algorithm>
#include <ostream>

#include "chunkmeta/harness/plugin.hpp"
#include "chunkmeta/harness/report.hpp"
#include "chunkmeta/harness/spec.hpp"
#include "chunkmeta/harness/subprocess.hpp"

namespace chunkmeta::harness {

std::string_view to_string(Dtype dtype) noexcept { return dtype == Dtype::int32 ? "int32" : "int64"; }

std::optional<Dtype> parse_dtype(std::string_view name) noexcept {
  if (name == "int32") return Dtype::int32;
  if (name == "int64") return Dtype::int64;
  return std::nullopt;
}

bool fits_int32(const Workload& workload) {
  const auto fits = [](std::int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; };
  return std::all_of(workload.num_computed_tokens.begin(), workload.num_computed_tokens.end(), fits) &&
         std::all_of(workload.query_start_loc.begin(), workload.query_start_loc.end(), fits);
}

std::ostream& operator<<(std::ostream& os, const Workload& workload) {
  return os << chunkmeta::Workload{workload.chunk_size, workload.num_computed_tokens, workload.query_start_loc}
            << (workload.dtype == Dtype::int64 ? " (int64)" : "");
}

std::string_view to_string(FindingKind kind) noexcept {
  switch (kind) {
    case FindingKind::mismatch: return "mismatch";
    case FindingKind::invariant_violated: return "invariant_violated";
    case FindingKind::unexpected_error: return "unexpected_error";
    case FindingKind::accepted_invalid: return "accepted_invalid";
    case FindingKind::wrong_error: return "wrong_error";
    case FindingKind::relation_broken: return "relation_broken";
    case FindingKind::crashed: return "crashed";
    case FindingKind::timed_out: return "timed_out";
    case FindingKind::malformed_output: return "malformed_output";
    case FindingKind::missing_output: return "missing_output";
    case FindingKind::raised: return "raised";
  }
  return "unknown";
}

bool is_misbehaviour(FindingKind kind) noexcept {
  switch (kind) {
    case FindingKind::crashed:
    case FindingKind::timed_out:
    case FindingKind::malformed_output:
    case FindingKind::missing_output:
    case FindingKind::raised: return true;
    default: return false;
  }
}

std::vector<Answer> answer_batch(const Implementation& implementation, std::span<const Workload> workloads) {
  std::vector<Answer> batch;
  if (workloads.empty()) return batch;
  if (implementation.compute_batch) batch = implementation.compute_batch(workloads);
  if (batch.empty()) batch.push_back(implementation.compute(workloads.front()));  // never loop without progress
  // A door that answers more than it was asked answers nothing past that.
  if (batch.size() > workloads.size()) batch.erase(batch.begin() + static_cast<std::ptrdiff_t>(workloads.size()), batch.end());
  return batch;
}

std::vector<Answer> answer_all(const Implementation& implementation, std::span<const Workload> workloads) {
  std::vector<Answer> answers;
  answers.reserve(workloads.size());
  while (answers.size() < workloads.size()) {
    for (auto& answer : answer_batch(implementation, workloads.subspan(answers.size()))) answers.push_back(std::move(answer));
  }
  return answers;
}

Implementation in_process(std::string name, std::string description, const Spec& spec,
                          std::function<Answer(const Workload&)> compute) {
  Implementation impl;
  impl.name = std::move(name);
  impl.description = std::move(description);
  impl.spec = &spec;
  impl.compute = std::move(compute);
  return impl;
}

namespace {
bool starts_with(const std::string& text, std::string_view prefix) { return text.rfind(prefix, 0) == 0; }
}  // namespace

std::variant<std::vector<Implementation>, std::string> resolve_implementations(const Spec& spec, const std::string& text,
                                                                                const ResolveOptions& options) {
  // `name` answered by `command` in a child process, registered for the caller's statistics.
  const auto in_child = [&](const std::string& name, const std::string& command) {
    SubprocessOptions sub;
    sub.command = command;
    sub.timeout_seconds = options.timeout_seconds;
    std::shared_ptr<Subprocess> process;
    Implementation impl = subprocess_implementation(name, spec, sub, &process);
    if (options.processes != nullptr) options.processes->emplace_back(name, process);
    return impl;
  };
  std::vector<Implementation> found;
  if (starts_with(text, "cmd:")) {
    const std::string command = text.substr(4);
    if (command.find_first_not_of(" \t") == std::string::npos) return std::string("cmd: needs a command, e.g. cmd:'chunkmeta compute'");
    found.push_back(in_child(text, command));
  } else if (starts_with(text, "plugin:")) {
    auto loaded = load_plugin(text.substr(7));
    if (auto* why = std::get_if<std::string>(&loaded)) return *why;
    std::string other_specs;
    for (auto& impl : std::get<std::vector<Implementation>>(loaded)) {
      if (impl.spec != &spec) {
        other_specs += (other_specs.empty() ? "" : ", ") + impl.name + " (" + std::string(impl.spec->name()) + ")";
        continue;
      }
      found.push_back(std::move(impl));
    }
    if (found.empty()) {
      return "plugin " + text.substr(7) + " offers no implementation of " + std::string(spec.name()) + " (it has " +
             other_specs + "; --spec names the computation)";
    }
    if (!options.plugins_in_process) {
      for (auto& impl : found) {
        Implementation isolated = in_child(impl.name, shell_quote(options.self_path) + " compute --spec " +
                                                          std::string(spec.name()) + " --impl " + shell_quote(impl.name));
        isolated.description = impl.description + " (plugin, in a child process)";
        isolated.rejects_invalid_input = impl.rejects_invalid_input;
        impl = std::move(isolated);
      }
    }
  } else if (auto builtin = spec.find_builtin(text)) {
    found.push_back(*builtin);
  } else {
    return "unknown implementation '" + text + "' of " + std::string(spec.name()) + " (known: " + spec.builtin_names() +
           ", cmd:COMMAND, plugin:PATH[#NAME])";
  }
  if (options.valid_only) {
    for (auto& impl : found) impl.rejects_invalid_input = false;
  }
  return found;
}

}  // namespace chunkmeta::harness
