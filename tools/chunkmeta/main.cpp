// chunkmeta: compute the family's chunk metadata from JSON Lines, verify
// implementations with each spec's property suite, and replay corpus entries
// and reports.
#include <CLI/CLI.hpp>
#include <atomic>
#include <csignal>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "chunkmeta/chunkmeta.hpp"
#include "chunkmeta/engine/check.hpp"
#include "chunkmeta/harness/corpus.hpp"
#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/keep_freed_memory.hpp"
#include "chunkmeta/harness/plugin.hpp"
#include "chunkmeta/harness/shrink.hpp"
#include "chunkmeta/harness/subprocess.hpp"
#include "chunkmeta/properties/tables.hpp"
#include "specs_command.hpp"

namespace {

using namespace chunkmeta;
using harness::Implementation;
using harness::Spec;
using harness::Workload;

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInterrupted = 130;  // as a shell reports a command ended by SIGINT

using Processes = std::vector<std::pair<std::string, std::shared_ptr<harness::Subprocess>>>;

// Ctrl-C (SIGINT) and SIGTERM end a verification at the next case: a failure
// being shrunk is written out as "not fully shrunk", and the summary printed.
// A second signal ends the process at once.
std::atomic<int> stop_signals{0};

extern "C" void request_stop(int signal) {
  if (stop_signals.fetch_add(1) > 0) {
    std::signal(signal, SIG_DFL);
    std::raise(signal);
  }
}

void stop_on_signals() {
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
}

// This executable, so an isolated plugin runs in `SELF compute --impl plugin:...`
// and reports name the program that wrote them.
std::string self_path(const char* argv0) {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : exe.string();
}

// The corpus beside this program: share/chunkmeta/corpus in an installed
// prefix, the checkout's corpus (through a link) in the build tree.
std::filesystem::path default_corpus(const std::string& self) {
  std::error_code ec;
  const auto corpus = std::filesystem::path(self).parent_path() / CHUNKMETA_CORPUS_FROM_PROGRAM;
  const auto resolved = std::filesystem::weakly_canonical(corpus, ec);
  return ec ? corpus.lexically_normal() : resolved;
}

const Spec* spec_named(const std::string& name) {
  const Spec* spec = harness::find_spec(name);
  if (spec == nullptr) std::cerr << "chunkmeta: unknown spec '" << name << "' (the specs: " << harness::spec_names() << ")\n";
  return spec;
}

// The implementations of `spec` that --impl names; none named: every built-in one.
std::optional<std::vector<Implementation>> implementations(const Spec& spec, const std::vector<std::string>& texts,
                                                           const harness::ResolveOptions& options) {
  if (texts.empty()) return spec.builtins();
  std::vector<Implementation> chosen;
  for (const auto& text : texts) {
    auto resolved = harness::resolve_implementations(spec, text, options);
    if (auto* why = std::get_if<std::string>(&resolved)) {
      std::cerr << "chunkmeta: " << *why << "\n";
      return std::nullopt;
    }
    for (auto& impl : std::get<std::vector<Implementation>>(resolved)) chosen.push_back(std::move(impl));
  }
  return chosen;
}

// The specs a command covers: the one --spec names, else every one (or the default spec alone).
std::vector<const Spec*> specs_of(const std::string& named, bool all_by_default) {
  if (!named.empty()) {
    const Spec* spec = spec_named(named);
    return spec == nullptr ? std::vector<const Spec*>{} : std::vector<const Spec*>{spec};
  }
  return all_by_default ? harness::all_specs() : std::vector<const Spec*>{&harness::default_spec()};
}

// Flushes standard output; false, having said why on stderr, once it cannot
// be written (a full disk, a closed pipe): answers are never dropped quietly.
bool flushed() {
  errno = 0;
  if (std::cout.flush()) return true;
  std::cerr << "chunkmeta: cannot write the answers to standard output"
            << (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()) << "; stopping\n";
  return false;
}

// One JSON line out per line in, echoing each line's "id"; flushes whenever no
// more input is buffered, so a process driving it line by line never waits on
// our buffer. Each line's spec (Mamba's without "spec") picks the
// implementation --impl names for that spec.
int compute(const std::string& impl_text, const harness::ResolveOptions& options, std::int64_t max_chunks) {
  // Own buffers for cin/cout (nothing here uses C stdio), so in_avail() sees
  // buffered input and a stream of lines is not flushed one line at a time.
  std::ios::sync_with_stdio(false);
  std::map<const Spec*, std::variant<Implementation, std::string>> resolved;
  const auto implementation_for = [&](const Spec& spec) -> const std::variant<Implementation, std::string>& {
    auto it = resolved.find(&spec);
    if (it != resolved.end()) return it->second;
    auto found = harness::resolve_implementations(spec, impl_text, options);
    std::variant<Implementation, std::string> one = std::string();
    if (auto* why = std::get_if<std::string>(&found)) {
      one = *why;
    } else if (auto& all = std::get<std::vector<Implementation>>(found); all.size() != 1) {
      one = impl_text + " has " + std::to_string(all.size()) + " implementations of " + std::string(spec.name()) +
            " (name one with plugin:PATH#NAME)";
    } else {
      one = std::move(all.front());
    }
    return resolved.emplace(&spec, std::move(one)).first->second;
  };
  bool all_ok = true;
  std::string line;
  const Limits limits{max_chunks};
  const bool lowered_cap = max_chunks < Limits::kDefaultMaxChunks;
  // Results as int32 bytes when the harness that started us offers it (harness/json.hpp).
  const char* encoding = std::getenv(harness::kAnswerEncodingVariable);
  const bool int32le = encoding != nullptr && std::string_view(encoding) == harness::kInt32le;
  while (std::getline(std::cin, line)) {
    auto request = harness::parse_request_line(line);
    harness::Json body;
    if (auto* bad = std::get_if<harness::InputError>(&request.workload)) {
      body = harness::error_json(*bad);
    } else if (const auto* why = std::get_if<std::string>(&implementation_for(*request.spec))) {
      body = harness::error_json(harness::InputError{"unsupported_spec", "spec", Error::kNoIndex, *why});
    } else {
      const Spec& spec = *request.spec;
      const auto& impl = std::get<Implementation>(implementation_for(spec));
      const auto& workload = std::get<Workload>(request.workload);
      // A lowered cap is a resource limit of this process, applied before the
      // implementation; every other rule is the implementation's to apply, so
      // that an implementation under test sees invalid input as it is.
      const auto refused = lowered_cap ? spec.validate(workload, limits) : std::nullopt;
      if (refused && refused->code == ErrorCode::output_too_large) {
        body = harness::error_json(*refused);
      } else {
        const auto answer = impl.compute(workload);
        const auto* outcome = std::get_if<harness::Outcome>(&answer);
        if (outcome != nullptr && outcome->ok()) {
          // The common answer, written without a DOM.
          if (int32le) {
            std::cout << harness::int32le_answer(request.id, outcome->value());
          } else {
            std::cout << harness::result_line(request.id, spec, outcome->value()) << '\n';
          }
          if (std::cin.rdbuf()->in_avail() <= 0 && !flushed()) return kExitFailure;
          continue;
        }
        body = outcome != nullptr ? harness::to_json(spec, *outcome)
                                  : harness::failure_json(std::get<harness::Misbehaviour>(answer));
      }
    }
    all_ok = all_ok && !body.contains("error") && !body.contains("failure");
    std::cout << harness::dump_line(harness::answer_json(request.id, body)) << '\n';
    if (std::cin.rdbuf()->in_avail() <= 0 && !flushed()) return kExitFailure;
  }
  if (!flushed()) return kExitFailure;
  return all_ok ? kExitOk : kExitFailure;
}

int keep(const std::filesystem::path& dir, const std::string& origin) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  int failures = 0;
  std::string line;
  for (int number = 1; std::getline(std::cin, line); ++number) {
    auto parsed = harness::parse_workload_line(line);
    if (auto* bad = std::get_if<harness::InputError>(&parsed)) {
      std::cerr << "chunkmeta: line " << number << ": " << bad->message << "\n";
      ++failures;
      continue;
    }
    const auto& [spec, workload] = std::get<harness::SpecWorkload>(parsed);
    const auto path = dir / (harness::content_name(*spec, workload) + ".json");
    std::string error;
    if (!harness::write_file_atomically(path, harness::corpus_entry(*spec, workload, origin).dump(2) + "\n", &error)) {
      std::cerr << "chunkmeta: line " << number << ": " << error << "\n";
      ++failures;
      continue;
    }
    std::cout << path.string() << "\n";
  }
  return failures == 0 ? kExitOk : kExitFailure;
}

