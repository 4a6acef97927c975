// chunkmeta: compute chunk metadata from JSON Lines, verify implementations
// with the property suite, and replay corpus entries and reports.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <iostream>
#include <string>
#include <vector>

#include "chunkmeta/harness/corpus.hpp"
#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/implementations.hpp"
#include "chunkmeta/properties/suite.hpp"

namespace {

using namespace chunkmeta;
using harness::Implementation;

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

std::string builtin_names() {
  std::string names;
  for (const auto& impl : harness::builtin_implementations()) names += (names.empty() ? "" : ", ") + impl.name;
  return names;
}

// Resolves --impl names; an empty list means every built-in implementation.
std::optional<std::vector<Implementation>> implementations(const std::vector<std::string>& names) {
  if (names.empty()) return harness::builtin_implementations();
  std::vector<Implementation> chosen;
  for (const auto& name : names) {
    auto impl = harness::find_builtin(name);
    if (!impl) {
      std::cerr << "chunkmeta: unknown implementation '" << name << "' (known: " << builtin_names() << ")\n";
      return std::nullopt;
    }
    chosen.push_back(*impl);
  }
  return chosen;
}

// One JSON line out per line in; flushes whenever no more input is buffered,
// so a process driving it line by line never waits on our buffer.
int compute(const Implementation& impl, std::int64_t max_chunks) {
  // Own buffers for cin/cout (nothing here uses C stdio), so in_avail() sees
  // buffered input and a stream of lines is not flushed one line at a time.
  std::ios::sync_with_stdio(false);
  bool all_ok = true;
  std::string line;
  const Limits limits{max_chunks};
  while (std::getline(std::cin, line)) {
    auto parsed = harness::parse_workload_line(line);
    harness::Json out;
    if (auto* bad = std::get_if<harness::InputError>(&parsed)) {
      out = harness::error_json(*bad);
      all_ok = false;
    } else {
      const auto& workload = std::get<Workload>(parsed);
      // The cap is a library limit: apply it before the implementation runs.
      if (auto refused = validate(workload, limits)) {
        out = harness::error_json(*refused);
      } else {
        out = harness::to_json(impl.compute(workload));
      }
      all_ok = all_ok && !out.contains("error");
    }
    std::cout << harness::dump_line(out) << '\n';
    if (std::cin.rdbuf()->in_avail() <= 0) std::cout.flush();
  }
  std::cout.flush();
  return all_ok ? kExitOk : kExitFailure;
}

int replay_files(const std::vector<Implementation>& impls, const std::vector<std::filesystem::path>& inputs,
                 bool quiet) {
  const auto files = harness::corpus_files(inputs);
  int failures = 0;
  int unreadable = 0;
  for (const auto& file : files) {
    auto loaded = harness::load_corpus_entry(file);
    if (auto* why = std::get_if<std::string>(&loaded)) {
      std::cerr << "chunkmeta: " << *why << "\n";
      ++unreadable;
      continue;
    }
    for (const auto& cx : harness::replay(std::get<harness::CorpusEntry>(loaded), impls)) {
      std::cout << harness::render(cx);
      ++failures;
    }
  }
  if (!quiet || failures > 0 || unreadable > 0) {
    std::cout << "Replay: " << files.size() << " files x " << impls.size() << " implementations, " << failures
              << " failures, " << unreadable << " unreadable\n";
  }
  return failures == 0 && unreadable == 0 ? kExitOk : kExitFailure;
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
    const auto& workload = std::get<Workload>(parsed);
    const auto path = dir / (harness::content_name(workload) + ".json");
    std::ofstream(path) << harness::corpus_entry(workload, origin).dump(2) << "\n";
    std::cout << path.string() << "\n";
  }
  return failures == 0 ? kExitOk : kExitFailure;
}

std::vector<std::uint8_t> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Workload decode_for(const std::string& target, const std::vector<std::uint8_t>& bytes) {
  return target == "robustness" ? harness::decode_any_workload(bytes) : harness::decode_valid_workload(bytes);
}

