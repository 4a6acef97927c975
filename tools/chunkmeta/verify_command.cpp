// `chunkmeta verify` (the built-in implementations of every spec, or those
// --spec and --impl name) and `chunkmeta check` (any implementation of one
// spec: built in, cmd: or plugin:). Both replay the corpus, run each spec's
// property table and print the summary and the verdict; they differ only in
// what they choose to run.
#include <atomic>
#include <csignal>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>

#include "chunkmeta/engine/check.hpp"
#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/subprocess.hpp"
#include "chunkmeta/properties/tables.hpp"
#include "cli.hpp"

namespace chunkmeta::cli {
namespace {

// Ctrl-C (SIGINT) and SIGTERM end a verification at once: a wait on a program
// ends (harness::stop_every_wait), a failure being shrunk is written out as
// "not fully shrunk", and the summary printed.
// A second signal ends the process at once.
std::atomic<int> stop_signals{0};

extern "C" void request_stop(int signal) {
  harness::stop_every_wait();  // a program's answer awaited, a warm-up: none of them holds the stop up
  if (stop_signals.fetch_add(1) > 0) {
    std::signal(signal, SIG_DFL);
    std::raise(signal);
  }
}

void stop_on_signals() {
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
}

// Where the time of each implementation went: the harness (generating,
// shrinking, judging) versus waiting for answers, and inside a subprocess's
// share, encoding, waiting and decoding.
std::string time_breakdown(const std::vector<engine::SuiteResult>& results, const Processes& processes) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(2);
  for (const auto& suite : results) {
    if (suite.properties.empty()) continue;
    long long calls = 0;
    long long prefetched = 0;
    for (const auto& p : suite.properties) {
      calls += p.implementation_calls;
      prefetched += p.prefetched;
    }
    const double seconds = suite.seconds();
    const double waiting = suite.implementation_seconds();
    const std::string& name = suite.properties.front().implementation;
    os << "Throughput of " << name << ": " << suite.cases() << " cases in " << seconds << " s = "
       << std::setprecision(0) << (seconds > 0 ? suite.cases() / seconds : 0.0) << std::setprecision(2)
       << " cases/s; " << calls << " workloads sent (" << prefetched << " in batches); "
       << "time waiting for the implementation " << waiting << " s, harness " << (seconds - waiting) << " s\n";
    for (const auto& [process_name, process] : processes) {
      if (process_name != name) continue;
      const auto& st = process->stats();
      os << "  subprocess: " << st.starts << " process start(s), " << st.answers << " answers; encoding "
         << st.encode_seconds << " s, waiting in poll " << st.wait_seconds << " s, decoding " << st.decode_seconds
         << " s\n";
    }
  }
  return os.str();
}

// `impl` with every workload sent to it counted in `calls`.
Implementation counted(Implementation impl, const std::shared_ptr<long long>& calls) {
  impl.compute = [compute = std::move(impl.compute), calls](const Workload& w) {
    ++*calls;
    return compute(w);
  };
  if (impl.compute_batch) {
    impl.compute_batch = [batch = std::move(impl.compute_batch), calls](std::span<const Workload> ws) {
      auto answers = batch(ws);
      *calls += static_cast<long long>(answers.size());
      return answers;
    };
  }
  return impl;
}

// One spec's implementations, checked with its table.
struct Run {
  const Spec* spec = nullptr;
  std::vector<Implementation> implementations;
};

// `verify` and `check` differ only in what they choose to run.
int run_verification(const std::vector<Run>& runs, const engine::CheckOptions& options, const Processes* processes) {
  stop_on_signals();
  engine::CheckOptions streamed = options;
  streamed.progress = [](std::string_view what) { std::cout << what << std::flush; };
  streamed.suite.stop_requested = [] { return stop_signals.load() > 0; };
  std::cout << engine::corpus_line(options.corpus) << std::flush;
  std::vector<engine::CheckResult> results;
  std::vector<std::pair<std::string, std::shared_ptr<long long>>> calls;
  for (const auto& run : runs) {
    if (runs.size() > 1) std::cout << "=== " << run.spec->name() << ": " << run.spec->summary() << "\n" << std::flush;
    std::vector<Implementation> impls;
    for (const auto& impl : run.implementations) {
      calls.emplace_back(runs.size() > 1 ? impl.name + " (" + std::string(run.spec->name()) + ")" : impl.name,
                         std::make_shared<long long>(0));
      impls.push_back(counted(impl, calls.back().second));
    }
    results.push_back(engine::check(properties::table_of(*run.spec), impls, streamed));
    if (stop_signals.load() > 0) break;
  }
  std::vector<engine::SuiteResult> suites;
  bool passed = true;
  for (const auto& result : results) {
    passed = passed && result.passed();
    suites.insert(suites.end(), result.suites.begin(), result.suites.end());
  }
  std::cout << engine::summarize(suites);
  if (processes != nullptr) std::cout << time_breakdown(suites, *processes);
  for (const auto& [name, count] : calls)
    std::cout << "Calls: " << *count << " workloads sent to " << name << " (replay, cases and shrinking)\n";
  std::cout << engine::verdict(results, runs.size() > 1);
  const bool interrupted = stop_signals.load() > 0;
  return passed && !interrupted ? kExitOk : interrupted ? kExitInterrupted : kExitFailure;
}

bool known_properties(const std::vector<const Spec*>& specs, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    bool known = false;
    for (const Spec* spec : specs) known = known || properties::table_of(*spec).find(name) != nullptr;
    if (!known) {
      std::cerr << "chunkmeta: unknown property '" << name << "'\n";
      return false;
    }
  }
  return true;
}