// --- Fuzz inputs: bytes <-> workloads, and a finding -> a shrunk report ---

std::vector<std::uint8_t> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The specs whose differential fuzz target `target` is (none for the targets every spec shares).
std::vector<const Spec*> specs_fuzzed_by(const std::string& target) {
  std::vector<const Spec*> specs;
  for (const Spec* spec : harness::all_specs()) {
    if (spec->fuzz_target() == target) specs.push_back(spec);
  }
  return specs;
}

// The spec a target's workloads are printed as, and its workload of `bytes`.
const Spec& spec_for(const std::string& target) {
  const auto fuzzed = specs_fuzzed_by(target);
  return fuzzed.empty() ? harness::default_spec() : *fuzzed.front();
}

Workload decode_for(const std::string& target, const std::vector<std::uint8_t>& bytes) {
  if (target == "robustness") return harness::decode_any_workload(bytes);
  return spec_for(target).decode_fuzz_input(bytes);
}

int fuzz_decode(const std::string& target, const std::vector<std::filesystem::path>& inputs) {
  for (const auto& file : harness::corpus_files_any(inputs)) {
    std::cout << harness::dump_line(harness::to_json(spec_for(target), decode_for(target, read_bytes(file)))) << "\n";
  }
  return kExitOk;
}

int fuzz_encode(const std::string& target, const std::filesystem::path& dir,
                const std::vector<std::filesystem::path>& inputs) {
  std::filesystem::create_directories(dir);
  int skipped = 0;
  for (const auto& file : harness::corpus_files(inputs)) {
    auto loaded = harness::load_corpus_entry(file);
    if (auto* why = std::get_if<std::string>(&loaded)) {
      std::cerr << "chunkmeta: " << *why << "\n";
      ++skipped;
      continue;
    }
    const auto& entry = std::get<harness::CorpusEntry>(loaded);
    const Workload& workload = entry.workload;
    std::optional<std::vector<std::uint8_t>> bytes;
    if (entry.spec->fuzz_target() == target) bytes = entry.spec->encode_fuzz_input(workload);
    if (target == "robustness") bytes = harness::encode_any_workload(workload);
    if (target == "json_line" || target == "request_line") {
      const std::string line = target == "json_line" ? harness::dump_line(harness::to_json(*entry.spec, workload))
                                                     : harness::request_line(7, *entry.spec, workload);
      bytes = std::vector<std::uint8_t>(line.begin(), line.end());
    }
    if (target == "answer_line") {
      // The spec's index, then the reference's answer as `chunkmeta compute` writes it.
      const auto& specs = harness::all_specs();
      const auto index = std::find(specs.begin(), specs.end(), entry.spec) - specs.begin();
      const harness::Outcome expected = entry.spec->reference(workload);
      const std::string line = expected.ok() ? harness::result_line(7, *entry.spec, expected.value())
                                             : harness::dump_line(harness::answer_json(7, harness::to_json(*entry.spec, expected)));
      const std::string framed = static_cast<char>(index) + line;
      bytes = std::vector<std::uint8_t>(framed.begin(), framed.end());
    }
    if (!bytes) {
      std::cerr << "chunkmeta: " << file.string() << ": beyond what the " << target << " encoding holds; skipped\n";
      ++skipped;
      continue;
    }
    const auto path = dir / harness::content_name(*bytes);
    std::string error;
    if (!harness::write_file_atomically(path, std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()),
                                        &error)) {
      std::cerr << "chunkmeta: " << error << "\n";
      ++skipped;
      continue;
    }
    std::cout << path.string() << "\n";
  }
  return skipped == 0 ? kExitOk : kExitFailure;
}

