// Steps (SPEC Part 8, "the cache across steps"): requests' whole lives through
// the engine's functions. Each step's metadata is made by the functions under
// test (chunkmeta's own by default, any of them replaceable), and each step is
// run by the kernels' view: the step reads every resumed row's initial state
// from the cache, the scan runs, and the step's writes land in the cache that
// the next steps read. A life fails when a step reads anything but the state
// after the row's computed tokens, or a block holds anything but what it
// claims. Where no single function is wrong, the seams between them are.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "chunkmeta/kernel_view/kernel_view.hpp"

namespace chunkmeta::steps {

// How the cache keeps Mamba states.
enum class Mode {
  all,    // "all": the checkpoint plan (Part 3) writes a state at every block boundary
  align,  // "align": internal checkpoints (Part 6) planned by the planner, cut by the chunker
};
const char* to_string(Mode mode);

// One request: the prefix the cache holds at its start, then the tokens it runs at each step.
struct Request {
  std::int64_t first_step = 0;          // the step it first runs at; it runs at consecutive steps
  std::int64_t prefix_hit = 0;          // tokens resumed from the cache (a multiple of the block size)
  std::vector<std::int64_t> pieces;     // tokens scheduled at each of its steps (0: in the batch with none)
  friend bool operator==(const Request&, const Request&) = default;
};

struct Life {
  Mode mode = Mode::all;
  std::int64_t chunk_size = 4;   // C
  std::int64_t block_size = 8;   // M (the Mamba block size)
  // align mode: the planner's inputs (Part 6)
  std::int64_t hash_block_size = 8;
  std::optional<std::int64_t> checkpoint_alignment = 1;  // none: the backend cannot export a checkpoint
  bool drop_eagle_block = false;
  // Tokens of decode rows packed before the prefills at every step: query_start_loc starts there (vLLM
  // slices the prefills' offsets out of the whole batch's), and only differences may be read.
  std::int64_t decode_tokens = 0;
  std::vector<Request> requests;
  std::int64_t steps() const;   // the last step any request runs at, plus one
  std::size_t rows() const { return requests.size(); }
  friend bool operator==(const Life&, const Life&) = default;
};
// {"mode":"all","chunk_size":4,...,"requests":[{"first_step":0,"prefix_hit":0,"pieces":[5,3]}]}
std::string to_json(const Life& life);

// The functions under test, each with the engine's inputs and outputs for one step.
struct ChunksInput {
  std::int64_t chunk_size;
  std::vector<std::int64_t> num_computed_tokens, query_start_loc;
  std::vector<std::int64_t> checkpoint_offsets;  // align mode (one per row); empty in all mode
};
struct ChunksOutput {
  std::vector<std::int32_t> cu_chunk_seqlen, seq_idx, last_chunk_indices;
  std::vector<std::int32_t> checkpoint_chunk_indices;  // align mode
};
struct PlanInput {
  std::int64_t chunk_size, block_size;
  std::vector<std::int64_t> num_computed_tokens, query_start_loc;
};
struct PlanOutput {
  std::vector<std::int32_t> block_idx_last_computed_token, block_idx_first_scheduled_token,
      block_idx_last_scheduled_token, write_row, write_block, write_chunk;
};
struct CheckpointsInput {
  std::vector<std::int64_t> seq_lens, query_lens;
  std::int64_t hash_block_size, mamba_block_size;
  std::optional<std::int64_t> checkpoint_alignment;
  bool drop_eagle_block;
};
struct CheckpointsOutput {
  std::vector<std::int32_t> checkpoint_offsets;
  std::vector<std::int64_t> checkpoint_cols;
};
// A function's output, or why it gave none (its error, an exception's text).
template <typename Output>
using Answer = std::variant<Output, std::string>;

struct Functions {
  std::function<Answer<ChunksOutput>(const ChunksInput&)> chunks;             // Parts 1 and 6
  std::function<Answer<PlanOutput>(const PlanInput&)> plan;                   // Part 3 (all mode)
  std::function<Answer<CheckpointsOutput>(const CheckpointsInput&)> checkpoints;  // Part 6's planner (align mode)
};
// chunkmeta's own: checkpointed_chunks::chunks, checkpoint::plan, prefill_checkpoints::checkpoints.
Functions own_functions();

// The first thing a life gets wrong: at which step, whose output, and the kernels' view's words.
struct Fault {
  std::int64_t step = -1;
  std::string function;   // "chunks", "plan", "checkpoints", or "" for what the steps do together
  kernel_view::Fault fault;
  std::string rows;       // the step's rows: "row 0 is request 1, row 1 is request 2"
  std::string inputs;     // the step's inputs and the functions' outputs, as JSON
};
std::string to_string(const Fault& fault);

// What the steps of the lives run so far did (so a test can say its lives reached each path).
struct Tally {
  std::int64_t steps = 0;
  std::int64_t resumed_reads = 0;   // rows that read their initial state from the cache
  std::int64_t writes = 0;          // states written into blocks (all mode)
  std::int64_t checkpoints = 0;     // checkpoints published (align mode)
};

// Runs every step of the life; the first fault, if any.
std::optional<Fault> run(const Life& life, const Functions& functions, Tally* tally = nullptr);

// Random lives: a few requests over a few steps, random splits, prefix hits at block boundaries.
// The largest chunk or block size a life is drawn with (engines use up to a few thousand): a life's
// pieces run up to 3 blocks, so a step's tokens stay far inside int32.
inline constexpr std::int64_t kLargestSize = std::int64_t{1} << 20;

struct DrawOptions {
  Mode mode = Mode::all;
  std::optional<std::int64_t> chunk_size, block_size;  // drawn (M a multiple of C) unless given
  std::int64_t max_requests = 4;
  std::int64_t max_steps = 5;
};
Life draw(std::mt19937_64& rng, const DrawOptions& options);

// The smallest life that still fails (fewest steps, then rows, then tokens), by greedy steps.
struct Shrunk {
  Life life;
  Fault fault;
  int steps_taken = 0;
};
// `sizes_fixed`: C and M stay as they are (the user's), else they shrink too, M staying a multiple of C.
Shrunk shrink(Life life, Fault fault, const Functions& functions, bool sizes_fixed, int max_runs = 20000);

// A run of many lives: the first failing one, shrunk.
struct CheckResult {
  std::int64_t lives = 0;            // lives run before the first failure (or all)
  Tally tally;                       // what the steps run in them did
  std::optional<Life> found;         // the life that failed first, as drawn
  std::optional<Shrunk> minimal;
  bool flaky = false;                // the failing life passed when run again (then not shrunk, or not kept)
  std::uint64_t seed = 0;
};
// `stop_requested` (optional) is asked before each life: true ends the run there (Ctrl-C in Python).
CheckResult check(const Functions& functions, std::int64_t lives, std::uint64_t seed, const DrawOptions& options,
                  const std::function<bool()>& stop_requested = nullptr);

// A run's report, as check_steps() and `chunkmeta steps` print it: "VERIFIED steps (...)" with what
// the lives did, or "NOT VERIFIED steps (...)" with the fault, the minimal life, the step's inputs and
// outputs, the life as found, and `reproduce` (the caller's command for the same run).
std::string report(const CheckResult& result, Mode mode, const std::string& functions, double seconds,
                   const std::string& reproduce);

}  // namespace chunkmeta::steps
