// The port: anything that maps a workload to a spec's outputs (or an error):
// the built-in implementations, test mutants, plugins, subprocesses and Python
// functions. The judge (oracle.hpp) and the run loop see nothing else.
#pragma once

#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "chunkmeta/harness/workload.hpp"

namespace chunkmeta::harness {

class Spec;
class Subprocess;

// A spec's outputs in its order (Spec::outputs()), as int32 values, rows
// flattened: every value a correct implementation gives fits int32.
using Arrays = std::vector<Int32Array>;
using Outcome = Result<Arrays>;

enum class FindingKind {
  mismatch,            // both succeeded, outputs differ from the reference
  invariant_violated,  // output breaks an invariant of its spec (even if equal to the reference)
  unexpected_error,    // valid workload refused
  accepted_invalid,    // invalid workload computed instead of rejected
  wrong_error,         // rejected, but not with the reference's code, field and index
  relation_broken,     // a metamorphic relation does not hold
  wrong_state,         // a kernel or the cache reading the output computes a state other than the one claimed (SPEC Part 8)
  // No usable answer at all (implementations outside this process, and plugins):
  crashed,             // the process exited or was killed before answering
  timed_out,           // no answer within the per-case timeout
  malformed_output,    // the answer is not an outcome (not JSON, wrong shape, broken ABI)
  missing_output,      // the answer to this workload was skipped (a later one came first)
  raised,              // the implementation raised an exception instead of answering
  changed_input,       // it changed an input it was given (the caller's arrays), whatever it answered
  superlinear_cost,    // it answered, but far slower than its size predicts: its cost grows faster than its work
};
std::string_view to_string(FindingKind kind) noexcept;
bool is_misbehaviour(FindingKind kind) noexcept;  // crashed ... changed_input
// A crash, or a skipped answer (after which the door kills the program): the
// process it ran in is gone, and the next call goes to another. Such a failure
// is asked again as a replay asks it, in a fresh process (Implementation::restart).
bool ends_its_process(FindingKind kind) noexcept;
// A flood's bound (Spec::most_answer_entries): an answer holds at most
// kAnswerEntriesPerUnit entries per unit of work (CallBudget::units_of:
// 1 + rows + chunks) beyond an allowance, a few times what the library's
// largest output holds. More is a malformed_output, read no further: every
// door applies it (the cmd: door counts the same in bytes, 8 per entry: the
// wire's int64s).
inline constexpr std::size_t kAnswerEntriesPerUnit = 8;
inline constexpr std::size_t kAnswerAllowanceEntries = 8192;

// The kind to_string names so, or nullopt.
std::optional<FindingKind> parse_finding_kind(std::string_view name) noexcept;

// An implementation that gave no usable answer, or whose answer cannot stand (it changed
// its input, or its time); `kind` is one of crashed ... superlinear_cost above.
struct Misbehaviour {
  FindingKind kind = FindingKind::crashed;
  std::string summary;  // one sentence: "the process was killed by signal 11 (SIGSEGV)"
  std::string detail;   // evidence: the end of its stderr, the line it printed, a traceback
  double limit_seconds = 0;  // timed_out: the limit that ran out (what a re-confirmation doubles)
  bool asked_twice = false;  // timed_out: the door already asked it again with the ordinary limit
  // timed_out: it sat idle (no CPU, nothing running) with its answer due: stuck, not slow, so no
  // longer limit can change it (the run loop does not ask it again).
  bool idle = false;
  // timed_out: cut at a limit past the timeout, given by its size (10x what its size predicts): asking
  // again with a longer limit would wait up to 10x the timeout once more, so the cut is its own confirmation.
  bool cut_past_the_timeout = false;
};

// What an implementation gives back for one workload.
using Answer = std::variant<Outcome, Misbehaviour>;

// The finding of an implementation that changed an input in place (the
// engine's own tensors, which later readers use): the input `field` was sent
// `sent` and holds `now` after the call. Nullopt when they are equal. Each
// door compares every array it passed after every call, and answers with
// this instead of the outcome.
std::optional<Misbehaviour> input_changed(std::string_view field, std::span<const std::int64_t> sent,
                                          std::span<const std::int64_t> now);
std::optional<Misbehaviour> input_changed(std::string_view field, std::span<const std::int64_t> sent,
                                          std::span<const std::int32_t> now);
// ... one that is no longer readable as the array it was sent (`why`: its type or memory changed).
Misbehaviour input_unreadable(std::string_view field, const std::string& why);

// An answer to a call a door made on its own, outside the run's cases: the
// warm-up of each process it starts, a Python function's first calls. Every
// answer is judged, these too (engine: judge_own_calls), so that a function
// wrong only on its first call (a lazy set-up) is a finding.
struct OwnCall {
  Workload workload;
  Answer answer;
  std::string when;  // "call 1 of process 2, its warm-up"
};

struct Implementation {
  std::string name;
  std::string description;
  const Spec* spec = nullptr;  // what it computes
  std::function<Answer(const Workload&)> compute;
  // Optional: answers many workloads in one go, in order (a subprocess keeps
  // its pipe full). The run loop uses it to fetch a run's answers ahead.
  // It may answer a prefix only, ending with a misbehaviour (a crash).
  std::function<std::vector<Answer>(std::span<const Workload>)> compute_batch;
  // False for an implementation whose contract covers valid workloads only
  // (an engine function): invalid inputs, and valid ones above the library's
  // size cap, are then not sent to it.
  bool rejects_invalid_input = true;
  // Optional: told when the run loop starts (true) and ends (false) shrinking
  // a failure. An implementation that can cut an answer short (a subprocess,
  // a Python function) then gives a candidate far slower than its normal
  // answers only a multiple of them: shrinking a runaway costs no minutes.
  std::function<void(bool)> shrinking;
  // Optional, for an implementation whose calls can time out: asks one
  // workload again after its call timed out within `expired` seconds, with a
  // longer limit (CallBudget::confirmation_limit). The run loop re-confirms a
  // timeout with it before it counts as a finding.
  std::function<Answer(const Workload&, double expired)> confirm;
  // Optional, with confirm: after confirm() answered, the figures that say its
  // cost grows faster than its work (CallBudget::cost_growth), or "".
  std::function<std::string()> cost_growth;
  // Optional, for a door that calls the implementation on its own (OwnCall):
  // hands over the answers of those calls since the last time it was asked.
  std::function<std::vector<OwnCall>()> take_own_calls;
  // Optional: makes the door's own first calls now and waits for them, so
  // that they are judged before any workload is sent (engine::check).
  std::function<void()> warm_up;
  // Optional, for a door whose calls run in a process it keeps: ends that
  // process, so that the next call goes to one started for it (warmed up, as a
  // replay's is). A crash is asked again this way: one that follows from the
  // calls before it (the process's 5th call) then does not crash again.
  std::function<void()> restart;
};

// Answers for a prefix of `workloads` (at least one, at most all): one
// compute_batch round trip, or one compute call without it.
std::vector<Answer> answer_batch(const Implementation& implementation, std::span<const Workload> workloads);

// Answers for every workload, in order: through compute_batch where the
// implementation has it (sending again what a crash left unanswered).
std::vector<Answer> answer_all(const Implementation& implementation, std::span<const Workload> workloads);

// An implementation in this process: one call per workload, invalid input included.
Implementation in_process(std::string name, std::string description, const Spec& spec,
                          std::function<Answer(const Workload&)> compute);

struct ResolveOptions {
  double timeout_seconds = 10.0;  // per case, for subprocesses
  // Plugins run in a child (`SELF compute --impl plugin:...`) so that a crash or
  // a hang is a finding, not the end of the harness; true loads them here.
  bool plugins_in_process = false;
  std::string self_path;          // this chunkmeta executable, for the child
  bool valid_only = false;        // treat every implementation as valid-input-only
  // When set, receives (implementation name, process) for every subprocess
  // started, so a caller can report where the time went.
  std::vector<std::pair<std::string, std::shared_ptr<Subprocess>>>* processes = nullptr;
};

// Implementations of `spec` as the CLI names them:
//   a built-in name (reference, fast, ...: Spec::builtins());
//   cmd:COMMAND        a program speaking the JSON Lines protocol;
//   plugin:PATH[#NAME] implementations from a shared library (<chunkmeta/plugin.h>)
//                      of this spec (a plugin's implementation names its spec).
// Each is named by the text that resolves to it alone, so a report's replay
// command can name it. Returns a sentence on error.
std::variant<std::vector<Implementation>, std::string> resolve_implementations(const Spec& spec, const std::string& text,
                                                                                const ResolveOptions& options);

}  // namespace chunkmeta::harness
