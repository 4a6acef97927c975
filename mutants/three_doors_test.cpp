// Every mutant of the catalogue through each door an implementation can come in
// by: built in, as a plugin (isolated in `chunkmeta compute`), as a Python
// function through the adapter, and as a Python function handed to the Python
// module's chunkmeta.check() in its own process. Each door must catch it with the
// same minimal counterexample, because they share one suite, one seed and one shrinker.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "chunkmeta/engine/run.hpp"
#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/report.hpp"
#include "chunkmeta/harness/subprocess.hpp"
#include "chunkmeta/properties/tables.hpp"
#include "mutants.hpp"

namespace chunkmeta {
namespace {

constexpr std::uint64_t kSeed = 20261202;  // the mutant catalogue's seed

struct Caught {
  std::string property;
  harness::Workload workload;
  std::string finding;
  std::string actual;
};

// With `property` set, only that property runs: every property draws its
// cases from the same seed, so the catching property's counterexample does not
// depend on the ones before it, which passed built in.
Caught run_door(const harness::Implementation& impl, const std::string& property = "") {
  engine::SuiteOptions options;
  options.seed = kSeed;
  options.default_cases = 10000;
  options.include_library = false;
  options.stop_at_first_failure = true;
  options.write_reports = false;
  if (!property.empty()) options.only = {property};
  const auto suite = engine::run_suite(properties::table_of(*impl.spec), impl, options);
  long long calls = 0;
  for (const auto& p : suite.properties) calls += p.implementation_calls;
  std::cout << impl.name << ": " << suite.cases() << " cases, " << calls << " workloads sent, " << suite.seconds()
            << " s (" << suite.implementation_seconds() << " s waiting for the implementation)\n";
  EXPECT_FALSE(suite.passed()) << impl.name << " was not caught in " << suite.cases() << " cases";
  Caught caught;
  const engine::PropertyResult* failed = suite.first_failure();
  if (failed == nullptr || !failed->counterexample) return caught;
  const auto& cx = *failed->counterexample;
  std::cout << harness::render(cx);
  caught.property = cx.property;
  caught.workload = cx.workload;
  caught.finding = std::string(harness::to_string(cx.finding.kind)) + ": " + cx.finding.summary;
  caught.actual = cx.finding.actual ? harness::to_json(*impl.spec, *cx.finding.actual).dump() : "(no answer)";
  return caught;
}

void expect_same(const harness::Spec& spec, const Caught& built_in, const Caught& other, const std::string& door) {
  EXPECT_EQ(other.property, built_in.property) << door;
  EXPECT_EQ(harness::to_json(spec, other.workload).dump(), harness::to_json(spec, built_in.workload).dump()) << door;
  EXPECT_EQ(other.finding, built_in.finding) << door;
  EXPECT_EQ(other.actual, built_in.actual) << door;
}

std::string python_name(const std::string& name) {
  std::string out;
  for (char c : name) out += c == '-' ? '_' : c;
  return out;
}

// The fourth door: mutants/check_door.py runs chunkmeta.check() on
// the Python mutant and prints what it caught as one JSON line.
Caught run_check_door(const harness::Spec& spec, const std::string& name, const std::string& property) {
  const std::string command = "PYTHONPATH=" + harness::shell_quote(CHUNKMETA_PYTHON_PACKAGE_PARENT) + " " +
                              harness::shell_quote(CHUNKMETA_TORCH_PYTHON) + " " + CHUNKMETA_SOURCE_DIR +
                              "/mutants/check_door.py " + std::string(spec.name()) + " " + name + " " +
                              std::to_string(kSeed) + " " + property;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  std::string output;
  char buffer[4096];
  while (pipe && std::fgets(buffer, sizeof buffer, pipe.get()) != nullptr) output += buffer;
  Caught caught;
  const auto line = harness::Json::parse(output, nullptr, false);
  EXPECT_TRUE(line.is_object()) << "chunkmeta.check() door printed: " << output;
  if (!line.is_object()) return caught;
  caught.property = line.at("property").get<std::string>();
  const auto workload = harness::parse_workload_line(line.at("workload").get<std::string>());
  if (const auto* w = std::get_if<harness::SpecWorkload>(&workload)) caught.workload = w->workload;
  caught.finding = line.at("finding").get<std::string>();
  caught.actual = line.at("actual").get<std::string>();
  return caught;
}

// mutants/mutants.py calls the slips through the mutant plugin: set before any process is started (the
// Python doors, started through the harness's process guard, inherit it).
[[maybe_unused]] const bool plugin_named_for_python = ::setenv("CHUNKMETA_MUTANT_PLUGIN", CHUNKMETA_MUTANT_PLUGIN, 1) == 0;

// A sanitized plugin cannot be loaded into a python3 that was not started with the sanitizer's runtime.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitizedPlugin = true;
#elif defined(__has_feature)
constexpr bool kSanitizedPlugin = __has_feature(address_sanitizer);
#else
constexpr bool kSanitizedPlugin = false;
#endif

class ThreeDoors : public testing::TestWithParam<mutants::Mutant> {};

TEST_P(ThreeDoors, EachDoorCatchesTheMutantWithTheSameMinimalCounterexample) {
  const auto& mutant = GetParam();
  const harness::Spec& spec = *mutant.implementation.spec;
  const Caught built_in = run_door(mutant.implementation);
  ASSERT_FALSE(built_in.property.empty());

  harness::ResolveOptions isolated;
  isolated.self_path = CHUNKMETA_CLI;
  auto plugin = harness::resolve_implementations(
      spec, "plugin:" + std::string(CHUNKMETA_MUTANT_PLUGIN) + "#" + mutant.implementation.name, isolated);
  ASSERT_TRUE(std::holds_alternative<std::vector<harness::Implementation>>(plugin)) << std::get<std::string>(plugin);
  // The other doors run only the property that caught it built in (see run_door).
  expect_same(spec, built_in, run_door(std::get<0>(plugin).front(), built_in.property), "plugin");

  if (mutant.slip_of_validation) return;  // the Python doors send valid workloads only, as engines do
  if (std::string(CHUNKMETA_PYTHON).empty()) GTEST_SKIP() << "no python3: the Python door was not tried";
  if (kSanitizedPlugin) GTEST_SKIP() << "a sanitized build: python3 cannot load its mutant plugin (the Python doors were not tried)";
  harness::SubprocessOptions python;
  python.command = harness::shell_quote(CHUNKMETA_PYTHON) + " " + CHUNKMETA_SOURCE_DIR +
                   "/adapters/python/chunkmeta_adapter.py --lists " + CHUNKMETA_SOURCE_DIR +
                   "/mutants/mutants.py:" + python_name(mutant.implementation.name);
  auto through_adapter = harness::subprocess_implementation("python:" + mutant.implementation.name, spec, python);
  through_adapter.rejects_invalid_input = false;  // an engine function: valid workloads only
  expect_same(spec, built_in, run_door(through_adapter, built_in.property), "python");

  if (std::string(CHUNKMETA_PYTHON_PACKAGE_PARENT).empty()) GTEST_SKIP() << "no Python module: chunkmeta.check() not tried";
  expect_same(spec, built_in, run_check_door(spec, python_name(mutant.implementation.name), built_in.property),
              "chunkmeta.check()");
}

INSTANTIATE_TEST_SUITE_P(Mutants, ThreeDoors, testing::ValuesIn(mutants::catalogue()),
                         [](const auto& info) { return python_name(info.param.implementation.name); });

}  // namespace
}  // namespace chunkmeta
