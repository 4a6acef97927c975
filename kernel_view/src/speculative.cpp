// Speculative rows (SPEC Part 8's last section): a step's packed tokens shared
// between the speculative kernel (its rows' states in slots, one per token)
// and the ordinary ones (decode, then prefill: one slot per row). Each kernel
// row runs a run of packed tokens from the state in the slot it reads; every
// token must run once, from the state before it. O(rows + the partitions'
// token indices, and the slots held), which the metadata itself lists one by one.
#include <algorithm>
#include <vector>

#include "chunkmeta/kernel_view/kernel_view.hpp"
#include "words.hpp"

namespace chunkmeta::kernel_view {
namespace {

constexpr const char* kSpeculative = "speculative";

// What one kernel row ran: packed tokens [first, first + count) of batch row `row`.
struct Run {
  std::int64_t first = 0, count = 0, row = -1;
  std::string kernel_row;  // "the speculative kernel's row 1"
};

// One kernel launch: its rows run side by side, so each reads the slots as they were before it, and a
// slot one row writes is read or written by no other row of the launch (else which state lands is a race).
struct Access {
  std::int64_t slot = 0;
  std::size_t kernel_row = 0;  // index into the launch's names
  State state;                 // a write's
};
struct Launch {
  std::vector<std::string> names;
  std::vector<Access> reads, writes;
  std::size_t name(const std::string& who) {
    if (names.empty() || names.back() != who) names.push_back(who);
    return names.size() - 1;
  }
};

class StepJudge {
 public:
  StepJudge(const Batch& batch, Slots& slots) : batch_(batch), slots_(slots) {
    total_ = batch.rows() == 0 ? 0 : batch.query_start_loc[batch.rows()] - batch.query_start_loc[0];
    // A slot holding a row's state past its computed tokens holds a rejected draft's state (a draft
    // token the row did not accept, or garbage): BAD, whatever position it names.
    for (auto& [slot, state] : slots_) {
      if (state.row >= 0 && static_cast<std::size_t>(state.row) < batch.rows() &&
          state.tokens > batch.computed_of(static_cast<std::size_t>(state.row))) {
        state = kBad;
      }
    }
  }

  std::optional<Fault> speculative(const SpeculativeKernel& kernel) {
    const std::size_t rows = kernel.tokens.rows();
    const std::int64_t width = kernel.slots_per_row;
    if (width < 1 || kernel.state_indices.size() % static_cast<std::size_t>(width) != 0 ||
        kernel.state_indices.size() / static_cast<std::size_t>(width) != rows) {
      return fault("the speculative kernel has " + count_words(static_cast<std::int64_t>(rows), "row") + " and " +
                   count_words(static_cast<std::int64_t>(kernel.state_indices.size()), "state index") + ", not " +
                   std::to_string(width) + " per row");
    }
    if (kernel.num_accepted_tokens.size() != rows) {
      return fault("num_accepted_tokens has " +
                   count_words(static_cast<std::int64_t>(kernel.num_accepted_tokens.size()), "entry") + " for the " +
                   count_words(static_cast<std::int64_t>(rows), "speculative row") + ": a row's count goes to another row");
    }
    Launch launch;
    for (std::size_t k = 0; k < rows; ++k) {
      const std::string who = "the speculative kernel's row " + std::to_string(k);
      Run run;
      if (auto wrong = read_run(kernel.tokens, k, who, run)) return wrong;
      if (run.count == 0) continue;
      const auto slot_of = [&](std::int64_t column) {
        return static_cast<std::int64_t>(kernel.state_indices[k * static_cast<std::size_t>(width) + static_cast<std::size_t>(column)]);
      };
      const std::int64_t accepted = kernel.num_accepted_tokens[k];
      if (accepted < 1 || accepted > width) {
        return fault(who + " (row " + std::to_string(run.row) + ") reads its initial state from column " +
                         std::to_string(accepted - 1) + " of its " + std::to_string(width) + " slots (num_accepted_tokens " +
                         std::to_string(accepted) + "), which does not exist: a count is 1 to " + std::to_string(width),
                     run.row);
      }
      if (auto wrong = read(who, run, slot_of(accepted - 1), true, launch)) return wrong;
      if (run.count > width) {
        return fault(who + " runs " + count_words(run.count, "token") + " of row " + std::to_string(run.row) + ", more than its " +
                         count_words(width, "state slot") + ": the states after the last " +
                         count_words(run.count - width, "token") + " are kept nowhere",
                     run.row);
      }
      for (std::int64_t j = 0; j < run.count; ++j) {
        if (auto wrong = write(who, run, slot_of(j), position(run) + j + 1, launch)) return wrong;
      }
      runs_.push_back(std::move(run));
    }
    return finish(launch, "the speculative kernel");
  }

