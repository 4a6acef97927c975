// Drives the real `chunkmeta` binary through pipes: JSON Lines in, one JSON
// line out per input line, exit codes 0 / 1 / 2.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "chunkmeta/chunkmeta.hpp"
#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/properties/tables.hpp"
#include "fla/fla_spec.hpp"
#include "mamba/mamba_spec.hpp"
#include "chunkmeta/harness/report.hpp"
#include "cli_runner.hpp"

namespace chunkmeta {
namespace {

using harness::Json;
using harness::Workload;

Json error_of(const std::string& line) {
  const Json j = Json::parse(line);
  EXPECT_TRUE(j.contains("error")) << line;
  return j.value("error", Json::object());
}

TEST(ComputeCommand, AnswersTheSpecExample) {
  const auto run = run_cli("compute",
                           R"({"chunk_size": 64, "num_computed_tokens": [0, 70, 128, 1], "query_start_loc": [0, 130, 230, 294, 296]})"
                           "\n");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(run.lines.size(), 1u);
  EXPECT_EQ(run.lines[0],
            R"({"cu_chunk_seqlen":[0,64,128,130,188,230,294,296],"seq_idx":[0,0,0,1,1,2,3],"last_chunk_indices":[2,4,5,6]})");
}

TEST(ComputeCommand, AnswersTheFlaSpecExampleForEitherOutputAndDtype) {
  const auto run = run_cli("compute",
                           R"({"spec": "fla.chunk_indices", "chunk_size": 4, "cu_seqlens": [0, 0, 5, 5, 9]})"
                           "\n"
                           R"({"id": 2, "spec": "fla.chunk_offsets", "chunk_size": 4, "cu_seqlens": [0, 0, 5, 5, 9], "dtype": "int64"})"
                           "\n"
                           R"({"spec": "fla.chunk_indices", "chunk_size": 4, "cu_seqlens": [0, 5, 3]})"
                           "\n"
                           R"({"spec": "fla.chunk_indices", "chunk_size": 4, "query_start_loc": [0, 5]})"
                           "\n"
                           R"({"spec": "gdn", "chunk_size": 4, "cu_seqlens": [0, 5]})"
                           "\n");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  ASSERT_EQ(run.lines.size(), 5u);
  EXPECT_EQ(run.lines[0], R"({"chunk_indices":[[1,0],[1,1],[3,0]]})");
  EXPECT_EQ(run.lines[1], R"({"id":2,"chunk_offsets":[0,0,2,2,3]})");
  EXPECT_EQ(error_of(run.lines[2])["code"], "cu_seqlens_decreasing");
  EXPECT_EQ(error_of(run.lines[2])["field"], "cu_seqlens");
  EXPECT_EQ(error_of(run.lines[2])["index"], 2);
  EXPECT_EQ(error_of(run.lines[3])["code"], "unknown_key");
  EXPECT_EQ(error_of(run.lines[3])["field"], "query_start_loc");
  EXPECT_EQ(error_of(run.lines[4])["code"], "unknown_spec");
  EXPECT_EQ(error_of(run.lines[4])["field"], "spec");
}

TEST(ComputeCommand, AnswersEveryLineInOrderAndNamesEachErrorThenExitsOne) {
  struct Line {
    std::string input;
    std::string code;   // "" for success
    std::string field;
    Json index;
  };
  const std::vector<Line> lines = {
      {R"({"chunk_size": 8, "num_computed_tokens": [3], "query_start_loc": [0, 9]})", "", "", nullptr},
      {R"({"chunk_size": 8, "num_computed_tokens": [3]})", "missing_key", "query_start_loc", nullptr},
      {R"({"chunk_size": 8, "num_computed_tokens": [3], "query_start_loc": [0, 9)", "malformed_json", "", nullptr},
      {"", "malformed_json", "", nullptr},
      {"\xff\xfe garbage \x01", "malformed_json", "", nullptr},
      {R"([8, [3], [0, 9]])", "wrong_type", "", nullptr},
      {R"({"chunk_size": "8", "num_computed_tokens": [3], "query_start_loc": [0, 9]})", "wrong_type", "chunk_size", nullptr},
      {R"({"chunk_size": 8, "num_computed_tokens": [3.5], "query_start_loc": [0, 9]})", "wrong_type", "num_computed_tokens", 0},
      {R"({"chunk_size": 8, "num_computed_tokens": [3], "query_start_loc": [0, true]})", "wrong_type", "query_start_loc", 1},
      {R"({"chunk_size": 8, "num_computed_tokens": 3, "query_start_loc": [0, 9]})", "wrong_type", "num_computed_tokens", nullptr},
      {R"({"chunk_size": 8, "num_computed_tokens": [3], "query_start_loc": [0, 9], "extra": 1})", "unknown_key", "extra", nullptr},
      {R"({"chunk_size": 8, "num_computed_tokens": [3], "query_start_loc": [0, 99999999999999999999]})", "value_too_large", "query_start_loc", 1},
      // Found by fuzz_json_line: the parser threw (uncaught) on a number that overflows a double.
      {R"({"chunk_size": 1E4748, "num_computed_tokens": [3], "query_start_loc": [0, 9]})", "malformed_json", "", nullptr},
      {R"({"chunk_size": 0, "num_computed_tokens": [3], "query_start_loc": [0, 9]})", "chunk_size_not_positive", "chunk_size", nullptr},
      {R"({"chunk_size": 8, "num_computed_tokens": [3, -1], "query_start_loc": [0, 9, 9]})", "negative_value", "num_computed_tokens", 1},
      {R"({"chunk_size": 8, "num_computed_tokens": [3], "query_start_loc": [0, 2147483648]})", "value_too_large", "query_start_loc", 1},
      {R"({"chunk_size": 8, "num_computed_tokens": [3, 0], "query_start_loc": [0, 9, 4]})", "query_start_loc_decreasing", "query_start_loc", 2},
      {R"({"chunk_size": 8, "num_computed_tokens": [3], "query_start_loc": [0]})", "length_mismatch", "query_start_loc", 1},
      {R"({"chunk_size": 8, "num_computed_tokens": [2147483647], "query_start_loc": [0, 1]})", "sequence_too_long", "num_computed_tokens", 0},
      {R"({"chunk_size": 1, "num_computed_tokens": [0], "query_start_loc": [0, 2147483647]})", "output_too_large", "cu_chunk_seqlen", nullptr},
      {R"({"chunk_size": 8, "num_computed_tokens": [], "query_start_loc": [5]})", "", "", nullptr},
  };
  std::string input;
  for (const auto& line : lines) input += line.input + "\n";
  const auto run = run_cli("compute", input);
  EXPECT_EQ(run.exit_code, 1) << run.err;
  ASSERT_EQ(run.lines.size(), lines.size()) << run.out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    SCOPED_TRACE("line " + std::to_string(i) + ": " + lines[i].input);
    if (lines[i].code.empty()) {
      EXPECT_FALSE(Json::parse(run.lines[i]).contains("error")) << run.lines[i];
      continue;
    }
    const Json error = error_of(run.lines[i]);
    EXPECT_EQ(error.value("code", ""), lines[i].code) << run.lines[i];
    EXPECT_EQ(error.value("field", ""), lines[i].field) << run.lines[i];
    EXPECT_EQ(error["index"], lines[i].index) << run.lines[i];
    EXPECT_FALSE(error.value("message", "").empty());
  }
}

TEST(ComputeCommand, RefusesWorkloadsAboveALoweredChunkCap) {
  const auto run = run_cli("compute --max-chunks 3", R"({"chunk_size": 1, "num_computed_tokens": [0], "query_start_loc": [0, 4]})"
                                                     "\n");
  EXPECT_EQ(run.exit_code, 1);
  ASSERT_EQ(run.lines.size(), 1u);
  EXPECT_EQ(error_of(run.lines[0]).value("code", ""), "output_too_large") << run.lines[0];
}

TEST(ComputeCommand, ExitsZeroOnEmptyInput) {
  const auto run = run_cli("compute", "");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_TRUE(run.lines.empty());
}

TEST(ComputeCommand, GivesIdenticalOutputThroughEveryImplementation) {
  const std::string input =
      R"({"chunk_size": 1056, "num_computed_tokens": [0, 1057, 2147480000, 5], "query_start_loc": [7, 3000, 3001, 3001, 9000]})"
      "\n"
      R"({"chunk_size": 1, "num_computed_tokens": [0, 0], "query_start_loc": [0, 5, 5]})"
      "\n"
      R"({"spec": "fla.chunk_indices", "chunk_size": 3, "cu_seqlens": [4, 4, 11, 40]})"
      "\n"
      R"({"spec": "fla.chunk_offsets", "chunk_size": 3, "cu_seqlens": [4, 4, 11, 12], "dtype": "int64"})"
      "\n";
  const auto expected = run_cli("compute --impl reference", input);
  ASSERT_EQ(expected.exit_code, 0) << expected.err;
  // Every spec has built-ins of these names; --impl picks each request's spec's.
  for (const auto& impl : harness::mamba_spec().builtins()) {
    const auto run = run_cli("compute --impl " + impl.name, input);
    EXPECT_EQ(run.exit_code, 0) << impl.name << ": " << run.err;
    EXPECT_EQ(run.out, expected.out) << impl.name;
  }
}

TEST(ComputeCommand, ExitsTwoOnUsageErrors) {
  EXPECT_EQ(run_cli("").exit_code, 2);
  EXPECT_EQ(run_cli("compute --impl nonsense").exit_code, 2);
  EXPECT_EQ(run_cli("compute --no-such-flag").exit_code, 2);
  EXPECT_EQ(run_cli("frobnicate").exit_code, 2);
  EXPECT_EQ(run_cli("compute --max-chunks 67108865").exit_code, 2);  // above the default cap: cannot be honoured
}

// A number no run can mean is a usage error naming the option, before anything runs: NaN and infinity
// (which CLI11's PositiveNumber lets through), a negative seed (an unsigned option would read 2^64 - 1),
// a negative or out-of-range case count.
TEST(CheckCommand, RefusesEverySettingNoRunCanMean) {
  for (const std::string given :
       {"--timeout nan", "--timeout inf", "--timeout -1", "--timeout 0", "--time-budget nan", "--time-budget -2",
        "--shrink-budget inf", "--seed -1", "--seed 1e3", "--cases -5", "--cases 2147483648"}) {
    const auto run = run_cli("check --impl fast " + given);
    EXPECT_EQ(run.exit_code, 2) << given << ": " << run.out << run.err;
    EXPECT_NE(run.err.find(given.substr(0, given.find(' '))), std::string::npos) << given << ": " << run.err;
  }
}

TEST(Cli, PrintsHelpAndVersion) {
  const auto help = run_cli("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("compute"), std::string::npos);
  EXPECT_NE(help.out.find("verify"), std::string::npos);
  const auto version = run_cli("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find(std::string(kVersion)), std::string::npos);
}

TEST(VerifyCommand, VerifiesTheBuiltinFastImplementationAndPrintsASummary) {
  const auto run = run_cli("verify --impl fast --cases 200 --corpus " + std::string(CHUNKMETA_SOURCE_DIR) + "/corpus");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("VERIFIED"), std::string::npos) << run.out;
  // Every spec's properties at 200 cases (huge batches at 2% of them, one case for a property whose
  // cases cost more).
  std::size_t properties = 0;
  for (const harness::Spec* spec : harness::all_specs()) properties += properties::table_of(*spec).properties.size();
  EXPECT_NE(run.out.find("Summary: " + std::to_string(properties) + " properties, "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find(" cases, 0 failed"), std::string::npos) << run.out;
  for (const harness::Spec* spec : harness::all_specs())
    EXPECT_NE(run.out.find("fast (" + std::string(spec->name()) + "):"), std::string::npos) << run.out;
  const auto mamba_only = run_cli("verify --spec mamba --impl fast --cases 200 --corpus " +
                                  std::string(CHUNKMETA_SOURCE_DIR) + "/corpus");
  EXPECT_EQ(mamba_only.exit_code, 0) << mamba_only.out << mamba_only.err;
  EXPECT_NE(mamba_only.out.find("Summary: 11 properties, 2004 cases, 0 failed"), std::string::npos) << mamba_only.out;
}

TEST(ReplayCommand, FlagsACorpusEntryWhoseStoredExpectationNoLongerHolds) {
  const Workload w{8, {3}, {0, 9}};
  auto entry = harness::corpus_entry(harness::mamba_spec(), w, "test");
  const auto dir = scratch_dir("replay");
  std::ofstream(dir / "good.json") << entry.dump();
  const auto good = run_cli("replay " + (dir / "good.json").string());
  EXPECT_EQ(good.exit_code, 0) << good.out << good.err;

  entry["expected"]["seq_idx"][0] = 7;
  std::ofstream(dir / "stale.json") << entry.dump();
  const auto stale = run_cli("replay " + (dir / "stale.json").string());
  EXPECT_EQ(stale.exit_code, 1);
  EXPECT_NE(stale.out.find("stored expectation"), std::string::npos) << stale.out;
  EXPECT_NE(stale.out.find("seq_idx[0]"), std::string::npos) << stale.out;
}

}  // namespace
}  // namespace chunkmeta

namespace chunkmeta {
namespace {

// Replaying nothing proves nothing: an empty folder, or entries of no spec asked for, is a failure.
TEST(ReplayCommand, FailsWhenNothingIsReplayed) {
  const auto empty = scratch_dir("replay-nothing");
  const auto run = run_cli("replay " + empty.string());
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.err.find("nothing was replayed"), std::string::npos) << run.err;
}

// A budget that ends the run before every property ran its cases is not a
// pass: each property cut short says how far it got, each not run says so.
TEST(CheckCommand, ATimeBudgetThatCutsPropertiesShortIsNotVerified) {
  const auto empty_corpus = scratch_dir("budget-empty-corpus");
  const auto run = run_cli("check --impl fast --seed 1 --time-budget 0.05 --corpus " + empty_corpus.string() +
                           " --report-dir " + scratch_dir("budget-reports").string());
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_EQ(run.out.find("VERIFIED: every property held"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("NOT VERIFIED: no failure, but not every property ran its cases"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("not run (the time budget was used up)"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace chunkmeta

namespace chunkmeta {
namespace {

// A FIFO would block a reader, /dev/zero never end, a file nested 300k deep
// overflow a recursive one: each is an unreadable entry, said so, never a hang or a crash.
TEST(ReplayCommand, NamesSpecialAndHostileFilesUnreadableInsteadOfHangingOrCrashing) {
  const auto dir = scratch_dir("hostile-corpus");
  ASSERT_EQ(mkfifo((dir / "fifo.json").c_str(), 0600), 0);
  std::ofstream(dir / "deep.json") << std::string(300000, '[') << std::string(300000, ']');
  const auto run = run_cli("replay " + (dir / "fifo.json").string() + " /dev/zero " + (dir / "deep.json").string());
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("fifo.json: not a regular file"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("/dev/zero: not a regular file"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("deep.json: nested more than 64 deep"), std::string::npos) << run.out;
}

TEST(ComputeCommand, StopsWithAnErrorWhenItsOutputCannotBeWritten) {
  const auto err = scratch_dir("full") / "err";
  const std::string command = "echo '{\"chunk_size\":4,\"num_computed_tokens\":[0],\"query_start_loc\":[0,5]}' | " +
                              std::string(CHUNKMETA_CLI) + " compute > /dev/full 2> " + err.string();
  const int status = std::system(command.c_str());
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 1);
  std::ifstream in(err);
  const std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(said.find("cannot write the answers to standard output"), std::string::npos) << said;
}

// The description programs read (the Python adapter calls a function so): every
// registered spec, then every formulation judged by the kernels' view alone, its
// inputs in the engine's order with their slots, its outputs, what judges it.
std::string entry_judged_by(const harness::Json& entry) { return entry["judged_by"].get<std::string>(); }

TEST(SpecsCommand, DescribesEveryRegisteredSpecAsJsonWithItsInputsAndOutputsInOrder) {
  const auto run = run_cli("specs --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto described = harness::Json::parse(run.out);
  std::vector<const harness::Spec*> specs = harness::all_specs();
  specs.insert(specs.end(), harness::kernel_formulations().begin(), harness::kernel_formulations().end());
  ASSERT_EQ(described.size(), specs.size());
  ASSERT_FALSE(harness::kernel_formulations().empty());
  for (std::size_t i = 0; i < described.size(); ++i) {
    const harness::Spec& spec = *specs[i];
    EXPECT_EQ(entry_judged_by(described[i]), spec.judged_by_reference() ? "reference" : "kernels_view") << spec.name();
    const auto& entry = described[i];
    EXPECT_EQ(entry["name"], spec.name());
    EXPECT_EQ(entry["default"], &spec == &harness::default_spec());
    ASSERT_EQ(entry["inputs"].size(), spec.inputs().size());
    for (std::size_t k = 0; k < spec.inputs().size(); ++k) EXPECT_EQ(entry["inputs"][k]["name"], spec.inputs()[k].name);
    ASSERT_EQ(entry["outputs"].size(), spec.outputs().size());
    for (std::size_t k = 0; k < spec.outputs().size(); ++k)
      EXPECT_EQ(entry["outputs"][k]["name"], spec.outputs()[k].name);
    EXPECT_FALSE(entry["edge_classes"].empty()) << spec.name();
  }
}

TEST(SpecsCommand, ListsEachSpecWithTheSignatureItsImplementationsTake) {
  const auto run = run_cli("specs");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  for (const harness::Spec* spec : harness::all_specs()) {
    std::string inputs;
    for (const auto& input : spec->inputs()) inputs += (inputs.empty() ? "" : ", ") + std::string(input.name);
    EXPECT_NE(run.out.find("fn(" + inputs + ")"), std::string::npos) << run.out;
  }
}

}  // namespace
}  // namespace chunkmeta

namespace chunkmeta {
namespace {

TEST(StepsCommand, VerifiesChunkmetasOwnFunctionsAndThemThroughTheImplementationsDoorInBothModes) {
  for (const std::string command : {"steps --seed 1 --lives 300", "steps --mode align --seed 1 --lives 300",
                                    "steps --seed 2 --lives 300 --chunks fast --plan reference",
                                    "steps --mode align --seed 2 --lives 300 --chunks reference --checkpoints fast"}) {
    const auto run = run_cli(command, "");
    EXPECT_EQ(run.exit_code, 0) << command << "\n" << run.out << run.err;
    EXPECT_EQ(run.out.rfind("VERIFIED steps (", 0), 0u) << command << "\n" << run.out;
    EXPECT_NE(run.out.find("300 lives"), std::string::npos) << run.out;
  }
}

TEST(StepsCommand, RefusesWhatNoLifeCanRun) {
  EXPECT_EQ(run_cli("steps --mode sometimes", "").exit_code, 2);
  EXPECT_EQ(run_cli("steps --plan nonsense", "").exit_code, 2);
  EXPECT_EQ(run_cli("steps --lives 0", "").exit_code, 2);
}

#ifdef CHUNKMETA_MUTANT_PLUGIN
TEST(StepsCommand, ReportsAPlanSlipWithAMinimalLifeAndHowToReproduceIt) {
  const std::string plan = std::string("plugin:") + CHUNKMETA_MUTANT_PLUGIN + "#final-write-for-rows-without-tokens";
  const auto run = run_cli("steps --seed 1 --plan " + plan, "");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_EQ(run.out.rfind("NOT VERIFIED steps (plan=" + plan + ")", 0), 0u) << run.out;
  EXPECT_NE(run.out.find("life:      {\"block_size\":1,\"chunk_size\":1,\"mode\":\"all\",\"requests\":[{\"first_step\":0,"
                         "\"pieces\":[0],\"prefix_hit\":0}]}  (minimal: 1 step, 1 request"),
            std::string::npos)
      << run.out;
  // The plugin's path needs no quotes (harness::shell_quote quotes only a word a shell would split or expand).
  EXPECT_NE(run.out.find("reproduce: chunkmeta steps --mode all --seed 1 --plan " + plan + "\n"), std::string::npos)
      << run.out;
}
#endif

}  // namespace
}  // namespace chunkmeta
