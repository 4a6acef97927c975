#include "chunkmeta/harness/spec.hpp"

namespace chunkmeta::harness {

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
  // A spec without offsets has its rows from its values per row: offsets of no tokens, one per row and one more.
  if (!reads(Slot::offsets)) {
    workload.query_start_loc.assign(workload.num_computed_tokens.size() + 1, 0);
    return;
  }
  if (reads(Slot::per_row)) return;
  workload.num_computed_tokens.assign(workload.query_start_loc.empty() ? 0 : workload.query_start_loc.size() - 1, 0);
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

const std::vector<const Spec*>& all_specs() {
  static const std::vector<const Spec*> specs = [] {
    std::vector<const Spec*> all;
#define CHUNKMETA_APPEND_SPECS_OF(folder) \
  for (const Spec* spec : specs_of_##folder()) all.push_back(spec);
    CHUNKMETA_SPEC_FOLDERS(CHUNKMETA_APPEND_SPECS_OF)
#undef CHUNKMETA_APPEND_SPECS_OF
    return all;
  }();
  return specs;
}

const Spec& default_spec() {
  static const Spec& spec = *find_spec(CHUNKMETA_DEFAULT_SPEC);
  return spec;
}

const Spec* find_spec(std::string_view name) {
  for (const Spec* spec : all_specs()) {
    if (spec->name() == name) return spec;
  }
  return nullptr;
}

std::string spec_names() {
  std::string names;
  for (const Spec* spec : all_specs()) names += (names.empty() ? "" : ", ") + std::string(spec->name());
  return names;
}

}  // namespace chunkmeta::harness
