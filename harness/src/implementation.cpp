#include "chunkmeta/harness/implementation.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <optional>
#include <ostream>
#include <string>

#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/plugin.hpp"
#include "chunkmeta/harness/report.hpp"
#include "chunkmeta/harness/spec.hpp"
#include "chunkmeta/harness/subprocess.hpp"

namespace chunkmeta::harness {

std::string_view to_string(Dtype dtype) noexcept { return dtype == Dtype::int32 ? "int32" : "int64"; }

std::string_view to_string(Slot slot) noexcept {
  switch (slot) {
    case Slot::chunk_size: return "chunk_size";
    case Slot::block_size: return "block_size";
    case Slot::per_row: return "per_row";
    case Slot::offsets: return "offsets";
    case Slot::rows: return "rows";
    case Slot::second_per_row: return "second_per_row";
    case Slot::optional_scalar: return "optional_scalar";
    case Slot::flag: return "flag";
    case Slot::more_scalar: return "more_scalar";
    case Slot::more_per_row: return "more_per_row";
    case Slot::more_optional: return "more_optional";
    case Slot::more_flag: return "more_flag";
  }
  return "unknown";
}

std::optional<Dtype> parse_dtype(std::string_view name) noexcept {
  if (name == "int32") return Dtype::int32;
  if (name == "int64") return Dtype::int64;
  return std::nullopt;
}

bool fits_int32(const Workload& workload) {
  const auto fits = [](std::int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; };
  return std::all_of(workload.num_computed_tokens.begin(), workload.num_computed_tokens.end(), fits) &&
         std::all_of(workload.query_start_loc.begin(), workload.query_start_loc.end(), fits) &&
         std::all_of(workload.second_per_row.begin(), workload.second_per_row.end(), fits) &&
         fits(workload.optional_scalar.value_or(0)) &&
         std::all_of(workload.more_per_row.begin(), workload.more_per_row.end(),
                     [&](const auto& values) { return std::all_of(values.begin(), values.end(), fits); }) &&
         std::all_of(workload.more_optionals.begin(), workload.more_optionals.end(),
                     [&](const auto& value) { return fits(value.value_or(0)); });
}

std::ostream& operator<<(std::ostream& os, const Workload& workload) {
  os << chunkmeta::Workload{workload.chunk_size, workload.num_computed_tokens, workload.query_start_loc};
  if (workload.block_size != 0) os << " block_size=" << workload.block_size;
  if (!workload.second_per_row.empty()) {
    os << " second_per_row=[";
    for (std::size_t i = 0; i < workload.second_per_row.size(); ++i) os << (i == 0 ? "" : ", ") << workload.second_per_row[i];
    os << "]";
  }
  if (workload.optional_scalar) os << " optional_scalar=" << *workload.optional_scalar;
  if (workload.flag) os << " flag";
  // The fields past the named ones (Workload::more_*), each kind as a list.
  const auto list = [&os](const char* what, const auto& values, const auto& print) {
    if (values.empty()) return;
    os << " " << what << "=[";
    for (std::size_t i = 0; i < values.size(); ++i) {
      os << (i == 0 ? "" : ", ");
      print(values[i]);
    }
    os << "]";
  };
  list("more_scalars", workload.more_scalars, [&os](std::int64_t v) { os << v; });
  list("more_per_row", workload.more_per_row, [&](const std::vector<std::int64_t>& values) {
    os << "[";
    for (std::size_t i = 0; i < values.size(); ++i) os << (i == 0 ? "" : ", ") << values[i];
    os << "]";
  });
  list("more_optionals", workload.more_optionals, [&os](const std::optional<std::int64_t>& v) {
    if (v) {
      os << *v;
    } else {
      os << "none";
    }
  });
  list("more_flags", workload.more_flags, [&os](std::uint8_t f) { os << (f != 0 ? "true" : "false"); });
  return os << (workload.dtype == Dtype::int64 ? " (int64)" : "");
}

std::string_view to_string(FindingKind kind) noexcept {
  switch (kind) {
    case FindingKind::mismatch: return "mismatch";
    case FindingKind::invariant_violated: return "invariant_violated";
    case FindingKind::unexpected_error: return "unexpected_error";
    case FindingKind::accepted_invalid: return "accepted_invalid";
    case FindingKind::wrong_error: return "wrong_error";
    case FindingKind::relation_broken: return "relation_broken";
    case FindingKind::wrong_state: return "wrong_state";
    case FindingKind::crashed: return "crashed";
    case FindingKind::timed_out: return "timed_out";
    case FindingKind::malformed_output: return "malformed_output";
    case FindingKind::missing_output: return "missing_output";
    case FindingKind::raised: return "raised";
    case FindingKind::changed_input: return "changed_input";
    case FindingKind::superlinear_cost: return "superlinear_cost";
  }
  return "unknown";
}

std::optional<FindingKind> parse_finding_kind(std::string_view name) noexcept {
  // The kinds are numbered from 0 in order: the first without a name is past the last.
  for (int k = 0; to_string(static_cast<FindingKind>(k)) != "unknown"; ++k) {
    if (to_string(static_cast<FindingKind>(k)) == name) return static_cast<FindingKind>(k);
  }
  return std::nullopt;
}

bool ends_its_process(FindingKind kind) noexcept {
  return kind == FindingKind::crashed || kind == FindingKind::missing_output;
}

bool is_misbehaviour(FindingKind kind) noexcept {
  switch (kind) {
    case FindingKind::crashed:
    case FindingKind::timed_out:
    case FindingKind::malformed_output:
    case FindingKind::missing_output:
    case FindingKind::raised:
    case FindingKind::changed_input: return true;
    default: return false;
  }
}

namespace {

// At most 32 entries of `values`, as a report shows a list.
template <typename Int>
std::string listed(std::span<const Int> values) {
  constexpr std::size_t kShown = 32;
  std::string text = "[";
  for (std::size_t i = 0; i < values.size() && i < kShown; ++i)
    text += (i == 0 ? "" : ", ") + std::to_string(values[i]);
  if (values.size() > kShown) text += ", ... (" + std::to_string(values.size()) + " entries)";
  return text + "]";
}

template <typename Int>
std::optional<Misbehaviour> first_change(std::string_view field, std::span<const std::int64_t> sent,
                                         std::span<const Int> now) {
  const std::size_t common = std::min(sent.size(), now.size());
  std::size_t i = 0;
  while (i < common && sent[i] == static_cast<std::int64_t>(now[i])) ++i;
  if (i == common && sent.size() == now.size()) return std::nullopt;
  std::string what;
  if (sent.size() != now.size())
    what = "it had " + std::to_string(sent.size()) + " entries, has " + std::to_string(now.size()) + " after the call";
  if (i < common) {
    what += (what.empty() ? "" : "; ") + ("entry " + std::to_string(i) + " was " + std::to_string(sent[i]) + ", is " +
                                          std::to_string(now[i]) + " after the call");
  }
  return Misbehaviour{FindingKind::changed_input, "changed its input " + std::string(field) + ": " + what,
                      "sent:           " + listed(sent) + "\nafter the call: " + listed(now)};
}

}  // namespace

std::optional<Misbehaviour> input_changed(std::string_view field, std::span<const std::int64_t> sent,
                                          std::span<const std::int64_t> now) {
  return first_change(field, sent, now);
}

std::optional<Misbehaviour> input_changed(std::string_view field, std::span<const std::int64_t> sent,
                                          std::span<const std::int32_t> now) {
  return first_change(field, sent, now);
}

Misbehaviour input_unreadable(std::string_view field, const std::string& why) {
  return Misbehaviour{FindingKind::changed_input,
                      "changed its input " + std::string(field) +
                          ": after the call it is no longer the array it was sent",
                      why};
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

constexpr std::string_view kCouldNotLoad = "could not be loaded";

// The table of the plugin `text` (plugin:PATH[#NAME]) as a child process
// (`SELF plugin-table PATH[#NAME]`) reads it: the implementations, without
// compute (the caller runs each in a child of its own). A child that crashes,
// hangs or prints what is not a table gives one implementation whose every
// answer is that misbehaviour: the plugin's finding.
std::variant<std::vector<Implementation>, std::string> plugin_table_in_child(const std::string& text, const Spec& spec,
                                                                             const ResolveOptions& options) {
  const CommandOutput child =
      run_command("exec " + shell_quote(options.self_path) + " plugin-table " + shell_quote(text.substr(7)),
                  options.timeout_seconds);
  std::vector<Implementation> table;
  std::optional<std::string> refused;
  bool readable = !child.timed_out && WIFEXITED(child.status);
  std::size_t start = 0;
  for (std::size_t end; readable && (end = child.out.find('\n', start)) != std::string::npos; start = end + 1) {
    const auto line = std::string_view(child.out).substr(start, end - start);
    auto parsed = parse_json_bounded(line);
    const Json row = std::holds_alternative<Json>(parsed) ? std::move(std::get<Json>(parsed)) : Json();
    if (row.is_object() && row.contains("error") && row["error"].is_string()) {
      refused = row["error"].get<std::string>();
      continue;
    }
    const Spec* of = row.is_object() && row.value("spec", Json()).is_string() ? find_spec(row["spec"].get<std::string>()) : nullptr;
    if (of == nullptr || !row.value("name", Json()).is_string()) {
      readable = false;
      break;
    }
    Implementation impl;
    impl.name = row["name"].get<std::string>();
    impl.description = row.value("description", Json("")).is_string() ? row["description"].get<std::string>() : "";
    impl.spec = of;
    impl.rejects_invalid_input = row.value("rejects_invalid_input", false) == true;
    table.push_back(std::move(impl));
  }
  if (readable && WEXITSTATUS(child.status) == 0 && !table.empty()) return table;
  if (readable && refused) return *refused;
  // The finding: every workload is answered with how loading it went.
  const bool exited_ok = readable && WEXITSTATUS(child.status) == 0;  // but printed no table it could read
  const FindingKind kind = child.timed_out ? FindingKind::timed_out
                           : exited_ok     ? FindingKind::malformed_output
                                           : FindingKind::crashed;
  Misbehaviour loading{kind,
                       std::string(kCouldNotLoad) + ": reading its table, the child process " + child.how_it_ended(),
                       "stderr: " + child.err.substr(0, 2000)};
  Implementation finding;
  finding.name = text;
  finding.spec = &spec;
  finding.description = std::string(kCouldNotLoad) + " (plugin)";
  finding.compute = [loading](const Workload&) -> Answer { return loading; };
  return std::vector<Implementation>{std::move(finding)};
}
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
    // Isolated, even its table is read in a child: a plugin that crashes, hangs
    // or lies while loading is a finding, never the end of this process.
    auto loaded = options.plugins_in_process ? load_plugin(text.substr(7))
                                             : plugin_table_in_child(text, spec, options);
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
        if (impl.compute) continue;  // the loading finding: rows of a table have no compute until isolated here
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
