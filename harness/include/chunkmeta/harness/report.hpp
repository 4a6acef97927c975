// Counterexample reports: what a person needs to act on a failure at once, as
// text on the terminal and as JSON on disk, plus the corpus entry that keeps it.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/shrink.hpp"

namespace chunkmeta::harness {

// A workload tied to the main one by a metamorphic relation ("left half", ...).
struct RelatedWorkload {
  std::string role;
  Workload workload;
  std::optional<Outcome> actual;
};

struct Counterexample {
  std::string implementation;
  std::string property;  // the property, or "replay" / "fuzz"
  Workload workload;     // the (shrunk) workload the finding is about
  Finding finding;
  std::vector<RelatedWorkload> related;
  std::optional<std::uint64_t> seed;  // RapidCheck seed of the run
  std::string reproduce;              // RC_PARAMS value that replays the shrunk case
  std::string rerun_command;          // re-runs the property with `reproduce`
  int cases_before_failure = 0;
  // How far shrinking got: "shrinking" while it runs, then "minimal" or "not
  // fully shrunk (why)"; empty where the workload is as found (a replay).
  std::string status;
};

inline constexpr const char* kShrinking = "shrinking";
inline constexpr const char* kMinimal = "minimal";

struct WrittenFiles {
  std::filesystem::path report;
  std::filesystem::path corpus_entry;
};

// Stable name of a workload: 16 hex digits of FNV-1a over its compact JSON.
std::string content_name(const Workload& workload);
std::string content_name(std::span<const std::uint8_t> bytes);

// The corpus format: {"format", "origin", "workload", "expected"}; "expected" is
// the reference outcome when the entry was made, so a changed reference shows.
Json corpus_entry(const Workload& workload, const std::string& origin);

// `text` as one shell word (quoted unless it is plain).
std::string shell_quote(const std::string& text);

// The program that replay commands name: the running `chunkmeta` (its real
// path, set by the CLI at start-up), else "chunkmeta" as found on PATH.
void set_program(std::string path);
const std::string& program();

// A shell command that replays a corpus entry or report against `implementation`.
std::string replay_command(const std::string& implementation, const std::filesystem::path& file);

Json to_json(const Counterexample& counterexample, const std::optional<WrittenFiles>& files = std::nullopt);
std::string render(const Counterexample& counterexample, const std::optional<WrittenFiles>& files = std::nullopt);

// Runs the oracle on every implementation; one counterexample per failure,
// labelled with `property` (e.g. "replay x.json", "fuzz differential").
std::vector<Counterexample> check_all(const Workload& workload, const std::vector<Implementation>& implementations,
                                      const std::string& property);
// The same for one implementation, for the fuzz target's one call per
// execution. With `reference_invariants` false, an answer equal to the
// reference's is not checked against the SPEC invariants again: they are the
// reference's own verdict, which executions that pick the reference check.
// A differing answer is always checked (its report names the broken rule).
std::vector<Counterexample> check_one(const Workload& workload, const Implementation& implementation,
                                      std::string_view property, bool reference_invariants);

// A failing workload (a fuzz finding, a failing corpus entry) shrunk while an
// implementation still fails on it the way it did (the same kind of finding;
// valid workloads only: the shrinker keeps validity), then the counterexamples
// of the smallest one reached, each with its status ("minimal", or "not fully
// shrunk (why)" when options.stop_requested ended it). Candidates go to an
// implementation in batches (compute_batch: one round trip for a subprocess).
// `on_smaller` is told each smaller failing case as it is found (options'
// own on_smaller is replaced). Empty if nothing fails.
std::vector<Counterexample> shrink_failure(const Workload& found, const std::vector<Implementation>& implementations,
                                           const std::string& property, ShrinkOptions options = {},
                                           const std::function<void(const Counterexample&)>& on_smaller = nullptr);

// For fuzz targets: print every failure's report and the input bytes, then
// std::abort() so the fuzzer keeps the input. Returns when there is none.
void abort_on_failure(const std::vector<Counterexample>& failures, std::span<const std::uint8_t> input);

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

 private:
  std::filesystem::path dir_;
  std::optional<WrittenFiles> files_;
};

}  // namespace chunkmeta::harness
