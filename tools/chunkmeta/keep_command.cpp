// `chunkmeta keep DIR --origin WHERE`: workloads read as JSON Lines kept as
// corpus entries, each with today's reference outcome as "expected".
#include <iostream>
#include <string>

#include "chunkmeta/harness/corpus.hpp"
#include "chunkmeta/harness/json.hpp"
#include "cli.hpp"

namespace chunkmeta::cli {
namespace {

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
    // Kept already (the name is the content's): the entry keeps the origin it was first kept with.
    if (auto kept = harness::load_corpus_entry(path); std::holds_alternative<harness::CorpusEntry>(kept)) {
      std::cout << path.string() << " (kept before; its origin unchanged)\n";
      continue;
    }
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

struct KeepOptions {
  std::filesystem::path dir;
  std::string origin;
};

}  // namespace

Command add_keep_command(CLI::App& app) {
  auto chosen = std::make_shared<KeepOptions>();
  auto* cmd = app.add_subcommand(
      "keep", "Read workloads as JSON Lines on stdin and write each as a corpus entry (named by content hash, "
              "with today's reference outcome as \"expected\") into DIR, e.g. corpus/regressions.");
  cmd->add_option("dir", chosen->dir, "Corpus folder")->required();
  cmd->add_option("--origin", chosen->origin, "Where the workloads come from (kept in each entry)")->required();
  return {cmd, [chosen] { return keep(chosen->dir, chosen->origin); }};
}

}  // namespace chunkmeta::cli
