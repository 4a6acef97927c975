#include "chunkmeta/harness/spec.hpp"

#include <algorithm>

#include "chunkmeta/harness/call_budget.hpp"

namespace chunkmeta::harness {

std::optional<kernel_view::Fault> Spec::kernels_view(const Workload&, const Arrays&, bool) const { return std::nullopt; }

std::size_t Spec::most_answer_entries(const Workload& workload) const {
  return kAnswerAllowanceEntries + kAnswerEntriesPerUnit * static_cast<std::size_t>(CallBudget::units_of(*this, workload));
}

OutputVerdict Spec::verdict_on(const Workload& workload, const Arrays& arrays) const {
  return {check_invariants(workload, arrays), kernels_view(workload, arrays)};
}

const Input* Spec::input(Slot slot) const {
  for (const auto& each : inputs()) {
    if (each.slot == slot) return &each;
  }
  return nullptr;
}

std::string_view Spec::field(Slot slot) const {
  const Input* found = input(slot);
  return found != nullptr ? found->name : std::string_view{};
}

bool Spec::reads_dtype() const {
  for (const auto& each : inputs()) {
    if (each.wide) return true;
  }
  return false;
}

void Spec::fill_unread_rows(Workload& workload) const {
  // A second value per row stays empty where it is not read: those workloads are as they always were.
  if (!reads(Slot::second_per_row)) workload.second_per_row.clear();
  if (!reads(Slot::optional_scalar)) workload.optional_scalar.reset();
  if (!reads(Slot::flag)) workload.flag = false;
  if (!reads(Slot::block_size)) workload.block_size = 0;
  // The more_* fields: as many as the spec names of each kind (none for every spec that names none).
  std::size_t scalars = 0, per_row = 0, optionals = 0, flags = 0;
  for (const auto& each : inputs()) {
    const std::size_t count = std::size_t{each.index} + 1;
    if (each.slot == Slot::more_scalar) scalars = std::max(scalars, count);
    if (each.slot == Slot::more_per_row) per_row = std::max(per_row, count);
    if (each.slot == Slot::more_optional) optionals = std::max(optionals, count);
    if (each.slot == Slot::more_flag) flags = std::max(flags, count);
  }
  workload.more_scalars.resize(scalars, 0);
  workload.more_per_row.resize(per_row);
  workload.more_optionals.resize(optionals);
  workload.more_flags.resize(flags, 0);
  // A spec without offsets has its rows from its values per row: offsets of no tokens, one per row and one more.
  if (!reads(Slot::offsets)) workload.query_start_loc.assign(workload.num_computed_tokens.size() + 1, 0);
  if (!reads(Slot::per_row))
    workload.num_computed_tokens.assign(workload.query_start_loc.empty() ? 0 : workload.query_start_loc.size() - 1, 0);
  for (auto& values : workload.more_per_row) {
    if (values.empty()) values.assign(workload.num_computed_tokens.size(), 0);
  }
}

std::string_view Spec::dtype_of(const OutputArray& output, const Workload& workload) const {
  switch (output.dtype) {
    case OutputDtype::int32: return "int32";
    case OutputDtype::int64: return "int64";
    case OutputDtype::of_input: break;
  }
  return to_string(workload.dtype);
}

std::optional<Implementation> Spec::find_builtin(std::string_view name) const {
  for (const auto& implementation : builtins()) {
    if (implementation.name == name) return implementation;
  }
  return std::nullopt;
}

std::string Spec::builtin_names() const {
  std::string names;
  for (const auto& implementation : builtins()) names += (names.empty() ? "" : ", ") + implementation.name;
  return names;
}

std::string Spec::units(const Workload& workload) const {
  const auto n = workload.rows();
  return std::to_string(n) + " " + std::string(unit()) + (n == 1 ? "" : "s");
}

std::size_t Spec::entries(const Arrays& arrays) const {
  std::size_t total = 0;
  for (const auto& array : arrays) total += array.size();
  return total;
}

namespace {

std::vector<const Spec*>& registry() {
  static std::vector<const Spec*> specs = [] {
    std::vector<const Spec*> all;
#define CHUNKMETA_APPEND_SPECS_OF(folder) \
  for (const Spec* spec : specs_of_##folder()) all.push_back(spec);
    CHUNKMETA_SPEC_FOLDERS(CHUNKMETA_APPEND_SPECS_OF)
#undef CHUNKMETA_APPEND_SPECS_OF
    return all;
  }();
  return specs;
}

}  // namespace

const std::vector<const Spec*>& all_specs() { return registry(); }

TemporarySpec::TemporarySpec(const Spec& spec) : spec_(&spec) { registry().push_back(spec_); }

TemporarySpec::~TemporarySpec() { std::erase(registry(), spec_); }

const Spec& default_spec() {
  static const Spec& spec = *find_spec(CHUNKMETA_DEFAULT_SPEC);
  return spec;
}

const Spec* find_spec(std::string_view name) {
  for (const auto* specs : {&all_specs(), &kernel_formulations()}) {
    for (const Spec* spec : *specs) {
      if (spec->name() == name) return spec;
    }
  }
  return nullptr;
}

std::string spec_names() {
  std::string names;
  for (const auto* specs : {&all_specs(), &kernel_formulations()}) {
    for (const Spec* spec : *specs) names += (names.empty() ? "" : ", ") + std::string(spec->name());
  }
  return names;
}

}  // namespace chunkmeta::harness