// What verify and check read from the command line (one set: one of them runs).
struct VerificationOptions {
  harness::ResolveOptions resolve;
  engine::SuiteOptions suite;
  std::uint64_t seed = 0;
  std::string report_dir;
  std::string spec;
  std::vector<std::filesystem::path> corpus;
  std::vector<std::string> verify_impls;
  std::vector<std::string> check_impls;
  bool no_batch = false;
  bool keep_going = false;
  bool seed_given = false;
  bool corpus_given = false;
  bool timeout_given = false;
};

// The rerun command of `check`: it repeats the options that change what is sent.
std::string check_rerun_command(const VerificationOptions& chosen, const Spec& spec) {
  const harness::ResolveOptions& resolve = chosen.resolve;
  std::string rerun = harness::shell_quote(resolve.self_path) + " check";
  if (&spec != &harness::default_spec()) rerun += " --spec " + std::string(spec.name());
  rerun += " --impl {implementation} --property {property} --seed {seed}";
  if (resolve.valid_only) rerun += " --valid-only";
  if (resolve.plugins_in_process) rerun += " --in-process";
  for (const auto& name : chosen.suite.excluded_classes) rerun += " --exclude " + harness::shell_quote(name);
  if (chosen.timeout_given) {
    std::ostringstream timeout;
    timeout << resolve.timeout_seconds;
    rerun += " --timeout " + timeout.str();
  }
  return rerun;
}

int verify_or_check(VerificationOptions chosen, bool check) {
  engine::SuiteOptions& options = chosen.suite;
  const auto specs = specs_of(chosen.spec, !check);
  if (specs.empty()) return kExitUsage;
  if (!known_properties(specs, options.only)) return kExitUsage;
  for (const Spec* spec : specs) {
    const auto& table = properties::table_of(*spec);
    if (auto unknown = table.unknown_edge_class(options.excluded_classes)) {
      std::cerr << "chunkmeta: --exclude \"" << *unknown << "\" is not an edge class of " << spec->name()
                << "; its edge classes: " << table.edge_class_names() << "\n";
      return kExitUsage;
    }
  }
  if (chosen.seed_given) options.seed = chosen.seed;
  if (!chosen.report_dir.empty()) options.report_dir = chosen.report_dir;
  engine::CheckOptions run;
  run.corpus = chosen.corpus;
  run.properties_after_replay_failure = chosen.keep_going;
  options.distinct_bugs = chosen.keep_going;
  // A program without its corpus beside it (copied out of its prefix) replays none and says so.
  if (!chosen.corpus_given && !std::filesystem::exists(chosen.corpus.front())) {
    std::cout << "No corpus beside this program (" << chosen.corpus.front().string() << "); --corpus names one\n";
    run.corpus.clear();
  }
  std::vector<Run> runs;
  if (check) {
    Processes processes;
    chosen.resolve.processes = &processes;
    const Spec& spec = *specs.front();
    auto impls = implementations(spec, chosen.check_impls, chosen.resolve);
    if (!impls) return kExitUsage;
    for (const auto& [name, process] : processes) process->start_in_background();
    options.include_library = false;
    options.prefetch = !chosen.no_batch;
    options.rerun_command = check_rerun_command(chosen, spec);
    run.suite = options;
    runs.push_back({&spec, std::move(*impls)});
    return run_verification(runs, run, &processes);
  }
  for (const Spec* spec : specs) {
    auto impls = implementations(*spec, chosen.verify_impls, chosen.resolve);
    if (!impls) return kExitUsage;
    runs.push_back({spec, std::move(*impls)});
  }
  options.rerun_command = harness::shell_quote(chosen.resolve.self_path) +
                          " verify --spec {spec} --impl {implementation} --property {property} --seed {seed}";
  run.suite = options;
  return run_verification(runs, run, nullptr);
}

}  // namespace

