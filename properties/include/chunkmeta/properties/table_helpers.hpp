// The names every spec folder's property table uses, and the hook each
// folder defines (specs/registry.hpp): its suites, one per spec.
#pragma once

#include "chunkmeta/properties/builders.hpp"
#include "chunkmeta/properties/tables.hpp"
#include "registry.hpp"

namespace chunkmeta::properties {

namespace tables {
namespace gen = rc::gen;
using builders::counterexample;
using engine::Case;
using engine::Property;
using harness::Answer;
using harness::Counterexample;
using harness::Finding;
using harness::FindingKind;
using harness::Implementation;
using harness::Outcome;
using harness::Spec;
}  // namespace tables

#define CHUNKMETA_DECLARE_SUITES_OF(folder) std::vector<Suite> suites_of_##folder();
CHUNKMETA_SPEC_FOLDERS(CHUNKMETA_DECLARE_SUITES_OF)
#undef CHUNKMETA_DECLARE_SUITES_OF

}  // namespace chunkmeta::properties
