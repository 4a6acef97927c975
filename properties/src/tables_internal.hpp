// The tables' makers, one per spec file; tables.cpp keeps one of each. And
// the names the spec files share.
#pragma once

#include "builders.hpp"

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

engine::PropertyTable make_mamba_table();
engine::PropertyTable make_fla_table(const harness::Spec& spec);

}  // namespace chunkmeta::properties
