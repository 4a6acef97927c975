// A plugin written against ABI version 2 (lib/include/chunkmeta/plugin.h), as
// one built before version 3 existed: FLA's chunk indices through the
// library, validating its input like the reference. With
// CHUNKMETA_V2_UNFIT_SPEC set when the table is read, a second implementation
// claims that spec, one version 2 cannot pass (the harness must refuse the
// plugin and say why).
#include <algorithm>
#include <cstdlib>
#include <span>
#include <vector>

#include "chunkmeta/fla.hpp"
#include "chunkmeta/plugin.h"

namespace {

int rejected(const chunkmeta::Error& error, chunkmeta_output_v2* output) {
  // The library's names are views of static strings (ErrorCode's spelling, its field constants).
  output->error_code = chunkmeta::to_string(error.code).data();
  output->error_field = error.field.data();
  output->error_index = error.index;
  return CHUNKMETA_REJECTED;
}

int fla_chunk_indices(const chunkmeta_workload_v2* workload, chunkmeta_output_v2* output) {
  const chunkmeta::fla::View64 view{workload->chunk_size,
                                    std::span<const std::int64_t>(workload->offsets,
                                                                  static_cast<std::size_t>(workload->offsets_length))};
  const auto sizes = chunkmeta::fla::output_sizes(view);
  if (!sizes.ok()) return rejected(sizes.error(), output);
  const std::int64_t entries = 2 * sizes.value().chunks;
  output->sizes[0] = entries;
  if (output->capacities[0] < entries) return CHUNKMETA_BUFFER_TOO_SMALL;
  std::vector<std::int64_t> wide(static_cast<std::size_t>(entries));
  const auto written = chunkmeta::fla::chunk_indices_into(view, wide);
  if (!written.ok()) return rejected(written.error(), output);
  std::transform(wide.begin(), wide.end(), output->arrays[0], [](std::int64_t v) { return static_cast<std::int32_t>(v); });
  return CHUNKMETA_OK;
}

int never_called(const chunkmeta_workload_v2*, chunkmeta_output_v2*) { return CHUNKMETA_REJECTED; }

}  // namespace

CHUNKMETA_PLUGIN_EXPORT const chunkmeta_plugin_v2* chunkmeta_get_plugin_v2(void) {
  static const char* unfit = std::getenv("CHUNKMETA_V2_UNFIT_SPEC");
  static const chunkmeta_implementation_v2 implementations[] = {
      {"v2-fla-indices", "FLA's chunk indices through ABI version 2", "fla.chunk_indices",
       CHUNKMETA_REJECTS_INVALID_INPUT, fla_chunk_indices},
      {"v2-unfit", "claims a spec version 2 cannot pass", unfit, 0, never_called}};
  static const chunkmeta_plugin_v2 plugin = {CHUNKMETA_PLUGIN_ABI_VERSION_2, unfit == nullptr ? 1u : 2u, implementations};
  return &plugin;
}
