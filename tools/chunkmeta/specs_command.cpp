// `chunkmeta specs`: the specs this build knows, as people read them or (--json)
// as programs do (the Python adapter's calling convention comes from it).
#include <iostream>
#include <string>

#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/properties/tables.hpp"
#include "cli.hpp"

namespace chunkmeta::cli {
namespace {

using harness::Json;

// The description (inputs, outputs), and what a run of the spec offers:
// its built-in implementations, properties and edge classes.
Json spec_json(const Spec& spec) {
  Json described = harness::description_json(spec);
  described["default"] = &spec == &harness::default_spec();
  Json builtins = Json::array();
  for (const auto& impl : spec.builtins()) builtins.push_back(impl.name);
  described["builtins"] = std::move(builtins);
  described["properties"] = properties::implementation_property_names(spec);
  described["edge_classes"] = properties::table_of(spec).classes.front().names;
  return described;
}

std::string signature_of(const Spec& spec) {
  std::string inputs;
  for (const auto& input : spec.inputs()) inputs += (inputs.empty() ? "" : ", ") + std::string(input.name);
  std::string outputs;
  for (const auto& output : spec.outputs()) outputs += (outputs.empty() ? "" : ", ") + std::string(output.name);
  return "(" + inputs + ") -> " + (spec.outputs().size() == 1 ? outputs : "(" + outputs + ")");
}

int list_specs(bool as_json) {
  if (as_json) {
    Json all = Json::array();
    for (const auto* specs : {&harness::all_specs(), &harness::kernel_formulations()}) {
      for (const Spec* spec : *specs) all.push_back(spec_json(*spec));
    }
    std::cout << harness::dump_line(all) << "\n";
    return kExitOk;
  }
  for (const auto* specs : {&harness::all_specs(), &harness::kernel_formulations()}) {
    if (specs == &harness::kernel_formulations()) {
      std::cout << "\nJudged by the kernels' view alone (no reference: any formulation a kernel runs right passes):\n";
    }
    for (const Spec* spec : *specs) {
      std::cout << spec->name() << (spec == &harness::default_spec() ? " (default)" : "") << "\n"
                << "  " << spec->summary() << "\n"
                << "  fn" << signature_of(*spec) << "\n"
                << "  built in: " << spec->builtin_names() << "\n";
    }
  }
  return kExitOk;
}

}  // namespace

Command add_specs_command(CLI::App& app) {
  auto as_json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("specs", "List the specs this build knows: each one's inputs in the engine's "
                                          "order, its outputs and its built-in implementations.");
  cmd->add_flag("--json", *as_json,
                "One JSON array: each spec's name, summary, inputs (name, kind, slot, dtypes), outputs (name, "
                "columns, dtype), builtins, properties and edge classes");
  return {cmd, [as_json] { return list_specs(*as_json); }};
}

}  // namespace chunkmeta::cli
