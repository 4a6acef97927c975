#include "specs_command.hpp"

#include <iostream>
#include <string>

#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/properties/tables.hpp"

namespace chunkmeta::cli {
namespace {

using harness::Json;
using harness::Spec;

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

}  // namespace

int list_specs(bool as_json) {
  if (as_json) {
    Json all = Json::array();
    for (const Spec* spec : harness::all_specs()) all.push_back(spec_json(*spec));
    std::cout << harness::dump_line(all) << "\n";
    return 0;
  }
  for (const Spec* spec : harness::all_specs()) {
    std::cout << spec->name() << (spec == &harness::default_spec() ? " (default)" : "") << "\n"
              << "  " << spec->summary() << "\n"
              << "  fn" << signature_of(*spec) << "\n"
              << "  built in: " << spec->builtin_names() << "\n";
  }
  return 0;
}

}  // namespace chunkmeta::cli
