// One life, step by step: each step's metadata from the functions under test,
// run by the kernels' view, its writes applied to the cache the next steps read.
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "chunkmeta/steps/steps.hpp"

namespace chunkmeta::steps {
namespace {

using kernel_view::State;

// The cache: (request, block) -> the state it holds. A prefix hit's blocks were written right by an
// earlier request with that prefix; they are known without being stored (a hit reaches 2^31 tokens).
class Cache {
 public:
  explicit Cache(const Life& life) : life_(life) {}
  std::optional<State> held(std::int64_t request, std::int64_t block) const {
    if (const auto it = written_.find({request, block}); it != written_.end()) return it->second;
    const std::int64_t hit = life_.requests[static_cast<std::size_t>(request)].prefix_hit;
    const std::int64_t size = life_.block_size;
    if (hit <= 0 || block < 0) return std::nullopt;
    // all mode: every block of the prefix; align mode keeps the running state only, in the hit's last token's block
    if (life_.mode == Mode::all && block < hit / size) return State{request, (block + 1) * size};
    if (life_.mode == Mode::align && block == (hit - 1) / size) return State{request, hit};
    return std::nullopt;
  }
  void write(std::int64_t request, std::int64_t block, State state) { written_[{request, block}] = state; }

 private:
  const Life& life_;
  std::map<std::pair<std::int64_t, std::int64_t>, State> written_;
};

std::string state_words(State state) { return kernel_view::to_string(state, "request"); }

// One step: its rows (the requests running at it, in request order) and their batch.
struct Step {
  std::vector<std::int64_t> request_of;  // row -> request
  std::vector<std::int64_t> computed, query_start_loc{0};
  std::size_t rows() const { return request_of.size(); }
  std::int64_t tokens(std::size_t row) const { return query_start_loc[row + 1] - query_start_loc[row]; }
  kernel_view::Batch batch() const { return {computed, query_start_loc}; }
  // A state of a row of this step, as the cache keeps it (of its request).
  State of_request(State state) const {
    if (state.bad() || state.row >= static_cast<std::int64_t>(rows())) return kernel_view::kBad;
    return State{request_of[static_cast<std::size_t>(state.row)], state.tokens};
  }
};

Step step_of(const Life& life, std::int64_t t) {
  Step step;
  step.query_start_loc = {life.decode_tokens};
  for (std::size_t r = 0; r < life.requests.size(); ++r) {
    const Request& request = life.requests[r];
    const std::int64_t j = t - request.first_step;
    if (j < 0 || j >= static_cast<std::int64_t>(request.pieces.size())) continue;
    std::int64_t computed = request.prefix_hit;
    for (std::int64_t k = 0; k < j; ++k) computed += request.pieces[static_cast<std::size_t>(k)];
    step.request_of.push_back(static_cast<std::int64_t>(r));
    step.computed.push_back(computed);
    step.query_start_loc.push_back(step.query_start_loc.back() + request.pieces[static_cast<std::size_t>(j)]);
  }
  return step;
}

std::string rows_words(const Step& step) {
  std::string words;
  for (std::size_t row = 0; row < step.rows(); ++row) {
    if (row > 0) words += ", ";
    words += "row " + std::to_string(row) + " is request " + std::to_string(step.request_of[row]);
  }
  return words;
}

// Every resumed row reads the state after its computed tokens from the block it names.
std::optional<kernel_view::Fault> read_fault(const Step& step, const Cache& cache,
                                             const std::function<std::int64_t(std::size_t)>& block_read) {
  for (std::size_t row = 0; row < step.rows(); ++row) {
    const std::int64_t computed = step.computed[row];
    if (computed == 0) continue;  // the zero state: nothing is read
    const std::int64_t request = step.request_of[row];
    const std::int64_t block = block_read(row);
    const auto held = cache.held(request, block);
    const State wanted{request, computed};
    if (held == wanted) continue;
    const std::string holds = !held ? "which no step has written" : "which holds " + state_words(*held);
    return kernel_view::Fault{"read",
                              "row " + std::to_string(row) + " (request " + std::to_string(request) +
                                  ") resumes after " + kernel_view::count_words(computed, "token") + " from its block " +
                                  std::to_string(block) + ", " + holds + "; it needs " + state_words(wanted),
                              static_cast<std::int64_t>(row), -1};
  }
  return std::nullopt;
}

template <typename Output>
std::optional<std::string> why_none(const Answer<Output>& answer) {
  if (const auto* why = std::get_if<std::string>(&answer)) return *why;
  return std::nullopt;
}

kernel_view::Fault no_answer(const std::string& function, const std::string& why) {
  return kernel_view::Fault{"answered", "the " + function + " function gave no output for a valid step: " + why, -1, -1};
}

kernel_view::Fault shape_fault(const std::string& array, std::size_t size, std::size_t rows) {
  return kernel_view::Fault{"shape",
                            array + " has " + kernel_view::count_words(static_cast<std::int64_t>(size), "entry") +
                                " for a step of " + kernel_view::count_words(static_cast<std::int64_t>(rows), "row"),
                            -1, -1};
}

}  // namespace

const char* to_string(Mode mode) { return mode == Mode::all ? "all" : "align"; }

std::int64_t Life::steps() const {
  std::int64_t last = 0;
  for (const auto& request : requests) {
    last = std::max(last, request.first_step + static_cast<std::int64_t>(request.pieces.size()));
  }
  return last;
}

std::string to_string(const Fault& fault) {
  std::string text = "step " + std::to_string(fault.step) + ": ";
  // (A function that gave no output is named by the fault's own words.)
  if (!fault.function.empty() && fault.fault.rule != "answered") text += "the " + fault.function + " function's output: ";
  text += kernel_view::to_string(fault.fault);
  if (!fault.rows.empty()) text += " (" + fault.rows + ")";
  return text;
}

std::optional<Fault> run(const Life& life, const Functions& functions, Tally* tally) {
  Tally ignored;
  Tally& counted = tally != nullptr ? *tally : ignored;
  const std::int64_t chunk = life.chunk_size;
  const std::int64_t block = life.block_size;
  Cache cache(life);
  const std::int64_t steps = life.steps();
  for (std::int64_t t = 0; t < steps; ++t) {
    const Step step = step_of(life, t);
    if (step.rows() == 0) continue;
    ++counted.steps;
    const kernel_view::Batch batch = step.batch();
    nlohmann::json made = {{"num_computed_tokens", step.computed}, {"query_start_loc", step.query_start_loc}};
    const auto fault = [&](std::string function, kernel_view::Fault what) {
      return Fault{t, std::move(function), std::move(what), rows_words(step), made.dump()};
    };
    std::vector<std::int64_t> offsets;  // align mode: the planner's, given to the chunker
    std::vector<std::int64_t> columns;
    if (life.mode == Mode::align) {
      std::vector<std::int64_t> seq_lens, query_lens;
      for (std::size_t row = 0; row < step.rows(); ++row) {
        query_lens.push_back(step.tokens(row));
        seq_lens.push_back(step.computed[row] + step.tokens(row));
      }
      const auto planned = functions.checkpoints(CheckpointsInput{seq_lens, query_lens, life.hash_block_size, block,
                                                                  life.checkpoint_alignment, life.drop_eagle_block});
      if (auto why = why_none(planned)) return fault("checkpoints", no_answer("checkpoints", *why));
      const auto& plan = std::get<CheckpointsOutput>(planned);
      made["checkpoint_offsets"] = plan.checkpoint_offsets;
      made["checkpoint_cols"] = plan.checkpoint_cols;
      if (plan.checkpoint_offsets.size() != step.rows()) {
        return fault("checkpoints", shape_fault("checkpoint_offsets", plan.checkpoint_offsets.size(), step.rows()));
      }
      if (plan.checkpoint_cols.size() != step.rows()) {
        return fault("checkpoints", shape_fault("checkpoint_cols", plan.checkpoint_cols.size(), step.rows()));
      }
      offsets.assign(plan.checkpoint_offsets.begin(), plan.checkpoint_offsets.end());
      columns = plan.checkpoint_cols;
      // Lockstep: a published column is a checkpoint the chunker is asked to cut, and only then; the
      // kernel exports a checkpoint only where its alignment lets it (none: nowhere).
      for (std::size_t row = 0; row < step.rows(); ++row) {
        const std::int64_t o = offsets[row];
        const std::int64_t n = step.tokens(row);
        const std::int64_t s = step.computed[row] + n;
        const std::int64_t running = (s - 1) / block;                                 // the final state's block
        const std::int64_t read = step.computed[row] > 0 ? (step.computed[row] - 1) / block : -1;
        std::string wrong;
        const auto& alignment = life.checkpoint_alignment;
        if (o > 0 && (!alignment || o % *alignment != 0)) {
          wrong = "a checkpoint after " + std::to_string(o) + " of its new tokens is planned, which the kernel cannot "
                  "export: " + (alignment ? "its alignment is " + std::to_string(*alignment) : "it has no alignment");
        } else if (o < 0 || (o > 0 && o >= n)) {
          wrong = "its checkpoint offset " + std::to_string(o) + " is not inside its " + kernel_view::count_words(n, "token");
        } else if (o > 0 && (step.computed[row] + o) % life.hash_block_size != 0) {
          wrong = "its checkpoint after " + kernel_view::count_words(step.computed[row] + o, "token") +
                  " is not at a hash block boundary (" + std::to_string(life.hash_block_size) +
                  "): no prefix the cache names ends there";
        } else if (o == 0 && columns[row] != -1) {
          wrong = "block " + std::to_string(columns[row]) +
                  " is published as a checkpoint, but no checkpoint is cut (offset 0): it would be served holding "
                  "a state never computed";
        } else if (o > 0 && (columns[row] < 0 || columns[row] >= running || columns[row] == read)) {
          wrong = "its checkpoint after " + kernel_view::count_words(step.computed[row] + o, "token") + " goes to column " +
                  std::to_string(columns[row]) +
                  (columns[row] < 0        ? ", which is no block"
                   : columns[row] > running ? ", past the block its last token is in (" + std::to_string(running) + ")"
                                            : ", the block its running state is " +
                                                  std::string(columns[row] == running ? "written to" : "read from"));
        }
        if (!wrong.empty()) {
          return fault("checkpoints", kernel_view::Fault{"checkpoint", "row " + std::to_string(row) + ": " + wrong,
                                                         static_cast<std::int64_t>(row), -1});
        }
      }
    }
    const auto answered = functions.chunks(ChunksInput{chunk, step.computed, step.query_start_loc, offsets});
    if (auto why = why_none(answered)) return fault("chunks", no_answer("chunks", *why));
    const auto& chunks = std::get<ChunksOutput>(answered);
    made["cu_chunk_seqlen"] = chunks.cu_chunk_seqlen;
    made["seq_idx"] = chunks.seq_idx;
    made["last_chunk_indices"] = chunks.last_chunk_indices;

    std::optional<PlanOutput> plan;
    if (life.mode == Mode::all) {
      auto planned = functions.plan(PlanInput{chunk, block, step.computed, step.query_start_loc});
      // A block size that is not a multiple of the chunk size is a configuration to refuse (no chunk need end
      // on a block boundary): refused, the life ends there, rightly; accepted, its writes are judged.
      if (auto why = why_none(planned)) {
        if (block % chunk != 0) {  // the chunker's output is still judged: the scan from the rows' own states
          const kernel_view::Scan scanned =
              kernel_view::scan(batch, chunk, {chunks.cu_chunk_seqlen, chunks.seq_idx, chunks.last_chunk_indices});
          if (scanned.fault) return fault("chunks", *scanned.fault);
          return std::nullopt;
        }
        return fault("plan", no_answer("plan", *why));
      }
      plan = std::move(std::get<PlanOutput>(planned));
      made["block_idx_last_computed_token"] = plan->block_idx_last_computed_token;
      made["write_row"] = plan->write_row;
      made["write_block"] = plan->write_block;
      made["write_chunk"] = plan->write_chunk;
      made["block_idx_first_scheduled_token"] = plan->block_idx_first_scheduled_token;
      made["block_idx_last_scheduled_token"] = plan->block_idx_last_scheduled_token;
      for (const auto& [name, array] : {std::pair{"block_idx_last_computed_token", &plan->block_idx_last_computed_token},
                                        {"block_idx_first_scheduled_token", &plan->block_idx_first_scheduled_token},
                                        {"block_idx_last_scheduled_token", &plan->block_idx_last_scheduled_token}}) {
        if (array->size() != step.rows()) return fault("plan", shape_fault(name, array->size(), step.rows()));
      }
      // The blocks the step's tokens fall in, which the kernel's block table is indexed by: the first
      // scheduled token's, and the last's (the row's final state's).
      for (std::size_t row = 0; row < step.rows(); ++row) {
        const std::int64_t c = step.computed[row];
        const std::int64_t s = c + step.tokens(row);
        const std::int64_t first = c / block;
        const std::int64_t last = s == 0 ? 0 : (s - 1) / block;
        std::string wrong;
        if (plan->block_idx_first_scheduled_token[row] != first) {
          wrong = "block_idx_first_scheduled_token is " + std::to_string(plan->block_idx_first_scheduled_token[row]) +
                  "; its token " + std::to_string(c) + " is in block " + std::to_string(first);
        } else if (plan->block_idx_last_scheduled_token[row] != last) {
          wrong = "block_idx_last_scheduled_token is " + std::to_string(plan->block_idx_last_scheduled_token[row]) +
                  "; its last token " + std::to_string(s - 1) + " is in block " + std::to_string(last);
        }
        if (!wrong.empty()) {
          return fault("plan", kernel_view::Fault{"position", "row " + std::to_string(row) + ": " + wrong,
                                                  static_cast<std::int64_t>(row), -1});
        }
      }
    }
    // The step's start: every resumed row reads its state, from the plan's block (all) or its running block (align).
    const auto read = read_fault(step, cache, [&](std::size_t row) -> std::int64_t {
      if (plan) return plan->block_idx_last_computed_token[row];
      return (step.computed[row] - 1) / block;
    });
    if (read) return fault(plan ? "plan" : "", *read);
    counted.resumed_reads += std::count_if(step.computed.begin(), step.computed.end(), [](std::int64_t c) { return c > 0; });
    // The scan, from right initial states (just read).
    const kernel_view::ThreeArrays three{chunks.cu_chunk_seqlen, chunks.seq_idx, chunks.last_chunk_indices};
    const kernel_view::Scan scanned = kernel_view::scan(batch, chunk, three);
    if (scanned.fault) return fault("chunks", *scanned.fault);

    if (plan) {
      const kernel_view::WritePlan writes{plan->write_row, plan->write_block, plan->write_chunk};
      if (auto wrong = kernel_view::cache_writes(batch, block, scanned, writes, {})) return fault("plan", *wrong);
      for (std::size_t w = 0; w < plan->write_row.size(); ++w) {
        const auto row = static_cast<std::size_t>(plan->write_row[w]);
        const auto k = static_cast<std::size_t>(plan->write_chunk[w]);
        cache.write(step.request_of[row], plan->write_block[w], step.of_request(scanned.ends[k]));
      }
      counted.writes += static_cast<std::int64_t>(plan->write_row.size());
      continue;
    }
    // align: each checkpoint chunk holds the state at its planned position, published to its column;
    // each row's final state goes to its running block.
    if (chunks.checkpoint_chunk_indices.size() != step.rows()) {
      return fault("chunks", shape_fault("checkpoint_chunk_indices", chunks.checkpoint_chunk_indices.size(), step.rows()));
    }
    made["checkpoint_chunk_indices"] = chunks.checkpoint_chunk_indices;
    if (auto wrong = kernel_view::checkpoints(batch, offsets, scanned, chunks.checkpoint_chunk_indices)) {
      return fault("chunks", *wrong);
    }
    for (std::size_t row = 0; row < step.rows(); ++row) {
      const std::int64_t request = step.request_of[row];
      if (offsets[row] > 0) {
        const auto k = static_cast<std::size_t>(chunks.checkpoint_chunk_indices[row]);
        cache.write(request, columns[row], step.of_request(scanned.ends[k]));
        ++counted.checkpoints;
      }
      if (step.tokens(row) > 0) {
        const std::int64_t s = step.computed[row] + step.tokens(row);
        cache.write(request, (s - 1) / block, State{request, s});  // kernel-adequate: the row ended at s
      }
    }
  }
  return std::nullopt;
}

}  // namespace chunkmeta::steps