  std::optional<Fault> ordinary(const OrdinaryKernels& kernels) {
    const std::size_t rows = kernels.tokens.rows();
    if (kernels.state_indices.size() != rows) {
      return fault("the ordinary kernels have " + count_words(static_cast<std::int64_t>(rows), "row") + " and " +
                   count_words(static_cast<std::int64_t>(kernels.state_indices.size()), "state index"));
    }
    if (kernels.decodes < 0 || kernels.prefills < 0 || kernels.decodes + kernels.prefills > static_cast<std::int64_t>(rows)) {
      return fault("the ordinary kernels are told of " + count_words(kernels.decodes, "decode") + " and " +
                   count_words(kernels.prefills, "prefill") + "; their partition has " +
                   count_words(static_cast<std::int64_t>(rows), "row") + ": the kernels run rows that are not there");
    }
    Launch launch;
    for (std::size_t k = 0; k < static_cast<std::size_t>(kernels.decodes + kernels.prefills); ++k) {
      const bool decode = static_cast<std::int64_t>(k) < kernels.decodes;
      const std::string who = std::string("the ") + (decode ? "decode" : "prefill") + " kernel's row " + std::to_string(k);
      Run run;
      if (auto wrong = read_run(kernels.tokens, k, who, run)) return wrong;
      if (run.count == 0) continue;
      if (decode && run.count > 1) {
        return fault(who + " is row " + std::to_string(run.row) + ", with " + count_words(run.count, "token") +
                         ": the decode kernel runs one, the rest (" + tokens_words(position(run) + 1, position(run) + run.count) +
                         ") never run",
                     run.row);
      }
      const std::int64_t slot = kernels.state_indices[k];
      if (position(run) > 0) {
        if (auto wrong = read(who, run, slot, false, launch)) return wrong;
      } else if (run.first != row_start(run.row)) {
        return fault(who + " starts row " + std::to_string(run.row) + " from its zero state at its token " +
                         std::to_string(position(run)) + ": its state is BAD",
                     run.row);
      }
      if (auto wrong = write(who, run, slot, position(run) + run.count, launch)) return wrong;
      runs_.push_back(std::move(run));
    }
    return finish(launch, "the ordinary kernels");
  }

  // Every packed token ran once: the runs tile [0, T).
  std::optional<Fault> every_token_once() {
    // Stable: of two runs of one token, the later in the kernels' order is the second.
    std::stable_sort(runs_.begin(), runs_.end(), [](const Run& a, const Run& b) { return a.first < b.first; });
    std::int64_t next = 0;
    for (const Run& run : runs_) {
      if (run.first > next) return never_run(next, run.first);
      if (run.first < next) {
        return fault("packed " + tokens_words(run.first, std::min(next, run.first + run.count)) + " of row " +
                         std::to_string(run.row) + " run twice, the second time by " + run.kernel_row,
                     run.row);
      }
      next = run.first + run.count;
    }
    if (next < total_) return never_run(next, total_);
    return std::nullopt;
  }

 private:
  Fault fault(std::string what, std::int64_t row = -1) const { return Fault{kSpeculative, std::move(what), row, -1}; }

  std::int64_t row_start(std::int64_t row) const {
    return batch_.query_start_loc[static_cast<std::size_t>(row)] - batch_.query_start_loc[0];
  }
  std::int64_t row_of(std::int64_t packed) const {
    const auto& q = batch_.query_start_loc;
    const auto at = std::upper_bound(q.begin(), q.end(), packed + q.front());
    return static_cast<std::int64_t>(at - q.begin()) - 1;
  }
  // The run's first token's position in its row (computed tokens count).
  std::int64_t position(const Run& run) const {
    return batch_.computed_of(static_cast<std::size_t>(run.row)) + run.first - row_start(run.row);
  }
  std::string token_words(std::int64_t packed) const {
    const std::int64_t row = row_of(packed);
    return "packed token " + std::to_string(packed) + " (row " + std::to_string(row) + "'s token at " +
           std::to_string(batch_.computed_of(static_cast<std::size_t>(row)) + packed - row_start(row)) + ")";
  }
  // The first row's tokens of a gap [begin, end) that no kernel ran.
  Fault never_run(std::int64_t begin, std::int64_t end) const {
    const std::int64_t row = row_of(begin);
    const std::int64_t last = std::min(end, row_start(row) + batch_.tokens_of(static_cast<std::size_t>(row)));
    const std::int64_t at = batch_.computed_of(static_cast<std::size_t>(row)) + begin - row_start(row);
    return fault("packed " + tokens_words(begin, last) + " never run by any kernel: row " + std::to_string(row) + "'s " +
                     tokens_words(at, at + last - begin) + (last - begin == 1 ? " is" : " are") + " lost",
                 row);
  }

