// Runs every spec's property suite under GoogleTest: one test per (spec,
// implementation, property), registered at start-up so that
// gtest_discover_tests makes each its own ctest test. A failure prints the
// shrunk counterexample report and leaves it, with a corpus entry, in
// $CHUNKMETA_REPORT_DIR; its rerun command sets the failing run's seed.
#include <gtest/gtest.h>

#include <cctype>

#include "chunkmeta/engine/run.hpp"
#include "chunkmeta/properties/tables.hpp"

namespace {

using namespace chunkmeta;

// "fast-into-int32" -> "FastIntoInt32": test suite names are identifiers.
std::string camel(const std::string& name) {
  std::string out;
  bool upper = true;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out;
}

// Cases per property: the reference and the returning fast entry point get the
// most; the other entry points share their code paths past the adapter.
int default_cases(const std::string& implementation, const engine::Property& property) {
  if (property.scope == engine::Scope::library) return 10000;
  if (implementation == "fast" || implementation == "reference") return 10000;
  return 4000;
}

class PropertyTest : public testing::Test {
 public:
  PropertyTest(harness::Implementation implementation, const engine::Property* property, std::string rerun)
      : implementation_(std::move(implementation)), property_(property), rerun_(std::move(rerun)) {}

  void TestBody() override {
    engine::SuiteOptions options;
    options.default_cases = default_cases(implementation_.name, *property_);
    options.rerun_command = rerun_;
    const auto result = engine::run_property(*property_, implementation_, options);
    std::cout << "  " << result.cases << " cases (seed " << result.seed << ")\n";
    if (result.passed) return;
    if (result.counterexample) {
      ADD_FAILURE() << harness::render(*result.counterexample, result.files) << result.message;
    } else {
      ADD_FAILURE() << result.message;
    }
  }

 private:
  harness::Implementation implementation_;
  const engine::Property* property_;
  std::string rerun_;
};

// Suites are named by spec and implementation: the default spec's as they always were
// ("Fast", "Library"), another spec's prefixed ("FlaChunkIndicesFast").
void register_property_tests(const std::string& program) {
  for (const harness::Spec* spec : harness::all_specs()) {
    const std::string prefix = spec == &harness::default_spec() ? "" : camel(std::string(spec->name()));
    const engine::PropertyTable& table = properties::table_of(*spec);
    bool library_registered = false;
    for (const auto& implementation : spec->builtins()) {
      for (const auto& property : table.properties) {
        const bool library = property.scope == engine::Scope::library;
        if (library && library_registered) continue;
        const std::string suite = prefix + (library ? "Library" : camel(implementation.name));
        const std::string rerun = "CHUNKMETA_SEED={seed} " + program + " --gtest_filter=" + suite + "." + property.name;
        testing::RegisterTest(suite.c_str(), property.name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                              [=, &property]() -> testing::Test* {
                                return new PropertyTest(implementation, &property, rerun);
                              });
      }
      library_registered = true;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  register_property_tests(argv[0]);
  return RUN_ALL_TESTS();
}