std::vector<Command> add_verification_commands(CLI::App& app, const harness::ResolveOptions& resolve) {
  auto chosen = std::make_shared<VerificationOptions>();
  chosen->resolve = resolve;
  chosen->corpus = {default_corpus(resolve.self_path)};
  engine::SuiteOptions& options = chosen->suite;
  const std::string spec_help = "The computation: " + harness::spec_names();
  auto* verify = app.add_subcommand(
      "verify", "Replay the corpus, then run each spec's property suite (differential against the reference, the "
                "spec invariants, metamorphic relations, validation) on the built-in implementations and print a "
                "summary. Exit 0 only if all held.");
  verify->add_option("--spec", chosen->spec, spec_help + " (default: every one)");
  verify->add_option("--impl", chosen->verify_impls, "Implementations to verify (default: every built-in one)");
  verify->add_option("--cases", options.cases, "Cases per property (default: 1000 x CHUNKMETA_CASE_SCALE)")
      ->check(CLI::Range(0, std::numeric_limits<int>::max()));
  auto* check = app.add_subcommand(
      "check", "Verify any implementation (built-in, cmd:COMMAND or plugin:PATH) of one spec: replay the corpus, "
               "then run every implementation property (differential against the reference, the spec's invariants, "
               "the metamorphic relations, rejection of invalid input), shrink each failure and write its report. "
               "Prints a summary with throughput. Exit 0 only if everything held.");
  check->add_option("--spec", chosen->spec, spec_help + " (default: " + std::string(harness::default_spec().name()) + ")");
  check->add_option("--impl", chosen->check_impls, implementation_help())->required();
  check->add_option("--cases", options.cases,
                    "Cases per property (default: 1000 x CHUNKMETA_CASE_SCALE, or as many as the budget allows)")
      ->check(CLI::Range(0, std::numeric_limits<int>::max()));
  check->add_option("--time-budget", options.time_budget_seconds,
                    "Seconds for the whole suite, shared evenly between the properties (0: no budget)")
      ->check(finite_number(true));
  check->add_option("--timeout", chosen->resolve.timeout_seconds,
                    "Seconds a subprocess may take to answer one workload before it counts as hung")
      ->capture_default_str()
      ->check(finite_number(false))
      ->each([chosen](const std::string&) { chosen->timeout_given = true; });
  check->add_flag("--valid-only", chosen->resolve.valid_only,
                  "Send valid workloads only (an engine function whose contract assumes validated input); "
                  "skips the invalid-input property. Plugins say this with their flags");
  check->add_flag("--in-process", chosen->resolve.plugins_in_process,
                  "Load plugins into this process (faster; a crashing plugin then ends the run) instead of "
                  "isolating them in a child process");
  check->add_flag("--no-batch", chosen->no_batch, "Send workloads one at a time instead of in batches");
  // Options that mean the same for both.
  for (auto* cmd : {verify, check}) {
    cmd->add_option("--property", options.only, "Run only these properties (default: all)");
    cmd->add_option("--seed", chosen->seed, "Seed of the run (default: random, printed)")
        ->check(digits_only("--seed"))
        ->each([chosen](const std::string&) { chosen->seed_given = true; });
    cmd->add_option("--report-dir", chosen->report_dir,
                    "Where counterexample reports go (default: $CHUNKMETA_REPORT_DIR or ./chunkmeta-reports)");
    cmd->add_option("--corpus", chosen->corpus, "Corpus files or folders replayed first")
        ->capture_default_str()
        ->each([chosen](const std::string&) { chosen->corpus_given = true; });
    cmd->add_option("--shrink-budget", options.shrink_budget_seconds,
                    "Seconds one failure may spend shrinking; then its smallest case so far is reported, marked "
                    "\"not fully shrunk\" (0: no limit)")
        ->capture_default_str()
        ->check(finite_number(true));
    cmd->add_flag("--fail-fast", options.stop_at_first_failure,
                  "Stop at the first failure's minimal report (skip the remaining properties)");
    cmd->add_option("--exclude", options.excluded_classes,
                    "An edge class the engine never sends (repeatable; a wrong name lists them): no case, shrink "
                    "candidate or corpus entry in it is tried, and the summary counts what was left out");
    cmd->add_flag("--keep-going", chosen->keep_going,
                  "Run the properties even for an implementation whose corpus replay already fails (default: "
                  "report the replay's shrunk failure and skip them)");
  }
  return {{verify, [chosen] { return verify_or_check(*chosen, false); }},
          {check, [chosen] { return verify_or_check(*chosen, true); }}};
}

}  // namespace chunkmeta::cli
