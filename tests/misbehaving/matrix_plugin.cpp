// A plugin whose implementations of Mamba's chunk metadata misbehave in one
// way at one time, for the misbehaviour matrix (tests/misbehaving/matrix.py):
// each is named <behaviour>_<when>, right (chunkmeta's fast_into) except when
// its moment comes:
//   when:  first  the first two calls in the process (an isolated plugin's child is sent its warm-up first)
//          nth    every workload of two or more rows
//   behaviour: wrong (cu_chunk_seqlen[0] off by one), crash (SIGSEGV), hang (sleeps), exit (_Exit(3)),
//              changes_input (right, and writes through its const pointer: query_start_loc's last entry + 1),
//              prints (right, and prints a line to stdout: C stdio and descriptor 1)
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "chunkmeta/chunkmeta.hpp"
#include "chunkmeta/plugin.h"

namespace {

enum class Behaviour { wrong, crash, hang, exit, changes_input, prints };
enum class When { first, nth };

template <typename T>
std::span<T> span_of(T* data, std::int64_t length) {
  return {data, static_cast<std::size_t>(length < 0 ? 0 : length)};
}

int right(const chunkmeta_workload_v1* in, chunkmeta_output_v1* out) {
  const chunkmeta::WorkloadView view{in->chunk_size, span_of(in->num_computed_tokens, in->num_computed_tokens_length),
                                     span_of(in->query_start_loc, in->query_start_loc_length)};
  const auto needed = chunkmeta::output_sizes(view);
  if (!needed.ok()) {
    out->error_code = chunkmeta::to_string(needed.error().code).data();
    out->error_field = needed.error().field.data();
    out->error_index = needed.error().index;
    return CHUNKMETA_REJECTED;
  }
  out->cu_chunk_seqlen_size = needed.value().cu_chunk_seqlen;
  out->seq_idx_size = needed.value().seq_idx;
  out->last_chunk_indices_size = needed.value().last_chunk_indices;
  const chunkmeta::OutputBuffers buffers{span_of(out->cu_chunk_seqlen, out->cu_chunk_seqlen_capacity),
                                         span_of(out->seq_idx, out->seq_idx_capacity),
                                         span_of(out->last_chunk_indices, out->last_chunk_indices_capacity)};
  return chunkmeta::fast_into(view, buffers).ok() ? CHUNKMETA_OK : CHUNKMETA_BUFFER_TOO_SMALL;
}

template <Behaviour behaviour, When when>
int misbehaving(const chunkmeta_workload_v1* in, chunkmeta_output_v1* out) {
  static std::atomic<int> calls{0};
  const int call = ++calls;
  const bool due = when == When::first ? call <= 2 : in->num_computed_tokens_length >= 2;
  const int status = right(in, out);
  if (!due || status != CHUNKMETA_OK) return status;
  switch (behaviour) {
    case Behaviour::wrong:
      if (out->cu_chunk_seqlen_size > 0) out->cu_chunk_seqlen[0] += 1;
      return status;
    case Behaviour::crash: std::raise(SIGSEGV); return status;
    case Behaviour::hang:
      while (true) pause();
    case Behaviour::exit: std::_Exit(3);
    case Behaviour::changes_input:
      // The harness's buffer, const in the ABI: C lets a plugin write there all the same.
      if (in->query_start_loc_length > 0)
        const_cast<std::int64_t*>(in->query_start_loc)[in->query_start_loc_length - 1] += 1;
      return status;
    case Behaviour::prints:
      // Right, and a line on stdout through C stdio and one straight to descriptor 1: never the protocol's.
      std::printf("matrix_plugin: computing the chunk metadata\n");
      std::fflush(stdout);
      if (::write(1, "matrix_plugin: written to fd 1\n", 31) < 0) return status;
      return status;
  }
  return status;
}

constexpr std::uint32_t kValidates = CHUNKMETA_REJECTS_INVALID_INPUT;
const chunkmeta_implementation_v1 implementations[] = {
    {"wrong_first", "off by one on its first two calls", kValidates, misbehaving<Behaviour::wrong, When::first>},
    {"wrong_nth", "off by one on two or more rows", kValidates, misbehaving<Behaviour::wrong, When::nth>},
    {"crash_first", "SIGSEGV on its first two calls", kValidates, misbehaving<Behaviour::crash, When::first>},
    {"crash_nth", "SIGSEGV on two or more rows", kValidates, misbehaving<Behaviour::crash, When::nth>},
    {"hang_first", "never returns from its first call", kValidates, misbehaving<Behaviour::hang, When::first>},
    {"hang_nth", "never returns on two or more rows", kValidates, misbehaving<Behaviour::hang, When::nth>},
    {"exit_first", "ends the process on its first call", kValidates, misbehaving<Behaviour::exit, When::first>},
    {"exit_nth", "ends the process on two or more rows", kValidates, misbehaving<Behaviour::exit, When::nth>},
    {"changes_input_first", "changes query_start_loc on its first two calls", kValidates,
     misbehaving<Behaviour::changes_input, When::first>},
    {"changes_input_nth", "changes query_start_loc on two or more rows", kValidates,
     misbehaving<Behaviour::changes_input, When::nth>},
    {"prints_first", "right; prints to stdout on its first two calls", kValidates,
     misbehaving<Behaviour::prints, When::first>},
    {"prints_nth", "right; prints to stdout on two or more rows", kValidates, misbehaving<Behaviour::prints, When::nth>},
};
const chunkmeta_plugin_v1 plugin = {CHUNKMETA_PLUGIN_ABI_VERSION, std::size(implementations), implementations};

}  // namespace

CHUNKMETA_PLUGIN_EXPORT const chunkmeta_plugin_v1* chunkmeta_get_plugin_v1(void) { return &plugin; }
