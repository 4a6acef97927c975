// Mamba's spec (specs/mamba/README.md) as the harness sees it, for the code
// in this folder and the folders whose relations read it.
#pragma once

#include "chunkmeta/chunkmeta.hpp"
#include "chunkmeta/harness/spec.hpp"

namespace chunkmeta::harness {

const Spec& mamba_spec();

// Mamba's outputs as arrays, and back (moved, never copied).
Arrays arrays_of(ChunkMetadata&& result);
ChunkMetadata chunk_metadata_of(Arrays&& arrays);

}  // namespace chunkmeta::harness
