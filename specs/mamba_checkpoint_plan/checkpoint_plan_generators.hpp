// The checkpoint plan's value model: Mamba's workloads (its generators) with a
// block size of 1, 2, 8 or more chunk sizes, rows moved onto, one short of and
// one past block boundaries; invalid workloads by named rule (Mamba's and the
// block size's); and the edge classes a workload exercises.
#pragma once

#include "chunkmeta/properties/generators.hpp"

namespace chunkmeta::properties {

rc::Gen<Workload> checkpoint_workloads();
rc::Gen<Workload> checkpoint_huge_batches();
std::vector<std::string> checkpoint_edge_classes(const Workload& workload);
const std::vector<std::string>& all_checkpoint_edge_classes();
std::vector<std::string> checkpoint_huge_batch_classes(const Workload& workload);
const std::vector<std::string>& all_checkpoint_huge_batch_classes();

rc::Gen<InvalidCase> checkpoint_invalid_cases();
InvalidWorkload checkpoint_invalid_of(const InvalidCase& invalid);
rc::Gen<InvalidWorkload> checkpoint_invalid_workloads();
const std::vector<std::string>& all_checkpoint_invalid_rules();

}  // namespace chunkmeta::properties
