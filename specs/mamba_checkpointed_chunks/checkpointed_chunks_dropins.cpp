// The checkpointed chunker's drop-in is Mamba's compute_chunk_metadata given
// checkpoint_offsets_p (specs/mamba/mamba_dropins.cpp, vLLM #57329's
// signature); here, the size of its out= buffers for an engine's limits.
#include <cstdint>

#include "chunkmeta/checkpointed_chunks.hpp"
#include "fastcall.hpp"

namespace chunkmeta::python {

void add_mamba_checkpointed_chunks(py::module_& m) {
  py::options options;
  options.disable_function_signatures();
  m.def(
      "checkpointed_chunks_max_output_sizes",
      [](py::handle max_tokens_given, py::handle max_rows_given, py::handle chunk_size_given) {
        const std::int64_t max_tokens = to_int64(max_tokens_given, "max_tokens");
        const std::int64_t max_rows = to_int64(max_rows_given, "max_rows");
        const std::int64_t chunk_size = to_int64(chunk_size_given, "chunk_size");
        const auto sizes = checkpointed_chunks::max_output_sizes(max_tokens, max_rows, chunk_size);
        if (!sizes.ok()) raise_invalid(sizes.error());
        const auto& n = sizes.value();
        return py::make_tuple(n.chunks.cu_chunk_seqlen, n.chunks.seq_idx, n.chunks.last_chunk_indices, n.checkpoints);
      },
      py::arg("max_tokens"), py::arg("max_rows"), py::arg("chunk_size"),
      R"doc(checkpointed_chunks_max_output_sizes(max_tokens, max_rows, chunk_size)
--

Returns (cu_chunk_seqlen, seq_idx, last_chunk_indices, checkpoint_chunk_indices):
buffer sizes that hold compute_chunk_metadata(..., checkpoint_offsets_p=...)'s
results for every prefill step with at most max_tokens new tokens and max_rows
requests at chunk_size (Mamba's bound, and one chunk more per row).)doc");
}

}  // namespace chunkmeta::python