int fuzz_shrink(const std::string& target, const std::filesystem::path& input, const std::string& report_dir,
                const std::vector<Implementation>& impls) {
  const auto bytes = read_bytes(input);
  const Workload found = decode_for(target, bytes);
  // Every spec's implementations in turn: a finding of one FLA output is the workload of both.
  std::vector<harness::Counterexample> failures;
  for (const Spec* spec : harness::all_specs()) {
    std::vector<Implementation> of_spec;
    for (const auto& impl : impls) {
      if (impl.spec == spec) of_spec.push_back(impl);
    }
    if (of_spec.empty()) continue;
    for (auto& cx : harness::shrink_failure(found, of_spec, "fuzz " + target)) failures.push_back(std::move(cx));
  }
  if (failures.empty()) {
    std::cout << "No finding: every implementation is right on "
              << harness::dump_line(harness::to_json(spec_for(target), found)) << "\n";
    return kExitOk;
  }
  std::string error;
  const auto dir = report_dir.empty() ? harness::default_report_dir() : std::filesystem::path(report_dir);
  for (const auto& cx : failures) {
    const auto files = harness::write_counterexample(cx, dir, &error);
    std::cout << harness::render(cx, files);
    if (!files) std::cerr << "chunkmeta: " << error << "\n";
  }
  return kExitFailure;
}

