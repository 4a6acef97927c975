// Corpus entries: workloads kept as readable JSON values (corpus/), replayed
// against every implementation by ctest and by `chunkmeta replay`.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "chunkmeta/harness/report.hpp"
#include "chunkmeta/harness/spec.hpp"

namespace chunkmeta::harness {

struct CorpusEntry {
  std::filesystem::path path;
  const Spec* spec = nullptr;  // the workload's ("spec" in it; Mamba without)
  Workload workload;
  std::optional<Outcome> expected;  // the reference outcome stored with the entry, if any
};

// The largest file read as a corpus entry (entries of the largest workloads
// keep their expectation out: they are kilobytes).
inline constexpr std::uintmax_t kLargestCorpusEntryBytes = std::uintmax_t{256} << 20;

// Reads a corpus entry, a counterexample report (both have "workload"), or a
// bare workload object. Returns a sentence saying what is wrong otherwise
// (not a regular file, too large, nested too deep, not JSON, not a workload).
std::variant<CorpusEntry, std::string> load_corpus_entry(const std::filesystem::path& path);

// The .json files named, with directories expanded recursively, sorted.
std::vector<std::filesystem::path> corpus_files(const std::vector<std::filesystem::path>& inputs);
// The same for files of any name (fuzz inputs).
std::vector<std::filesystem::path> corpus_files_any(const std::vector<std::filesystem::path>& inputs);

// Replays one entry: the stored expectation against today's reference, then
// the oracle on each implementation of the entry's spec (the others are not
// sent it). Returns one counterexample per failure.
std::vector<Counterexample> replay(const CorpusEntry& entry, std::span<const Implementation> implementations);

}  // namespace chunkmeta::harness