int fuzz_decode(const std::string& target, const std::vector<std::filesystem::path>& inputs) {
  for (const auto& file : harness::corpus_files_any(inputs)) {
    std::cout << harness::dump_line(harness::to_json(decode_for(target, read_bytes(file)))) << "\n";
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
    const Workload& workload = std::get<harness::CorpusEntry>(loaded).workload;
    std::optional<std::vector<std::uint8_t>> bytes;
    if (target == "differential") bytes = harness::encode_valid_workload(workload);
    if (target == "robustness") bytes = harness::encode_any_workload(workload);
    if (target == "json_line") {
      const std::string line = harness::dump_line(harness::to_json(workload));
      bytes = std::vector<std::uint8_t>(line.begin(), line.end());
    }
    if (!bytes) {
      std::cerr << "chunkmeta: " << file.string() << ": beyond what the " << target << " encoding holds; skipped\n";
      ++skipped;
      continue;
    }
    const auto path = dir / harness::content_name(*bytes);
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes->data()),
                                                static_cast<std::streamsize>(bytes->size()));
    std::cout << path.string() << "\n";
  }
  return skipped == 0 ? kExitOk : kExitFailure;
}

int fuzz_shrink(const std::string& target, const std::filesystem::path& input, const std::string& report_dir) {
  const auto bytes = read_bytes(input);
  const Workload found = decode_for(target, bytes);
  const auto failures = harness::shrink_failure(found, harness::builtin_implementations(), "fuzz " + target);
  if (failures.empty()) {
    std::cout << "No finding: every implementation is right on " << harness::dump_line(harness::to_json(found))
              << "\n";
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"chunkmeta: Mamba chunk metadata (cu_chunk_seqlen, seq_idx, last_chunk_indices), a fast "
               "implementation, and a harness that proves implementations equal to the reference."};
  app.set_version_flag("--version", std::string("chunkmeta ") + std::string(kVersion));
  app.require_subcommand(1);

  std::string compute_impl = "fast";
  std::int64_t max_chunks = Limits::kDefaultMaxChunks;
  auto* compute_cmd = app.add_subcommand(
      "compute", "Read workloads as JSON Lines on stdin, write one JSON line per input line on stdout.\n"
                 "Exit 0 if every line succeeded, 1 if some line was an error, 2 on a usage error.");
  compute_cmd->add_option("--impl", compute_impl, "Implementation: " + builtin_names())->capture_default_str();
  // Only lowers the cap: the implementations themselves run with the library's default limits.
  compute_cmd->add_option("--max-chunks", max_chunks,
                          "Refuse workloads needing more chunks (output_too_large); at most the default")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, Limits::kDefaultMaxChunks));

  std::vector<std::string> verify_impls;
  properties::SuiteOptions options;
  std::uint64_t seed = 0;
  std::string report_dir;
  std::vector<std::filesystem::path> corpus_inputs = {CHUNKMETA_DEFAULT_CORPUS};
  auto* verify_cmd = app.add_subcommand(
      "verify", "Replay the corpus, then run the property suite (differential against the reference, the SPEC "
                "invariants, metamorphic relations, validation) and print a summary. Exit 0 only if all held.");
  verify_cmd->add_option("--impl", verify_impls, "Implementations to verify (default: all built-in: " +
                                                     builtin_names() + ")");
  verify_cmd->add_option("--property", options.only, "Run only these properties (default: all)");
  verify_cmd->add_option("--cases", options.cases, "Cases per property (default: 1000 x CHUNKMETA_CASE_SCALE)");
  auto* seed_opt = verify_cmd->add_option("--seed", seed, "RapidCheck seed (default: random, printed on failure)");
  verify_cmd->add_option("--report-dir", report_dir,
                         "Where counterexample reports go (default: $CHUNKMETA_REPORT_DIR or ./chunkmeta-reports)");
  verify_cmd->add_option("--corpus", corpus_inputs, "Corpus files or folders replayed first")->capture_default_str();

  std::vector<std::string> replay_impls;
  std::vector<std::filesystem::path> replay_inputs;
  bool replay_quiet = false;
  auto* replay_cmd = app.add_subcommand(
      "replay", "Replay corpus entries or counterexample reports (files or folders) against implementations.");
  replay_cmd->add_option("--impl", replay_impls, "Implementations (default: all built-in)");
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
  std::string fuzz_target = "differential";
  const std::vector<std::string> fuzz_targets = {"differential", "robustness", "json_line"};
  std::vector<std::filesystem::path> decode_inputs;
  auto* decode_cmd = app.add_subcommand("fuzz-decode", "Print the workload (one JSON line) each fuzz input means.");
  decode_cmd->add_option("--target", fuzz_target, "differential or robustness")->capture_default_str()
      ->check(CLI::IsMember({"differential", "robustness"}));
  decode_cmd->add_option("files", decode_inputs, "Fuzz inputs or folders of them")->required();
  std::filesystem::path encode_dir;
  std::vector<std::filesystem::path> encode_inputs;
  auto* encode_cmd = app.add_subcommand(
      "fuzz-encode", "Write the workloads of corpus entries / reports as fuzz inputs for a target, named by content hash.");
  encode_cmd->add_option("--target", fuzz_target, "differential, robustness or json_line")->capture_default_str()
      ->check(CLI::IsMember(fuzz_targets));
  encode_cmd->add_option("dir", encode_dir, "Output folder")->required();
  encode_cmd->add_option("files", encode_inputs, "Corpus entries, reports, or folders of them")->required();
  std::filesystem::path shrink_input;
  std::string shrink_report_dir;
  auto* shrink_cmd = app.add_subcommand(
      "fuzz-shrink", "Decode a fuzz finding (crash or mismatch file), shrink its workload while it still fails, "
                     "and write the same report a failing property writes.");
  shrink_cmd->add_option("--target", fuzz_target, "differential or robustness")->capture_default_str()
      ->check(CLI::IsMember({"differential", "robustness"}));
  shrink_cmd->add_option("file", shrink_input, "The finding")->required();
  shrink_cmd->add_option("--report-dir", shrink_report_dir, "Where the report goes (default: $CHUNKMETA_REPORT_DIR)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }

  if (*compute_cmd) {
    auto impl = harness::find_builtin(compute_impl);
    if (!impl) {
      std::cerr << "chunkmeta: unknown implementation '" << compute_impl << "' (known: " << builtin_names() << ")\n";
      return kExitUsage;
    }
    return compute(*impl, max_chunks);
  }

  if (*keep_cmd) return keep(keep_dir, keep_origin);
  if (*decode_cmd) return fuzz_decode(fuzz_target, decode_inputs);
  if (*encode_cmd) return fuzz_encode(fuzz_target, encode_dir, encode_inputs);
  if (*shrink_cmd) return fuzz_shrink(fuzz_target, shrink_input, shrink_report_dir);

  if (*replay_cmd) {
    auto impls = implementations(replay_impls);
    if (!impls) return kExitUsage;
    return replay_files(*impls, replay_inputs, replay_quiet);
  }

  // verify
  auto impls = implementations(verify_impls);
  if (!impls) return kExitUsage;
  for (const auto& name : options.only) {
    if (properties::find_property(name) == nullptr) {
      std::cerr << "chunkmeta: unknown property '" << name << "'\n";
      return kExitUsage;
    }
  }
  if (*seed_opt) options.seed = seed;
  if (!report_dir.empty()) options.report_dir = report_dir;
  options.rerun_command = std::string(argv[0]) + " verify --impl {implementation} --property {property}";

  std::cout << "Replaying the corpus...\n";
  const int replayed = replay_files(*impls, corpus_inputs, false);

  std::vector<properties::SuiteResult> results;
  for (const auto& impl : *impls) {
    std::cout << "Verifying " << impl.name << " (" << impl.description << ")...\n" << std::flush;
    results.push_back(properties::run_suite(impl, options));
    options.include_library = false;  // library properties do not depend on the implementation
  }
  std::cout << properties::summarize(results);
  bool passed = replayed == kExitOk;
  for (const auto& suite : results) passed = passed && suite.passed();
  std::cout << (passed ? "VERIFIED: every property held\n" : "NOT VERIFIED: see the counterexamples above\n");
  return passed ? kExitOk : kExitFailure;
}
