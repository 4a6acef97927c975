// Example plugin: chunkmeta's own fast implementation behind the C ABI of
// <chunkmeta/plugin.h>. An implementation in another language does the same:
// read the workload, write into the caller's buffers, say what it wrote.
//   chunkmeta check --impl plugin:build/default/examples/libchunkmeta_fast_plugin.so
#include <span>

#include "chunkmeta/chunkmeta.hpp"
#include "chunkmeta/plugin.h"

namespace {

template <typename T>
std::span<T> span_of(T* data, std::int64_t length) {
  return {data, static_cast<std::size_t>(length < 0 ? 0 : length)};
}

void set_sizes(chunkmeta_output_v1* out, const chunkmeta::OutputSizes& sizes) {
  out->cu_chunk_seqlen_size = sizes.cu_chunk_seqlen;
  out->seq_idx_size = sizes.seq_idx;
  out->last_chunk_indices_size = sizes.last_chunk_indices;
}

int reject(chunkmeta_output_v1* out, const chunkmeta::Error& error) {
  // Both strings are the library's static, NUL-terminated spellings.
  out->error_code = chunkmeta::to_string(error.code).data();
  out->error_field = error.field.data();
  out->error_index = error.index;
  return CHUNKMETA_REJECTED;
}

int compute_fast(const chunkmeta_workload_v1* in, chunkmeta_output_v1* out) {
  const chunkmeta::WorkloadView view{in->chunk_size, span_of(in->num_computed_tokens, in->num_computed_tokens_length),
                                     span_of(in->query_start_loc, in->query_start_loc_length)};
  const chunkmeta::OutputBuffers buffers{span_of(out->cu_chunk_seqlen, out->cu_chunk_seqlen_capacity),
                                         span_of(out->seq_idx, out->seq_idx_capacity),
                                         span_of(out->last_chunk_indices, out->last_chunk_indices_capacity)};
  const auto written = chunkmeta::fast_into(view, buffers);
  if (written.ok()) {
    set_sizes(out, written.value());
    return CHUNKMETA_OK;
  }
  if (written.error().code == chunkmeta::ErrorCode::output_buffer_too_small) {
    const auto needed = chunkmeta::output_sizes(view);  // valid here: only the buffers were short
    if (needed.ok()) {
      set_sizes(out, needed.value());
      return CHUNKMETA_BUFFER_TOO_SMALL;
    }
  }
  return reject(out, written.error());
}

const chunkmeta_implementation_v1 implementations[] = {
    {"fast", "chunkmeta's fast_into, int64 input, validating", CHUNKMETA_REJECTS_INVALID_INPUT, compute_fast},
};
const chunkmeta_plugin_v1 plugin = {CHUNKMETA_PLUGIN_ABI_VERSION, 1, implementations};

}  // namespace

CHUNKMETA_PLUGIN_EXPORT const chunkmeta_plugin_v1* chunkmeta_get_plugin_v1(void) { return &plugin; }
