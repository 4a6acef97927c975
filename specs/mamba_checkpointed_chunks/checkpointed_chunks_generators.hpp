// The checkpointed chunks' generators (specs/mamba_checkpointed_chunks):
// Mamba's workloads, each row given a checkpoint offset drawn against the
// row's own grid (on it, one either side, off it, at the first and the last
// allowed token, none).
#pragma once

#include "chunkmeta/properties/generators.hpp"

namespace chunkmeta::properties {

rc::Gen<Workload> checkpointed_valid_workloads();
// Mamba's huge batches, a checkpoint in about one row with new tokens in four.
rc::Gen<Workload> checkpointed_huge_batches();

// Mamba's rules (its domain is checked first), then the offsets': their
// length, a negative one, one at or past its row's new tokens.
rc::Gen<InvalidCase> checkpointed_invalid_cases();
InvalidWorkload checkpointed_invalid_of(const InvalidCase& invalid);
rc::Gen<InvalidWorkload> checkpointed_invalid_workloads();
const std::vector<std::string>& all_checkpointed_invalid_rules();

// Mamba's edge classes, then the checkpoints'.
std::vector<std::string> checkpointed_edge_classes(const Workload& workload);
const std::vector<std::string>& all_checkpointed_edge_classes();

}  // namespace chunkmeta::properties
