#include "chunkmeta/harness/states.hpp"

namespace chunkmeta::harness {

kernel_view::Batch batch_of(const Workload& workload, bool with_computed) {
  return {with_computed ? std::span<const std::int64_t>(workload.num_computed_tokens) : std::span<const std::int64_t>(),
          workload.query_start_loc};
}

std::optional<kernel_view::Fault> too_few_outputs(const Spec& spec, const Arrays& arrays, std::size_t needed) {
  if (arrays.size() >= needed) return std::nullopt;
  return kernel_view::Fault{"kernel-adequate",
                            "the output has " + std::to_string(arrays.size()) + " arrays; a kernel reads " +
                                std::to_string(needed) + " (" + std::string(spec.outputs()[arrays.size()].name) +
                                " is missing)",
                            -1, -1};
}

std::optional<kernel_view::Fault> mamba2_states(const Workload& workload, bool with_computed, const Arrays& arrays,
                                                std::size_t cu, std::size_t seq_idx, std::size_t last,
                                                std::int64_t cache_block, kernel_view::Scan* scanned) {
  const kernel_view::ThreeArrays chunks{arrays[cu], arrays[seq_idx], arrays[last]};
  const kernel_view::Batch batch = batch_of(workload, with_computed);
  kernel_view::Scan scan = kernel_view::scan(batch, workload.chunk_size, chunks);
  std::optional<kernel_view::Fault> fault = scan.fault;
  if (!fault && cache_block > 0) {
    fault = kernel_view::cache_adequate(batch, cache_block, chunks, scan, cache_block == workload.chunk_size);
  }
  if (scanned != nullptr) *scanned = std::move(scan);
  return fault;
}

}  // namespace chunkmeta::harness
