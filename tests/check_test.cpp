// `chunkmeta check` on implementations outside the harness: a subprocess
// speaking the protocol, plugins, Python functions through the adapter, and
// programs that crash, hang, print garbage or skip lines.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <string>

#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/report.hpp"
#include "chunkmeta/harness/spec.hpp"
#include "cli_runner.hpp"

namespace chunkmeta {
namespace {

using harness::Json;
namespace fs = std::filesystem;

const std::string kCli = CHUNKMETA_CLI;
const std::string kSource = CHUNKMETA_SOURCE_DIR;
const std::string kAdapter = kSource + "/adapters/python/chunkmeta_adapter.py";
const std::string kReferenceFunction = kSource + "/examples/python/reference_procedure.py:compute_chunk_metadata";

fs::path fresh_dir(const std::string& name) { return scratch_dir("check-" + name); }

// check with a fixed seed and reports in a fresh folder; `extra` holds --impl and the rest.
Run check(const std::string& name, const std::string& extra) {
  const auto reports = fresh_dir(name);
  return run_cli("check --seed 20261202 --report-dir " + harness::shell_quote(reports.string()) + " " + extra);
}

std::string impl(const std::string& spec) { return "--impl " + harness::shell_quote(spec); }

TEST(CheckCommand, VerifiesChunkmetaComputeThroughTheSubprocessProtocol) {
  const auto run = check("compute", impl("cmd:" + kCli + " compute") + " --cases 300");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("VERIFIED: every property held"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("PASS  RejectsInvalidWorkloadsLikeTheReference"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("cases/s"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("subprocess: 1 process start(s)"), std::string::npos) << run.out;
}

TEST(CheckCommand, VerifiesChunkmetaComputeAnsweringInJsonLinesWhenItDeclinesBinaryAnswers) {
  const auto run =
      check("compute-json", impl("cmd:env -u CHUNKMETA_ANSWER_ENCODING " + kCli + " compute") + " --cases 300");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("VERIFIED: every property held"), std::string::npos) << run.out;
}

TEST(CheckCommand, VerifiesTheExamplePluginIsolatedAndInProcess) {
  const std::string plugin = "plugin:" + std::string(CHUNKMETA_FAST_PLUGIN);
  for (const std::string mode : {"", " --in-process"}) {
    const auto run = check("plugin", impl(plugin) + " --cases 300" + mode);
    EXPECT_EQ(run.exit_code, 0) << mode << "\n" << run.out << run.err;
    EXPECT_NE(run.out.find("PASS  RejectsInvalidWorkloadsLikeTheReference"), std::string::npos) << run.out;
  }
}

TEST(CheckCommand, VerifiesAPluginOfAbiVersionTwoIsolatedAndInProcess) {
  const std::string plugin = "plugin:" + std::string(CHUNKMETA_ABI_V2_PLUGIN);
  for (const std::string mode : {"", " --in-process"}) {
    const auto run = check("abi-v2", "--spec fla.chunk_indices " + impl(plugin) + " --cases 100" + mode);
    EXPECT_EQ(run.exit_code, 0) << mode << "\n" << run.out << run.err;
    EXPECT_NE(run.out.find("VERIFIED: every property held"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("PASS  RejectsInvalidWorkloadsLikeTheReference"), std::string::npos) << run.out;
  }
}

TEST(CheckCommand, RefusesAnAbiVersionTwoPluginThatClaimsASpecVersionTwoCannotPass) {
  const harness::Spec* unfit = nullptr;
  for (const harness::Spec* spec : harness::all_specs()) {
    if (spec->reads(harness::Slot::block_size)) unfit = spec;
  }
  ASSERT_NE(unfit, nullptr) << "no registered spec reads a block size";
  ::setenv("CHUNKMETA_V2_UNFIT_SPEC", std::string(unfit->name()).c_str(), 1);
  const auto run = check("abi-v2-unfit", "--spec fla.chunk_indices " + impl("plugin:" + std::string(CHUNKMETA_ABI_V2_PLUGIN)));
  ::unsetenv("CHUNKMETA_V2_UNFIT_SPEC");
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_NE(run.err.find("ABI version 2 cannot pass (use version 3)"), std::string::npos) << run.err;
}

TEST(CheckCommand, RefusesAnImplementationItCannotResolve) {
  for (const std::string spec : {"no-such-builtin", "plugin:/no/such/plugin.so", "cmd:"}) {
    const auto run = check("unknown", impl(spec));
    EXPECT_EQ(run.exit_code, 2) << spec << "\n" << run.out << run.err;
    EXPECT_FALSE(run.err.empty()) << spec;
  }
}

TEST(ComputeCommand, EchoesEachLinesIdFirstAndRefusesAnIdThatIsNotAnUnsignedInteger) {
  const auto run = run_cli("compute", "{\"chunk_size\":4,\"id\":7,\"num_computed_tokens\":[0],\"query_start_loc\":[0,5]}\n"
                                      "{\"chunk_size\":0,\"id\":8,\"num_computed_tokens\":[],\"query_start_loc\":[0]}\n"
                                      "{\"chunk_size\":4,\"id\":\"a-7\",\"num_computed_tokens\":[0],\"query_start_loc\":[0,5]}\n"
                                      "{\"chunk_size\":4,\"id\":7.5,\"num_computed_tokens\":[0],\"query_start_loc\":[0,5]}\n");
  ASSERT_EQ(run.lines.size(), 4u) << run.out;
  EXPECT_EQ(run.lines[0].rfind("{\"id\":7,\"cu_chunk_seqlen\":[0,4,5]", 0), 0u) << run.lines[0];
  EXPECT_EQ(run.lines[1].rfind("{\"id\":8,\"error\":", 0), 0u) << run.lines[1];
  for (int i : {2, 3}) {
    EXPECT_EQ(run.lines[i].rfind("{\"error\":{\"code\":\"wrong_type\",\"field\":\"id\",", 0), 0u) << run.lines[i];
  }
  EXPECT_EQ(run.exit_code, 1);
}

TEST(PythonAdapter, VerifiesThePurePythonReferenceProcedureWithLists) {
  if (std::string(CHUNKMETA_PYTHON).empty()) GTEST_SKIP() << "no python3 found at configure time";
  const auto run = check("python-lists", impl("cmd:" + std::string(CHUNKMETA_PYTHON) + " " + kAdapter + " --lists " +
                                              kReferenceFunction) +
                                             " --valid-only --cases 200");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("SKIP  RejectsInvalidWorkloadsLikeTheReference"), std::string::npos) << run.out;
}

TEST(PythonAdapter, VerifiesThePurePythonReferenceProcedureWithTorchTensors) {
  if (std::string(CHUNKMETA_TORCH_PYTHON).empty()) GTEST_SKIP() << "no python3 that imports torch (python3-torch)";
  const auto run = check("python-torch", impl("cmd:" + std::string(CHUNKMETA_TORCH_PYTHON) + " " + kAdapter +
                                              " --torch " + kReferenceFunction) +
                                             " --valid-only --cases 200");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
}

// The counterexample reports in `dir` (not its corpus entries).
std::vector<fs::path> report_files(const fs::path& dir) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().string().ends_with(".report.json")) found.push_back(entry.path());
  return found;
}

std::string misbehave(const std::string& mode) {
  return kSource + "/tests/misbehaving/misbehave.py " + mode + " " + kCli;
}

// Each misbehaviour is a finding of the workload that caused it, shrunk to
// the two rows that trigger it, with a report; never a stuck or crashed run.
struct Misbehaving {
  std::string name;
  std::string command;  // after python3
  std::string kind;     // the finding
  std::string evidence; // in the report's summary or detail
};

void PrintTo(const Misbehaving& m, std::ostream* os) { *os << m.name; }

class MisbehavingImplementation : public testing::TestWithParam<Misbehaving> {};

TEST_P(MisbehavingImplementation, IsReportedAsAShrunkFindingOfTwoRows) {
  if (std::string(CHUNKMETA_PYTHON).empty()) GTEST_SKIP() << "no python3 found at configure time";
  const auto& m = GetParam();
  const auto reports = fresh_dir("misbehaving-" + m.name);
  const auto empty_corpus = fresh_dir("empty-corpus-" + m.name);
  const auto working_dir = fresh_dir("misbehaving-cwd-" + m.name);
  const auto run = run_cli("check --seed 20261202 --cases 200 --timeout 1 --valid-only "
                           "--property MatchesReferenceOnEveryValidWorkload --corpus " +
                           empty_corpus.string() + " --report-dir " + reports.string() + " " +
                           impl("cmd:" + std::string(CHUNKMETA_PYTHON) + " " + m.command),
                           "", working_dir);
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  // Nothing written where it ran (the harness's, or the implementation's), nor in the corpus it was given.
  for (const auto& dir : {working_dir, empty_corpus}) {
    for (const auto& entry : fs::recursive_directory_iterator(dir)) ADD_FAILURE() << "written: " << entry.path();
  }
  EXPECT_NE(run.out.find("finding:   " + m.kind), std::string::npos) << run.out;

  const std::vector<fs::path> found = report_files(reports);
  ASSERT_EQ(found.size(), 1u) << run.out;
  const Json report = Json::parse(slurp(found.front()));
  EXPECT_EQ(report["finding"], m.kind) << report.dump(2);
  EXPECT_EQ(report["rows"], 2) << report.dump(2);
  const std::string said = report.value("summary", "") + "\n" + report.value("detail", "");
  EXPECT_NE(said.find(m.evidence), std::string::npos) << report.dump(2);
  EXPECT_NE(run.out.find("replay:    "), std::string::npos) << run.out;
}

// Every property of the suite, not one: the cases fetched ahead on another
// thread and the answers asked one by one after a hang cut a fetch short go to
// the same process, one caller at a time (two callers at once used to leave
// the run waiting forever for a spare process to exit).
TEST(CheckCommand, HangingImplementationEndsWithEveryPropertyReported) {
  if (std::string(CHUNKMETA_PYTHON).empty()) GTEST_SKIP() << "no python3 found at configure time";
  const auto reports = fresh_dir("hang-every-property");
  // The default case count: the fetches ahead grow to their largest batches.
  const auto run = run_cli("check --seed 20261202 --valid-only --corpus " +
                           fresh_dir("hang-every-property-empty-corpus").string() + " --report-dir " +
                           reports.string() + " " + impl("cmd:" + std::string(CHUNKMETA_PYTHON) + " " + misbehave("hang")));
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const auto lines_starting = [&run](const std::string& start) {
    std::size_t count = 0;
    for (auto at = run.out.find("\n" + start); at != std::string::npos; at = run.out.find("\n" + start, at + 1)) ++count;
    return count;
  };
  const std::size_t failed = lines_starting("  FAIL  ");
  EXPECT_GE(failed, 5u) << run.out;  // every property that sends a workload of two rows
  EXPECT_EQ(lines_starting("MINIMAL "), failed) << "each shrink announces its minimal report as it ends\n" << run.out;
  EXPECT_FALSE(report_files(reports).empty()) << run.out;
}

// A plugin that crashes, hangs or ends the process while it is loaded is a
// finding of the plugin, within the timeout: its table is read in a child.
struct MisbehavingPlugin {
  std::string behaviour;  // the library chunkmeta_plugin_<behaviour>.so
  std::string kind;
  std::string evidence;
};

void PrintTo(const MisbehavingPlugin& p, std::ostream* os) { *os << p.behaviour; }

class PluginMisbehavingWhileLoaded : public testing::TestWithParam<MisbehavingPlugin> {};

TEST_P(PluginMisbehavingWhileLoaded, IsAFindingOfThePluginNotACrashOrHangOfTheHarness) {
  const auto& p = GetParam();
  const std::string plugin =
      std::string(CHUNKMETA_MISBEHAVING_PLUGIN_DIR) + "/chunkmeta_plugin_" + p.behaviour + ".so";
  const auto run = check("plugin-" + p.behaviour, impl("plugin:" + plugin) + " --cases 50 --timeout 2");
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("finding:   " + p.kind + ": could not be loaded: reading its table, the child process "),
            std::string::npos)
      << run.out << run.err;
  // Under ASan the child's own handler reports the SIGSEGV and exits 1: the evidence is in its stderr then.
  EXPECT_NE(run.out.find(p.evidence), std::string::npos) << run.out << run.err;
  EXPECT_NE(run.out.find("NOT VERIFIED"), std::string::npos) << run.out;
}

