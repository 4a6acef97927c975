// Each spec's property suite: its properties (differential, invariants,
// relations, invalid input, the library's own), drawn from its generators, with
// the edge classes its summary lists. The run loop is the engine's.
#pragma once

#include "chunkmeta/engine/property.hpp"

namespace chunkmeta::properties {

const engine::PropertyTable& table_of(const harness::Spec& spec);

// The behaviour sentences of a spec's implementation properties, in order.
std::vector<std::string> implementation_property_names(const harness::Spec& spec);

}  // namespace chunkmeta::properties
