// The one list of the family's specs: each entry is a folder under specs/,
// which holds everything its specs are (specs/README.md). The harness, the
// property tables, the mutant catalogue and the Python module expand this list
// and call the hooks each folder defines for their layer, named after it:
//   harness::specs_of_<folder>()       its Specs (harness layer)
//   properties::suites_of_<folder>()   its property tables and value models
//   mutants::mutants_of_<folder>()     its slips, for the mutant catalogue
//   python::add_<folder>(module)       its drop-ins
// Adding a spec: its folder, a line here, and its folder in specs/CMakeLists.txt.
#pragma once

#define CHUNKMETA_SPEC_FOLDERS(X) X(mamba) X(fla) X(mamba_checkpoint_plan) X(conv1d_program_map) X(local_attn_virtual_batches) X(mamba_packed_grid) X(mamba_checkpointed_chunks) X(mamba_prefill_checkpoints)

// Folders whose library and drop-ins are in and whose Spec is not yet (none
// today): they define python::add_<folder>(module) only, and move to the
// list above once their Spec is in.
#define CHUNKMETA_LIBRARY_ONLY_FOLDERS(X)

// The spec a workload that names none means (the protocol's first spec):
// its workloads and answers are spelled without "spec" on the wire, and the
// CLI's compute and check use it when --spec is not given.
#define CHUNKMETA_DEFAULT_SPEC "mamba"