INSTANTIATE_TEST_SUITE_P(
    Check, PluginMisbehavingWhileLoaded,
    testing::Values(MisbehavingPlugin{"crash_on_load", "crashed", "SEGV"},
                    MisbehavingPlugin{"hang_on_table", "timed_out", "did not end within its time"},
                    MisbehavingPlugin{"exit_on_table", "crashed", "exited with status 3"}),
    [](const auto& info) { return info.param.behaviour; });

// A '#' belongs to the path or to the implementation's name, whichever names a file.
TEST(CheckCommand, VerifiesAPluginWhosePathHoldsAHash) {
  const auto dir = fresh_dir("hash#in-path");
  const auto plugin = dir / "fast#plugin.so";
  fs::copy_file(CHUNKMETA_FAST_PLUGIN, plugin);
  for (const std::string& text : {plugin.string(), plugin.string() + "#fast"}) {
    const auto run = check("hash-plugin", impl("plugin:" + text) + " --cases 100");
    EXPECT_EQ(run.exit_code, 0) << text << "\n" << run.out << run.err;
    EXPECT_NE(run.out.find("VERIFIED: every property held"), std::string::npos) << run.out;
  }
}

// Runs `chunkmeta ARGUMENTS`, sends it SIGINT when it announces its first
// failure (FAILING ...: written out, now shrinking), and returns what it printed.
Run interrupt_at_first_failure(const std::string& arguments) {
  int out[2];
  if (pipe(out) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    execl("/bin/sh", "sh", "-c", ("exec " + kCli + " " + arguments + " 2>/dev/null").c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  Run run;
  FILE* lines = fdopen(out[0], "r");
  char buffer[1 << 16];
  bool sent = false;
  while (std::fgets(buffer, sizeof buffer, lines) != nullptr) {
    run.out += buffer;
    if (!sent && std::string(buffer).starts_with("FAILING")) sent = kill(pid, SIGINT) == 0;
  }
  std::fclose(lines);
  int status = 0;
  waitpid(pid, &status, 0);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

TEST_P(MisbehavingImplementation, IsReportedOnceWhenInterruptedWhileShrinking) {
  if (std::string(CHUNKMETA_PYTHON).empty()) GTEST_SKIP() << "no python3 found at configure time";
  const auto& m = GetParam();
  const auto reports = fresh_dir("interrupted-" + m.name);
  const auto empty_corpus = fresh_dir("interrupted-empty-corpus-" + m.name);
  const auto run = interrupt_at_first_failure(
      "check --seed 20261202 --cases 200 --timeout 1 --valid-only --corpus " + empty_corpus.string() +
      " --report-dir " + reports.string() + " " + impl("cmd:" + std::string(CHUNKMETA_PYTHON) + " " + m.command));
  EXPECT_EQ(run.exit_code, 130) << run.out;  // interrupted, as a shell reports SIGINT
  EXPECT_NE(run.out.find("NOT VERIFIED"), std::string::npos) << run.out;

  // Exactly one report: the smallest case when the interrupt came, labelled as such.
  const std::vector<fs::path> found = report_files(reports);
  ASSERT_EQ(found.size(), 1u) << run.out;
  const Json report = Json::parse(slurp(found.front()));
  EXPECT_EQ(report["finding"], m.kind) << report.dump(2);
  const std::string status = report.value("status", "");
  EXPECT_TRUE(status == "minimal" || status == "not fully shrunk (interrupted)") << status;
  EXPECT_GE(report["rows"].get<int>(), 2) << report.dump(2);
}

INSTANTIATE_TEST_SUITE_P(
    Check, MisbehavingImplementation,
    testing::Values(
        Misbehaving{"crash", misbehave("crash"), "crashed", "SIGSEGV"},
        Misbehaving{"hang", misbehave("hang"), "timed_out", "hang on a workload of 2 rows"},
        Misbehaving{"garbage", misbehave("garbage"), "malformed_output", "this is not JSON"},
        Misbehaving{"skip", misbehave("skip"), "missing_output", "skip on a workload of 2 rows"},
        Misbehaving{"exit_early", misbehave("exit-early"), "crashed", "exit-early on a workload of 2 rows"},
        Misbehaving{"short_binary_answer", misbehave("short-binary"), "crashed", "short-binary on a workload of 2 rows"},
        Misbehaving{"answers_twice", misbehave("twice"), "malformed_output", "extra or repeated"},
        Misbehaving{"nests_30k_deep", misbehave("deep"), "malformed_output", "nested more than 64 deep"},
        Misbehaving{"floods_stdout", misbehave("flood"), "malformed_output", "without ending its answer"},
        Misbehaving{"raises", kAdapter + " " + kSource + "/tests/misbehaving/raises.py:raises_on_two_rows", "raised",
                    "IndexError: row index out of range"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace chunkmeta

namespace chunkmeta {
namespace {

// The pids of live processes whose command line holds `marker`.
std::vector<int> processes_with(const std::string& marker) {
  std::vector<int> found;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = slurp(entry.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    const std::string state = slurp(entry.path() / "stat");
    const bool zombie = state.find(") Z ") != std::string::npos;
    if (!zombie && cmdline.find(marker) != std::string::npos) found.push_back(std::stoi(name));
  }
  return found;
}

// A CI runner's time limit kills the harness with SIGKILL, which no handler
// sees: its implementations must die with it, not hang on in a group of their own.
// The processes left with `marker` on their command line, after waiting up to 5 s for them to go.
std::vector<int> left_after_five_seconds(const std::string& marker) {
  std::vector<int> left = processes_with(marker);
  for (int i = 0; i < 50 && !left.empty(); ++i) {
    usleep(100000);
    left = processes_with(marker);
  }
  return left;
}

// Descendants that call setsid leave the process group a kill reaches; the
// guard (a child subreaper) kills them when the implementation ends.
TEST(CheckCommand, DescendantsInSessionsOfTheirOwnDoNotOutliveTheRun) {
  if (std::string(CHUNKMETA_PYTHON).empty()) GTEST_SKIP() << "no python3 found at configure time";
  const std::string marker = "chunkmeta-escape-marker-" + std::to_string(::getpid());
  const auto run = run_cli("check --seed 20261202 --cases 200 --timeout 1 --valid-only "
                           "--property MatchesReferenceOnEveryValidWorkload --corpus " +
                           fresh_dir("escape-empty-corpus").string() + " --report-dir " +
                           fresh_dir("escape-reports").string() + " " +
                           impl("cmd:" + std::string(CHUNKMETA_PYTHON) + " " + misbehave("escape") + " " + marker));
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("finding:   timed_out"), std::string::npos) << run.out;
  const std::vector<int> left = left_after_five_seconds(marker);
  for (int other : left) kill(other, SIGKILL);
  EXPECT_TRUE(left.empty()) << left.size() << " descendant(s) in new sessions outlived the run";
}

// A correct program that writes more than a pipe holds to stderr before its
// first answer is verified as quickly as any other (its stderr is drained).
TEST(CheckCommand, VerifiesAProgramThatFloodsStderrAtStart) {
  const auto run = check("stderr-flood", impl("cmd:head -c 1000000 /dev/zero >&2; exec " + kCli + " compute") +
                                             " --cases 200 --timeout 5");
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("VERIFIED: every property held"), std::string::npos) << run.out;
}

TEST(CheckCommand, KilledWithSigkillLeavesNoImplementationProcessBehind) {
  if (std::string(CHUNKMETA_PYTHON).empty()) GTEST_SKIP() << "no python3 found at configure time";
  const std::string marker = "chunkmeta-orphan-marker-" + std::to_string(::getpid());
  const auto empty_corpus = fresh_dir("orphan-empty-corpus");
  // misbehave.py hangs on the first workload of two rows, after starting three
  // descendants in sessions of their own; its extra argument marks them all.
  const std::string arguments = "check --seed 20261202 --cases 200 --timeout 600 --valid-only --corpus " +
                                empty_corpus.string() + " --report-dir " + fresh_dir("orphan-reports").string() + " " +
                                impl("cmd:" + std::string(CHUNKMETA_PYTHON) + " " + misbehave("escape") + " " + marker);
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + kCli + " " + arguments + " >/dev/null 2>&1").c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  // Whatever ends this test (a failed ASSERT returns early), nothing it started survives it.
  struct KillEverythingMarked {
    pid_t harness;
    std::string marker;
    ~KillEverythingMarked() {
      if (harness > 0 && kill(harness, SIGKILL) == 0) waitpid(harness, nullptr, 0);
      for (int other : processes_with(marker)) kill(other, SIGKILL);
    }
  } cleanup{pid, marker};
  // Wait until the implementation runs (the harness and its guard hold the
  // marker too, in their --impl argument), and a little longer: it hangs by then.
  const auto implementation_running = [&] {
    for (int other : processes_with(marker)) {
      if (slurp("/proc/" + std::to_string(other) + "/cmdline").find("--impl") == std::string::npos) return true;
    }
    return false;
  };
  for (int i = 0; i < 100 && !implementation_running(); ++i) usleep(100000);
  ASSERT_TRUE(implementation_running()) << "the implementation never started";
  sleep(2);
  ASSERT_GE(processes_with(marker).size(), 6u) << "the harness, its guard, the implementation and its 3 descendants";
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  waitpid(pid, &status, 0);
  cleanup.harness = 0;  // reaped: its pid may be reused
  const std::vector<int> left = left_after_five_seconds(marker);
  EXPECT_TRUE(left.empty()) << left.size() << " implementation process(es) outlived the harness by 5 s";
}

}  // namespace
}  // namespace chunkmeta
