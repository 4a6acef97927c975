// The fuzz targets' inputs and findings: `fuzz-decode` (bytes -> the workload
// they mean), `fuzz-encode` (corpus entries -> a target's inputs) and
// `fuzz-shrink` (a finding -> the shrunk report a failing property writes).
#include <algorithm>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include "chunkmeta/harness/corpus.hpp"
#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/report.hpp"
#include "chunkmeta/harness/shrink.hpp"
#include "cli.hpp"

namespace chunkmeta::cli {
namespace {

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

struct FuzzOptions {
  std::string target{harness::default_spec().fuzz_target()};
  std::vector<std::filesystem::path> decode_inputs;
  std::filesystem::path encode_dir;
  std::vector<std::filesystem::path> encode_inputs;
  std::filesystem::path shrink_input;
  std::string shrink_report_dir;
  std::vector<std::string> shrink_impls;
};

// The implementations a finding is shrunk against: --impl's, else every built-in one of the target's specs.
std::optional<std::vector<Implementation>> shrink_implementations(const FuzzOptions& chosen,
                                                                  const harness::ResolveOptions& resolve) {
  harness::ResolveOptions here = resolve;
  here.plugins_in_process = true;
  std::vector<Implementation> impls;
  auto target_specs = specs_fuzzed_by(chosen.target);
  if (target_specs.empty()) target_specs.push_back(&harness::default_spec());
  for (const Spec* spec : target_specs) {
    if (!chosen.shrink_impls.empty()) {
      // A plugin's implementations may be of one of the specs only.
      for (const auto& text : chosen.shrink_impls) {
        auto found = harness::resolve_implementations(*spec, text, here);
        if (auto* all = std::get_if<std::vector<Implementation>>(&found))
          for (auto& impl : *all) impls.push_back(std::move(impl));
      }
      continue;
    }
    for (const auto& impl : spec->builtins()) impls.push_back(impl);
  }
  if (impls.empty()) {
    std::cerr << "chunkmeta: no implementation of the " << chosen.target << " target's specs in --impl\n";
    return std::nullopt;
  }
  return impls;
}

}  // namespace

std::vector<Command> add_fuzz_commands(CLI::App& app, const harness::ResolveOptions& resolve) {
  auto chosen = std::make_shared<FuzzOptions>();
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
  auto* decode = app.add_subcommand("fuzz-decode", "Print the workload (one JSON line) each fuzz input means.");
  decode->add_option("--target", chosen->target, listed(decoding_targets))->capture_default_str()
      ->check(CLI::IsMember(decoding_targets));
  decode->add_option("files", chosen->decode_inputs, "Fuzz inputs or folders of them")->required();
  auto* encode = app.add_subcommand(
      "fuzz-encode", "Write the workloads of corpus entries / reports as fuzz inputs for a target, named by content hash.");
  encode->add_option("--target", chosen->target, listed(fuzz_targets))
      ->capture_default_str()
      ->check(CLI::IsMember(fuzz_targets));
  encode->add_option("dir", chosen->encode_dir, "Output folder")->required();
  encode->add_option("files", chosen->encode_inputs, "Corpus entries, reports, or folders of them")->required();
  auto* shrink = app.add_subcommand(
      "fuzz-shrink", "Decode a fuzz finding (crash or mismatch file), shrink its workload while it still fails, "
                     "and write the same report a failing property writes.");
  shrink->add_option("--target", chosen->target, listed(decoding_targets))->capture_default_str()
      ->check(CLI::IsMember(decoding_targets));
  shrink->add_option("file", chosen->shrink_input, "The finding")->required();
  shrink->add_option("--impl", chosen->shrink_impls,
                     "Implementations the finding is shrunk against, as the fuzz target ran them (default: every "
                     "built-in one of the target's specs; plugins load in this process, like CHUNKMETA_FUZZ_PLUGIN)");
  shrink->add_option("--report-dir", chosen->shrink_report_dir, "Where the report goes (default: $CHUNKMETA_REPORT_DIR)");
  return {{decode, [chosen] { return fuzz_decode(chosen->target, chosen->decode_inputs); }},
          {encode, [chosen] { return fuzz_encode(chosen->target, chosen->encode_dir, chosen->encode_inputs); }},
          {shrink, [chosen, resolve] {
             const auto impls = shrink_implementations(*chosen, resolve);
             if (!impls) return kExitUsage;
             return fuzz_shrink(chosen->target, chosen->shrink_input, chosen->shrink_report_dir, *impls);
           }}};
}

}  // namespace chunkmeta::cli