  // Kernel row k's tokens, read from its partition: one run of one row's consecutive packed tokens.
  std::optional<Fault> read_run(const Partition& part, std::size_t k, const std::string& who, Run& run) const {
    // In order, the partition's offsets are the batch's own: only differences are read, as of q.
    const std::int64_t origin = part.all_tokens_in_order ? part.query_start_loc[0] : 0;
    const std::int64_t begin = part.query_start_loc[k] - origin, end = part.query_start_loc[k + 1] - origin;
    const auto listed = part.all_tokens_in_order ? total_ : static_cast<std::int64_t>(part.token_index.size());
    if (begin < 0 || end < begin || end > listed) {
      return fault(who + " runs entries " + std::to_string(begin) + " to " + std::to_string(end) + " of its partition's " +
                   count_words(listed, "token"));
    }
    run.kernel_row = who;
    run.count = end - begin;
    if (run.count == 0) return std::nullopt;
    const auto packed = [&](std::int64_t i) -> std::int64_t {
      return part.all_tokens_in_order ? i : part.token_index[static_cast<std::size_t>(i)];
    };
    run.first = packed(begin);
    if (run.first < 0 || run.first >= total_) {
      return fault(who + " runs packed token " + std::to_string(run.first) + "; the batch has " + count_words(total_, "token"));
    }
    run.row = row_of(run.first);
    const std::int64_t row_end = row_start(run.row) + batch_.tokens_of(static_cast<std::size_t>(run.row));
    for (std::int64_t i = begin + 1; i < end; ++i) {
      const std::int64_t t = packed(i), expected = run.first + (i - begin);
      if (t != expected || t >= row_end) {
        const std::string now = t >= 0 && t < total_ ? token_words(t) : "packed token " + std::to_string(t);
        return fault(who + " runs " + now + " after " + token_words(expected - 1) + ": from " +
                         to_string(State{run.row, position(run) + (i - begin)}) + ", its state is BAD",
                     run.row);
      }
    }
    return std::nullopt;
  }

  std::optional<Fault> read(const std::string& who, const Run& run, std::int64_t slot, bool speculative,
                            Launch& launch) const {
    const State wanted{run.row, position(run)};
    const auto held = slots_.find(slot);
    if (held != slots_.end() && held->second == wanted) {
      launch.reads.push_back({slot, launch.name(who), wanted});
      return std::nullopt;
    }
    const std::string there = slot < 0                  ? ", which does not exist"
                              : held == slots_.end()    ? ", which no step has written"
                                                        : ", which holds " + to_string(held->second);
    return fault(who + " runs row " + std::to_string(run.row) + "'s " + tokens_words(position(run), position(run) + run.count) +
                     " from slot " + std::to_string(slot) + there + "; it must hold " + to_string(wanted) +
                     (speculative ? " (the slot its accepted count names)" : ""),
                 run.row);
  }

  std::optional<Fault> write(const std::string& who, const Run& run, std::int64_t slot, std::int64_t tokens,
                             Launch& launch) const {
    if (slot < 0) {
      return fault(who + " keeps " + to_string(State{run.row, tokens}) + " in slot " + std::to_string(slot) +
                       ", which does not exist",
                   run.row);
    }
    launch.writes.push_back({slot, launch.name(who), State{run.row, tokens}});
    return std::nullopt;
  }

  // The launch's writes land (a row's later write to a slot replaces its earlier one), unless two of its
  // rows touch one slot. O((reads + writes) log writes).
  std::optional<Fault> finish(Launch& launch, const std::string& kernel) {
    std::stable_sort(launch.writes.begin(), launch.writes.end(),
                     [](const Access& a, const Access& b) { return a.slot < b.slot; });
    for (std::size_t w = 1; w < launch.writes.size(); ++w) {
      const Access &a = launch.writes[w - 1], &b = launch.writes[w];
      if (a.slot == b.slot && a.kernel_row != b.kernel_row) {
        return fault(launch.names[a.kernel_row] + " and " + launch.names[b.kernel_row] + " both write slot " +
                         std::to_string(a.slot) + " in one launch of " + kernel + ": it holds " + to_string(a.state) +
                         " or " + to_string(b.state) + ", whichever lands last",
                     b.state.row);
      }
    }
    for (const Access& r : launch.reads) {
      const auto at = std::lower_bound(launch.writes.begin(), launch.writes.end(), r.slot,
                                       [](const Access& a, std::int64_t slot) { return a.slot < slot; });
      if (at != launch.writes.end() && at->slot == r.slot && at->kernel_row != r.kernel_row) {
        return fault(launch.names[r.kernel_row] + " reads slot " + std::to_string(r.slot) + ", which " +
                         launch.names[at->kernel_row] + " writes in the same launch of " + kernel +
                         ": it reads " + to_string(r.state) + " or " + to_string(at->state) + ", whichever comes first",
                     r.state.row);
      }
    }
    for (const Access& w : launch.writes) slots_[w.slot] = w.state;
    return std::nullopt;
  }

  const Batch& batch_;
  Slots& slots_;
  std::int64_t total_ = 0;
  std::vector<Run> runs_;
};

}  // namespace

std::optional<Fault> speculative_step(const Batch& batch, const SpeculativeKernel& speculative,
                                      const OrdinaryKernels& ordinary, Slots& slots) {
  StepJudge judge(batch, slots);
  if (auto wrong = judge.speculative(speculative)) return wrong;
  if (auto wrong = judge.ordinary(ordinary)) return wrong;
  return judge.every_token_once();
}

}  // namespace chunkmeta::kernel_view
