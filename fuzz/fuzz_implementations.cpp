// The built-in implementations, or those of a plugin named by
// CHUNKMETA_FUZZ_PLUGIN=PATH[#NAME] (loaded into the fuzzer, so an outside
// implementation built with -fsanitize=fuzzer-no-link is fuzzed with coverage).
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "chunkmeta/harness/plugin.hpp"
#include "chunkmeta/harness/report.hpp"
#include "fuzz_implementations.hpp"

namespace {

// Every implementation the plugin exports, or nullptr without a plugin.
const std::vector<chunkmeta::harness::Implementation>* plugin_implementations() {
  static const auto loaded = []() -> std::optional<std::vector<chunkmeta::harness::Implementation>> {
    const char* plugin = std::getenv("CHUNKMETA_FUZZ_PLUGIN");
    if (plugin == nullptr || *plugin == '\0') return std::nullopt;
    auto result = chunkmeta::harness::load_plugin(plugin);
    if (const auto* why = std::get_if<std::string>(&result)) {
      std::fprintf(stderr, "CHUNKMETA_FUZZ_PLUGIN: %s\n", why->c_str());
      std::abort();
    }
    auto impls = std::get<std::vector<chunkmeta::harness::Implementation>>(std::move(result));
    std::fprintf(stderr, "fuzzing %zu plugin implementation(s) from %s\n", impls.size(), plugin);
    return impls;
  }();
  return loaded ? &*loaded : nullptr;
}

}  // namespace

const std::vector<chunkmeta::harness::Implementation>& fuzz_implementations(const chunkmeta::harness::Spec& spec) {
  const auto* plugin = plugin_implementations();
  if (plugin == nullptr) return spec.builtins();
  static std::map<const chunkmeta::harness::Spec*, std::vector<chunkmeta::harness::Implementation>> of_spec;
  auto [it, added] = of_spec.try_emplace(&spec);
  if (added) {
    for (const auto& implementation : *plugin)
      if (implementation.spec == &spec) it->second.push_back(implementation);
  }
  return it->second;
}

int fuzz_differential(std::initializer_list<const chunkmeta::harness::Spec*> specs, const std::uint8_t* data,
                      std::size_t size, std::string_view target) {
  using namespace chunkmeta::harness;
  static const std::vector<Implementation> all = [&] {
    std::vector<Implementation> each;
    for (const Spec* spec : specs) {
      const auto& of_spec = fuzz_implementations(*spec);
      each.insert(each.end(), of_spec.begin(), of_spec.end());
    }
    return each;
  }();
  if (all.empty()) return 0;  // a plugin without an implementation of these specs: nothing to compare
  const std::span<const std::uint8_t> input(data, size);
  const Implementation& chosen = all[(size == 0 ? 0 : data[0] & 0x7f) % all.size()];
  const Workload workload = chosen.spec->decode_fuzz_input(input);
  abort_on_failure(check_one(workload, chosen, "fuzz " + std::string(target), chosen.name == "reference"), input,
                   target);
  return 0;
}
