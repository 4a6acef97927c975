// The built-in implementations, or those of a plugin named by
// CHUNKMETA_FUZZ_PLUGIN=PATH[#NAME] (loaded into the fuzzer, so an outside
// implementation built with -fsanitize=fuzzer-no-link is fuzzed with coverage).
#include <cstdio>
#include <cstdlib>

#include "chunkmeta/harness/implementations.hpp"
#include "chunkmeta/harness/plugin.hpp"
#include "fuzz_implementations.hpp"

const std::vector<chunkmeta::harness::Implementation>& fuzz_implementations() {
  static const std::vector<chunkmeta::harness::Implementation> chosen = [] {
    const char* plugin = std::getenv("CHUNKMETA_FUZZ_PLUGIN");
    if (plugin == nullptr || *plugin == '\0') return chunkmeta::harness::builtin_implementations();
    auto loaded = chunkmeta::harness::load_plugin(plugin);
    if (const auto* why = std::get_if<std::string>(&loaded)) {
      std::fprintf(stderr, "CHUNKMETA_FUZZ_PLUGIN: %s\n", why->c_str());
      std::abort();
    }
    auto impls = std::get<std::vector<chunkmeta::harness::Implementation>>(std::move(loaded));
    std::fprintf(stderr, "fuzzing %zu plugin implementation(s) from %s\n", impls.size(), plugin);
    return impls;
  }();
  return chosen;
}
