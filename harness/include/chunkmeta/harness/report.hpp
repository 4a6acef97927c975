// Rendering: counterexample reports as text on the terminal and as JSON on
// disk, and the corpus entry that keeps a failing workload.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "chunkmeta/harness/json.hpp"

namespace chunkmeta::harness {

struct WrittenFiles {
  std::filesystem::path report;
  std::filesystem::path corpus_entry;
};

// Stable name of a workload: 16 hex digits of FNV-1a over its compact JSON
// (Mamba's without "spec", so its names are what they always were).
std::string content_name(const Spec& spec, const Workload& workload);
std::string content_name(std::span<const std::uint8_t> bytes);

// The corpus format: {"format", "origin", "workload", "expected"}; "expected" is
// the reference outcome when the entry was made, so a changed reference shows.
// A workload of a spec other than Mamba names it ("spec" in "workload").
Json corpus_entry(const Spec& spec, const Workload& workload, const std::string& origin);

// `text` as one shell word (quoted unless it is plain).
std::string shell_quote(const std::string& text);

// The program that replay commands name: the running `chunkmeta` (its real
// path, set by the CLI at start-up), else "chunkmeta" as found on PATH.
void set_program(std::string path);
const std::string& program();

// A shell command that replays a corpus entry or report against `implementation`
// of `spec`; empty for a Python function (its replay is chunkmeta.replay()).
std::string replay_command(const Spec& spec, const std::string& implementation, const std::filesystem::path& file);

Json to_json(const Counterexample& counterexample, const std::optional<WrittenFiles>& files = std::nullopt);
// An outcome as reports show it: whole up to 100,000 entries, else
// {"omitted": what it holds} (tens of millions of chunks are gigabytes of JSON).
Json outcome_for_report(const Spec& spec, const Outcome& outcome);
std::string render(const Counterexample& counterexample, const std::optional<WrittenFiles>& files = std::nullopt);

// For fuzz targets: print every failure's report and the input bytes, then
// std::abort() so the fuzzer keeps the input. Returns when there is none.
// `target` is the fuzz target, for the fuzz-shrink command printed.
void abort_on_failure(const std::vector<Counterexample>& failures, std::span<const std::uint8_t> input,
                      std::string_view target);

// Writes `content` to `path` whole or not at all: into a new temporary file
// beside it, then renamed over `path` (replacing a symlink there, never
// writing through it). False, with why in `error`, on any failure: a full disk
// leaves no file rather than an empty one.
bool write_file_atomically(const std::filesystem::path& path, std::string_view content, std::string* error);

// $CHUNKMETA_REPORT_DIR, else ./chunkmeta-reports.
std::filesystem::path default_report_dir();

// Writes <dir>/<implementation>-<property>-<name>.report.json and (unless
// told not to: its "expected" can be huge, and a report replays too)
// <dir>/corpus/<name>.json. Returns nullopt (and says why in `error`) on I/O failure.
std::optional<WrittenFiles> write_counterexample(const Counterexample& counterexample,
                                                 const std::filesystem::path& dir, std::string* error,
                                                 bool with_corpus_entry = true);

// The files of one finding while it is being shrunk: each write replaces the
// previous one's report, so the report dir always holds the smallest case so
// far. Only the final write (`final`) adds the corpus entry.
class ReportSlot {
 public:
  explicit ReportSlot(std::filesystem::path dir) : dir_(std::move(dir)) {}
  std::optional<WrittenFiles> write(const Counterexample& counterexample, std::string* error, bool final);
  // The files of the latest write.
  const std::optional<WrittenFiles>& files() const { return files_; }
  // Removes what the slot wrote (a finding that did not hold).
  void withdraw();

 private:
  std::filesystem::path dir_;
  std::optional<WrittenFiles> files_;
};

}  // namespace chunkmeta::harness