// --- verify and check ---

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

}  // namespace

int main(int argc, char** argv) {
  chunkmeta::harness::keep_freed_memory();  // cases' outputs reach megabytes, freed case after case
  CLI::App app{"chunkmeta: chunk metadata for chunked kernels (Mamba's cu_chunk_seqlen, seq_idx, last_chunk_indices; "
               "FLA's chunk_indices and chunk_offsets), fast implementations, and a harness that proves "
               "implementations equal to the references."};
  app.set_version_flag("--version", std::string("chunkmeta ") + std::string(kVersion));
  app.require_subcommand(1);

  const std::string spec_help = "The computation: " + harness::spec_names();
  const std::string impl_help = "Implementation: a built-in one (" + harness::default_spec().builtin_names() +
                                "), cmd:COMMAND (a program speaking the JSON Lines protocol of `compute`), or "
                                "plugin:PATH[#NAME] (a shared library exporting <chunkmeta/plugin.h>)";
  harness::ResolveOptions resolve;
  resolve.self_path = self_path(argv[0]);
  harness::set_program(resolve.self_path);

  std::string compute_impl = "fast";
  std::int64_t max_chunks = Limits::kDefaultMaxChunks;
  std::string compute_spec;
  auto* compute_cmd = app.add_subcommand(
      "compute", "Read workloads as JSON Lines on stdin, write one JSON line per input line on stdout, echoing "
                 "each line's \"id\"; a line's \"spec\" (Mamba's when it has none) picks the computation. Exit 0 "
                 "if every line succeeded, 1 if some line was an error, 2 on a usage error.");
  compute_cmd->add_option("--impl", compute_impl, impl_help)->capture_default_str();
  compute_cmd->add_option("--spec", compute_spec, "Accepted for symmetry with check; each line names its own spec");
  // Only lowers the cap: the implementations themselves run with the library's default limits.
  compute_cmd->add_option("--max-chunks", max_chunks,
                          "Refuse workloads needing more chunks (output_too_large); at most the default")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, Limits::kDefaultMaxChunks));

  std::vector<std::string> verify_impls;
  engine::SuiteOptions options;
  std::uint64_t seed = 0;
  std::string report_dir;
  std::string spec_name;
  std::vector<std::filesystem::path> corpus_inputs = {default_corpus(resolve.self_path)};
  auto* verify_cmd = app.add_subcommand(
      "verify", "Replay the corpus, then run each spec's property suite (differential against the reference, the "
                "spec invariants, metamorphic relations, validation) on the built-in implementations and print a "
                "summary. Exit 0 only if all held.");
  verify_cmd->add_option("--spec", spec_name, spec_help + " (default: every one)");
  verify_cmd->add_option("--impl", verify_impls, "Implementations to verify (default: every built-in one)");
  verify_cmd->add_option("--property", options.only, "Run only these properties (default: all)");
  verify_cmd->add_option("--cases", options.cases, "Cases per property (default: 1000 x CHUNKMETA_CASE_SCALE)");
  auto* seed_opt = verify_cmd->add_option("--seed", seed, "Seed of the run (default: random, printed)");
  verify_cmd->add_option("--report-dir", report_dir,
                         "Where counterexample reports go (default: $CHUNKMETA_REPORT_DIR or ./chunkmeta-reports)");
  auto* verify_corpus_opt =
      verify_cmd->add_option("--corpus", corpus_inputs, "Corpus files or folders replayed first")->capture_default_str();
  bool specs_json = false;
  auto* specs_cmd = app.add_subcommand("specs", "List the specs this build knows: each one's inputs in the engine's "
                                                "order, its outputs and its built-in implementations.");
  specs_cmd->add_flag("--json", specs_json,
                      "One JSON array: each spec's name, summary, inputs (name, kind, slot, dtypes), outputs (name, "
                      "columns, dtype), builtins, properties and edge classes");
  std::vector<std::string> check_impls;
  bool check_no_prefetch = false;
  auto* check_cmd = app.add_subcommand(
      "check", "Verify any implementation (built-in, cmd:COMMAND or plugin:PATH) of one spec: replay the corpus, "
               "then run every implementation property (differential against the reference, the spec's invariants, "
               "the metamorphic relations, rejection of invalid input), shrink each failure and write its report. "
               "Prints a summary with throughput. Exit 0 only if everything held.");
  check_cmd->add_option("--spec", spec_name, spec_help + " (default: mamba)");
  check_cmd->add_option("--impl", check_impls, impl_help)->required();
  check_cmd->add_option("--property", options.only, "Run only these properties (default: all)");
  check_cmd->add_option("--cases", options.cases,
                        "Cases per property (default: 1000 x CHUNKMETA_CASE_SCALE, or as many as the budget allows)");
  auto* check_seed_opt = check_cmd->add_option("--seed", seed, "Seed of the run (default: random, printed)");
  check_cmd->add_option("--time-budget", options.time_budget_seconds,
                        "Seconds for the whole suite, shared evenly between the properties (0: no budget)")
      ->check(CLI::NonNegativeNumber);
  check_cmd->add_option("--timeout", resolve.timeout_seconds,
                        "Seconds a subprocess may take to answer one workload before it counts as hung")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  check_cmd->add_flag("--valid-only", resolve.valid_only,
                      "Send valid workloads only (an engine function whose contract assumes validated input); "
                      "skips the invalid-input property. Plugins say this with their flags");
  check_cmd->add_flag("--in-process", resolve.plugins_in_process,
                      "Load plugins into this process (faster; a crashing plugin then ends the run) instead of "
                      "isolating them in a child process");
  check_cmd->add_flag("--no-batch", check_no_prefetch, "Send workloads one at a time instead of in batches");
  check_cmd->add_option("--report-dir", report_dir,
                        "Where counterexample reports go (default: $CHUNKMETA_REPORT_DIR or ./chunkmeta-reports)");
  auto* check_corpus_opt =
      check_cmd->add_option("--corpus", corpus_inputs, "Corpus files or folders replayed first")->capture_default_str();
  bool keep_going = false;
  // Options that decide when a run with a failure ends: the same for verify and check.
  for (auto* cmd : {verify_cmd, check_cmd}) {
    cmd->add_option("--shrink-budget", options.shrink_budget_seconds,
                    "Seconds one failure may spend shrinking; then its smallest case so far is reported, marked "
                    "\"not fully shrunk\" (0: no limit)")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    cmd->add_flag("--fail-fast", options.stop_at_first_failure,
                  "Stop at the first failure's minimal report (skip the remaining properties)");
    cmd->add_option("--exclude", options.excluded_classes,
                    "An edge class the engine never sends (repeatable; a wrong name lists them): no case, shrink "
                    "candidate or corpus entry in it is tried, and the summary counts what was left out");
    cmd->add_flag("--keep-going", keep_going,
                  "Run the properties even for an implementation whose corpus replay already fails (default: "
                  "report the replay's shrunk failure and skip them)");
  }

  std::vector<std::string> replay_impls;
  std::vector<std::filesystem::path> replay_inputs;
  bool replay_quiet = false;
  auto* replay_cmd = app.add_subcommand(
      "replay", "Replay corpus entries or counterexample reports (files or folders) against implementations, each "
                "entry against those of its spec.");
  replay_cmd->add_option("--spec", spec_name, spec_help + " (default: every one)");
  replay_cmd->add_option("--impl", replay_impls, "Implementations (default: every built-in one). " + impl_help);
  replay_cmd->add_option("files", replay_inputs, "Corpus entries, reports, or folders of them")->required();
  replay_cmd->add_flag("--quiet", replay_quiet, "Print only failures");

  std::string keep_origin;
  std::filesystem::path keep_dir;
  auto* keep_cmd = app.add_subcommand(
      "keep", "Read workloads as JSON Lines on stdin and write each as a corpus entry (named by content hash, "
              "with today's reference outcome as \"expected\") into DIR, e.g. corpus/regressions.");
  keep_cmd->add_option("dir", keep_dir, "Corpus folder")->required();
  keep_cmd->add_option("--origin", keep_origin, "Where the workloads come from (kept in each entry)")->required();

  // Fuzz inputs <-> workloads, and fuzz findings -> shrunk reports.
  std::string fuzz_target(harness::default_spec().fuzz_target());
  // Each spec's differential target (Spec::fuzz_target), then the targets every spec shares.
  std::vector<std::string> decoding_targets;
  for (const Spec* spec : harness::all_specs()) {
    const std::string target(spec->fuzz_target());
    if (std::find(decoding_targets.begin(), decoding_targets.end(), target) == decoding_targets.end())
      decoding_targets.push_back(target);
  }
  decoding_targets.push_back("robustness");
  std::vector<std::string> fuzz_targets = decoding_targets;
  for (const char* shared : {"json_line", "request_line", "answer_line"}) fuzz_targets.emplace_back(shared);
  const auto listed = [](const std::vector<std::string>& names) {
    std::string text;
    for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
    return text;
  };
  std::vector<std::filesystem::path> decode_inputs;
  auto* decode_cmd = app.add_subcommand("fuzz-decode", "Print the workload (one JSON line) each fuzz input means.");
  decode_cmd->add_option("--target", fuzz_target, listed(decoding_targets))->capture_default_str()
      ->check(CLI::IsMember(decoding_targets));
  decode_cmd->add_option("files", decode_inputs, "Fuzz inputs or folders of them")->required();
  std::filesystem::path encode_dir;
  std::vector<std::filesystem::path> encode_inputs;
  auto* encode_cmd = app.add_subcommand(
      "fuzz-encode", "Write the workloads of corpus entries / reports as fuzz inputs for a target, named by content hash.");
  encode_cmd->add_option("--target", fuzz_target, listed(fuzz_targets))
      ->capture_default_str()
      ->check(CLI::IsMember(fuzz_targets));
  encode_cmd->add_option("dir", encode_dir, "Output folder")->required();
  encode_cmd->add_option("files", encode_inputs, "Corpus entries, reports, or folders of them")->required();
  std::filesystem::path shrink_input;
  std::string shrink_report_dir;
  auto* shrink_cmd = app.add_subcommand(
      "fuzz-shrink", "Decode a fuzz finding (crash or mismatch file), shrink its workload while it still fails, "
                     "and write the same report a failing property writes.");
  shrink_cmd->add_option("--target", fuzz_target, listed(decoding_targets))->capture_default_str()
      ->check(CLI::IsMember(decoding_targets));
  shrink_cmd->add_option("file", shrink_input, "The finding")->required();
  std::vector<std::string> shrink_impls;
  shrink_cmd->add_option("--impl", shrink_impls,
                         "Implementations the finding is shrunk against, as the fuzz target ran them (default: every "
                         "built-in one of the target's specs; plugins load in this process, like CHUNKMETA_FUZZ_PLUGIN)");
  shrink_cmd->add_option("--report-dir", shrink_report_dir, "Where the report goes (default: $CHUNKMETA_REPORT_DIR)");

  // Reads a plugin's table in this process, for a harness that keeps the plugin out of its own.
  std::string table_plugin;
  auto* table_cmd = app.add_subcommand("plugin-table", "Print a plugin's implementations, one JSON line each "
                                                       "(name, description, spec, rejects_invalid_input)");
  table_cmd->add_option("plugin", table_plugin, "PATH or PATH#NAME")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }

  if (*specs_cmd) return chunkmeta::cli::list_specs(specs_json);
  if (*compute_cmd) {
    if (!compute_spec.empty() && spec_named(compute_spec) == nullptr) return kExitUsage;
    // Inside `compute` a plugin runs in this process: this process is the isolation.
    harness::ResolveOptions here = resolve;
    here.plugins_in_process = true;
    // A name that resolves for no spec at all is a usage error now, not an error line per request.
    bool resolvable = false;
    std::string why;
    for (const Spec* spec : harness::all_specs()) {
      auto found = harness::resolve_implementations(*spec, compute_impl, here);
      if (auto* not_found = std::get_if<std::string>(&found)) {
        if (why.empty()) why = *not_found;
      } else {
        resolvable = true;
      }
    }
    if (!resolvable) {
      std::cerr << "chunkmeta: " << why << "\n";
      return kExitUsage;
    }
    return compute(compute_impl, here, max_chunks);
  }

  if (*table_cmd) {
    auto loaded = harness::load_plugin(table_plugin);
    if (auto* why = std::get_if<std::string>(&loaded)) {
      std::cout << harness::dump_line(harness::Json{{"error", *why}}) << "\n";
      return kExitFailure;
    }
    for (const auto& impl : std::get<std::vector<Implementation>>(loaded)) {
      std::cout << harness::dump_line(harness::Json{{"name", impl.name},
                                                    {"description", impl.description},
                                                    {"spec", std::string(impl.spec->name())},
                                                    {"rejects_invalid_input", impl.rejects_invalid_input}})
                << "\n";
    }
    return kExitOk;
  }
  if (*keep_cmd) return keep(keep_dir, keep_origin);
  if (*decode_cmd) return fuzz_decode(fuzz_target, decode_inputs);
  if (*encode_cmd) return fuzz_encode(fuzz_target, encode_dir, encode_inputs);
  if (*shrink_cmd) {
    harness::ResolveOptions here = resolve;
    here.plugins_in_process = true;
    std::vector<Implementation> impls;
    auto target_specs = specs_fuzzed_by(fuzz_target);
    if (target_specs.empty()) target_specs.push_back(&harness::default_spec());
    for (const Spec* spec : target_specs) {
      if (!shrink_impls.empty()) {
        // A plugin's implementations may be of one of the specs only.
        for (const auto& text : shrink_impls) {
          auto found = harness::resolve_implementations(*spec, text, here);
          if (auto* all = std::get_if<std::vector<Implementation>>(&found))
            for (auto& impl : *all) impls.push_back(std::move(impl));
        }
        continue;
      }
      for (const auto& impl : spec->builtins()) impls.push_back(impl);
    }
    if (impls.empty()) {
      std::cerr << "chunkmeta: no implementation of the " << fuzz_target << " target's specs in --impl\n";
      return kExitUsage;
    }
    return fuzz_shrink(fuzz_target, shrink_input, shrink_report_dir, impls);
  }

  if (*replay_cmd) {
    std::vector<Implementation> impls;
    for (const Spec* spec : specs_of(spec_name, true)) {
      if (replay_impls.empty()) {
        for (const auto& impl : spec->builtins()) impls.push_back(impl);
        continue;
      }
      auto chosen = implementations(*spec, replay_impls, resolve);
      // Without --spec, a name of another spec's implementation (a plugin of one spec) is not an error.
      if (!chosen) {
        if (!spec_name.empty()) return kExitUsage;
        continue;
      }
      for (auto& impl : *chosen) impls.push_back(std::move(impl));
    }
    if (impls.empty()) return kExitUsage;
    const auto replayed = engine::replay_corpus(impls, replay_inputs);
    if (!replay_quiet || !replayed.passed()) std::cout << replayed.text;
    if (replayed.files == 0) {
      // Replaying nothing proves nothing: a wrong --spec, an empty folder or a typo is not a pass.
      std::cerr << "chunkmeta: nothing was replayed: no entry under the files named is of "
                << (spec_name.empty() ? "any spec" : "spec " + spec_name) << "\n";
      return kExitFailure;
    }
    return replayed.passed() ? kExitOk : kExitFailure;
  }

  const auto specs = specs_of(spec_name, static_cast<bool>(*verify_cmd));
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
  if (*seed_opt || *check_seed_opt) options.seed = seed;
  if (!report_dir.empty()) options.report_dir = report_dir;
  engine::CheckOptions run;
  run.corpus = corpus_inputs;
  run.properties_after_replay_failure = keep_going;
  options.distinct_bugs = keep_going;
  // A program without its corpus beside it (copied out of its prefix) replays none and says so.
  const bool default_corpus_missing = !*verify_corpus_opt && !*check_corpus_opt && !std::filesystem::exists(corpus_inputs.front());
  if (default_corpus_missing) {
    std::cout << "No corpus beside this program (" << corpus_inputs.front().string() << "); --corpus names one\n";
    run.corpus.clear();
  }
  std::vector<Run> runs;
  if (*check_cmd) {
    Processes processes;
    resolve.processes = &processes;
    const Spec& spec = *specs.front();
    auto impls = implementations(spec, check_impls, resolve);
    if (!impls) return kExitUsage;
    for (const auto& [name, process] : processes) process->start_in_background();
    options.include_library = false;
    options.prefetch = !check_no_prefetch;
    // The rerun command repeats the options that change what is sent.
    std::string rerun = harness::shell_quote(resolve.self_path) + " check";
    if (&spec != &harness::default_spec()) rerun += " --spec " + std::string(spec.name());
    rerun += " --impl {implementation} --property {property} --seed {seed}";
    if (resolve.valid_only) rerun += " --valid-only";
    if (resolve.plugins_in_process) rerun += " --in-process";
    for (const auto& name : options.excluded_classes) rerun += " --exclude " + harness::shell_quote(name);
    if (*check_cmd->get_option("--timeout")) {
      std::ostringstream timeout;
      timeout << resolve.timeout_seconds;
      rerun += " --timeout " + timeout.str();
    }
    options.rerun_command = rerun;
    run.suite = options;
    runs.push_back({&spec, std::move(*impls)});
    return run_verification(runs, run, &processes);
  }

  for (const Spec* spec : specs) {
    auto impls = implementations(*spec, verify_impls, resolve);
    if (!impls) return kExitUsage;
    runs.push_back({spec, std::move(*impls)});
  }
  options.rerun_command = harness::shell_quote(resolve.self_path) +
                          " verify --spec {spec} --impl {implementation} --property {property} --seed {seed}";
  run.suite = options;
  return run_verification(runs, run, nullptr);
}
