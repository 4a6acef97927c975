// Plugins that misbehave while they are loaded, one per build (the
// definition CHUNKMETA_MISBEHAVE picks): the harness reads a plugin's table in
// a child process, so each is a finding of the plugin, never the end or the
// hang of the harness.
//   crash_on_load   a static constructor that dies of SIGSEGV (dlopen never returns)
//   hang_on_table   an entry point that never returns
//   exit_on_table   an entry point that ends the process
#include <csignal>
#include <cstdlib>
#include <unistd.h>

#include "chunkmeta/plugin.h"

#define CHUNKMETA_CRASH_ON_LOAD 1
#define CHUNKMETA_HANG_ON_TABLE 2
#define CHUNKMETA_EXIT_ON_TABLE 3

namespace {

#if CHUNKMETA_MISBEHAVE == CHUNKMETA_CRASH_ON_LOAD
struct CrashOnLoad {
  CrashOnLoad() { std::raise(SIGSEGV); }
} crash_on_load;
#endif

int never_called(const chunkmeta_workload_v1*, chunkmeta_output_v1*) { return CHUNKMETA_REJECTED; }

const chunkmeta_implementation_v1 implementations[] = {{"never", "never called", 0, never_called}};
const chunkmeta_plugin_v1 plugin = {CHUNKMETA_PLUGIN_ABI_VERSION, 1, implementations};

}  // namespace

CHUNKMETA_PLUGIN_EXPORT const chunkmeta_plugin_v1* chunkmeta_get_plugin_v1(void) {
#if CHUNKMETA_MISBEHAVE == CHUNKMETA_HANG_ON_TABLE
  while (true) pause();
#elif CHUNKMETA_MISBEHAVE == CHUNKMETA_EXIT_ON_TABLE
  std::_Exit(3);
#endif
  return &plugin;
}
