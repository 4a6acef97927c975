#include "chunkmeta/harness/plugin.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <memory>

#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/plugin.h"

namespace chunkmeta::harness {
namespace {

constexpr std::int32_t kGuard = 0x7A7A7A7A;
constexpr std::size_t kGuardWords = 16;
// Sizes a plugin may ask for: the library's own cap on chunks, plus one.
constexpr std::int64_t kLargestBuffer = Limits::kDefaultMaxChunks + 1;
// Buffers offered for a workload whose size the library cannot tell (invalid input).
constexpr std::int64_t kDefaultCapacity = 64;

// One output array with guard words past its capacity.
struct GuardedBuffer {
  std::vector<std::int32_t> storage;
  std::int64_t capacity = 0;
  void reset(std::int64_t size) {
    capacity = size;
    storage.assign(static_cast<std::size_t>(size) + kGuardWords, -7);
    std::fill(storage.begin() + size, storage.end(), kGuard);
  }
  bool guard_intact() const {
    return std::all_of(storage.begin() + capacity, storage.end(), [](std::int32_t v) { return v == kGuard; });
  }
};

Misbehaviour broke_abi(const std::string& what) {
  return Misbehaviour{FindingKind::malformed_output, "broke the plugin ABI: " + what, {}};
}

Answer call_plugin(const chunkmeta_implementation_v1& impl, const Workload& w) {
  const chunkmeta_workload_v1 input{w.chunk_size, w.num_computed_tokens.data(),
                                    static_cast<std::int64_t>(w.num_computed_tokens.size()), w.query_start_loc.data(),
                                    static_cast<std::int64_t>(w.query_start_loc.size())};
  GuardedBuffer buffers[3];
  const char* names[3] = {"cu_chunk_seqlen", "seq_idx", "last_chunk_indices"};
  const auto sizes = output_sizes(view_of(w));
  std::int64_t capacity[3] = {kDefaultCapacity, kDefaultCapacity, kDefaultCapacity};
  if (sizes.ok()) {
    capacity[0] = sizes.value().cu_chunk_seqlen;
    capacity[1] = sizes.value().seq_idx;
    capacity[2] = sizes.value().last_chunk_indices;
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    for (int b = 0; b < 3; ++b) buffers[b].reset(capacity[b]);
    chunkmeta_output_v1 out{};
    out.cu_chunk_seqlen = buffers[0].storage.data();
    out.cu_chunk_seqlen_capacity = capacity[0];
    out.seq_idx = buffers[1].storage.data();
    out.seq_idx_capacity = capacity[1];
    out.last_chunk_indices = buffers[2].storage.data();
    out.last_chunk_indices_capacity = capacity[2];
    out.error_index = -1;
    const int status = impl.compute(&input, &out);
    const std::int64_t reported[3] = {out.cu_chunk_seqlen_size, out.seq_idx_size, out.last_chunk_indices_size};
    for (int b = 0; b < 3; ++b) {
      if (!buffers[b].guard_intact())
        return broke_abi(std::string("wrote past the end of ") + names[b] + " (capacity " +
                         std::to_string(capacity[b]) + ")");
    }
    switch (status) {
      case CHUNKMETA_OK: {
        ChunkMetadata result;
        Int32Array* arrays[3] = {&result.cu_chunk_seqlen, &result.seq_idx, &result.last_chunk_indices};
        for (int b = 0; b < 3; ++b) {
          if (reported[b] < 0 || reported[b] > capacity[b])
            return broke_abi(std::string("reported ") + std::to_string(reported[b]) + " entries written to " +
                             names[b] + ", whose capacity is " + std::to_string(capacity[b]));
          arrays[b]->assign(buffers[b].storage.begin(), buffers[b].storage.begin() + reported[b]);
        }
        return Outcome(std::move(result));
      }
      case CHUNKMETA_REJECTED: {
        const auto code = out.error_code ? parse_error_code(out.error_code) : std::nullopt;
        if (!code)
          return broke_abi(std::string("rejected the workload with error code ") +
                           (out.error_code ? "\"" + std::string(out.error_code) + "\"" : "NULL") +
                           ", which is not one of chunkmeta's codes");
        const auto field = out.error_field ? known_field(out.error_field) : std::nullopt;
        return Outcome(Error{*code, field.value_or(""), out.error_index < 0 ? Error::kNoIndex : out.error_index, 0, 0});
      }
      case CHUNKMETA_BUFFER_TOO_SMALL: {
        bool grew = false;
        for (int b = 0; b < 3; ++b) {
          if (reported[b] < 0 || reported[b] > kLargestBuffer)
            return broke_abi(std::string("asked for ") + std::to_string(reported[b]) + " entries of " + names[b] +
                             " (at most " + std::to_string(kLargestBuffer) + " are offered)");
          grew = grew || reported[b] > capacity[b];
          capacity[b] = std::max(capacity[b], reported[b]);
        }
        if (!grew) return broke_abi("said its buffers were too small, but asked for no larger size");
        continue;
      }
      default:
        return broke_abi("returned status " + std::to_string(status) + ", which is not a chunkmeta_status");
    }
  }
  return broke_abi("said its buffers were too small again after they were grown to the sizes it asked for");
}

}  // namespace

std::variant<std::vector<Implementation>, std::string> load_plugin(const std::string& spec) {
  const auto hash = spec.rfind('#');
  const std::string path = hash == std::string::npos ? spec : spec.substr(0, hash);
  const std::string wanted = hash == std::string::npos ? "" : spec.substr(hash + 1);
  // Kept loaded for the life of the process: implementations point into it.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return "cannot load plugin " + path + ": " + dlerror();
  void* symbol = dlsym(handle, CHUNKMETA_PLUGIN_ENTRY_V1);
  if (symbol == nullptr)
    return "plugin " + path + " does not export " + CHUNKMETA_PLUGIN_ENTRY_V1 + " (see <chunkmeta/plugin.h>)";
  const auto entry = reinterpret_cast<chunkmeta_plugin_entry_v1>(symbol);
  const chunkmeta_plugin_v1* table = entry();
  if (table == nullptr) return "plugin " + path + ": " + CHUNKMETA_PLUGIN_ENTRY_V1 + "() returned NULL";
  if (table->abi_version != CHUNKMETA_PLUGIN_ABI_VERSION)
    return "plugin " + path + " speaks ABI version " + std::to_string(table->abi_version) + "; this chunkmeta speaks " +
           std::to_string(CHUNKMETA_PLUGIN_ABI_VERSION);
  std::vector<Implementation> found;
  std::string names;
  for (std::uint32_t i = 0; i < table->implementation_count; ++i) {
    const chunkmeta_implementation_v1* impl = &table->implementations[i];
    const std::string name = impl->name ? impl->name : "";
    names += (names.empty() ? "" : ", ") + name;
    if (!wanted.empty() && name != wanted) continue;
    if (impl->compute == nullptr) return "plugin " + path + ": implementation " + name + " has no compute function";
    Implementation out;
    out.name = "plugin:" + path + "#" + name;
    out.description = impl->description ? impl->description : "";
    out.rejects_invalid_input = (impl->flags & CHUNKMETA_REJECTS_INVALID_INPUT) != 0;
    out.compute = [impl](const Workload& w) { return call_plugin(*impl, w); };
    found.push_back(std::move(out));
  }
  if (found.empty()) {
    if (wanted.empty()) return "plugin " + path + " offers no implementation";
    return "plugin " + path + " has no implementation named " + wanted + " (it has: " + names + ")";
  }
  return found;
}

}  // namespace chunkmeta::harness
