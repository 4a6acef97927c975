// FLA's two specs (specs/fla/README.md) as the harness sees them, for the
// code in this folder.
#pragma once

#include "chunkmeta/harness/spec.hpp"

namespace chunkmeta::harness {

const Spec& fla_chunk_indices_spec();
const Spec& fla_chunk_offsets_spec();

}  // namespace chunkmeta::harness
