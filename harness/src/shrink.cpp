#include "chunkmeta/harness/shrink.hpp"

#include <algorithm>
#include <tuple>

#include "chunkmeta/chunkmeta.hpp"
#include "chunkmeta/harness/greedy_shrink.hpp"
#include "chunkmeta/harness/spec.hpp"

namespace chunkmeta::harness {
namespace {

// Values from target up to x - 1, smallest first: target + 0, 1, 2, 4, 8, ...,
// then x - d/2, x - d/4, ..., x - 1 (d = x - target). The first that still fails
// is taken: a failure from a threshold on (a crash past 1,000 tokens) reaches
// the power of two above it in one step, where halving the distance from 2^31
// takes twenty, and each step a crash accepts costs a process start.
std::vector<std::int64_t> towards(std::int64_t x, std::int64_t target) {
  std::vector<std::int64_t> values;
  if (x <= target) return values;
  const std::int64_t distance = x - target;
  values.push_back(target);
  for (std::int64_t up = 1; up < distance && up <= distance / 2; up *= 2) values.push_back(target + up);
  for (std::int64_t step = distance / 2; step > 0; step /= 2) values.push_back(x - step);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

std::int64_t new_tokens(const Workload& w, std::size_t row) {
  return w.query_start_loc[row + 1] - w.query_start_loc[row];
}

// Row `row`'s entry of an array per row, 0 where the workload has none (an array it does not read).
std::int64_t value_at(const std::vector<std::int64_t>& values, std::size_t row) {
  return row < values.size() ? values[row] : 0;
}

// The rows of `w` that `keep` keeps, in order, each with its values, or with every value 0 where `cleared`
// says so (its computed tokens, its new tokens and its entry of every other array per row): what removing
// and clearing rows build.
template <typename Keep, typename Cleared>
Workload rows_edited(const Workload& w, Keep&& keep, Cleared&& cleared) {
  Workload out = empty_like(w);
  const auto from = other_per_row(w);
  const auto to = other_per_row(out);
  for (std::size_t row = 0; row < w.num_computed_tokens.size(); ++row) {
    if (!keep(row)) continue;
    const bool clear = cleared(row);
    out.num_computed_tokens.push_back(clear ? 0 : w.num_computed_tokens[row]);
    out.query_start_loc.push_back(out.query_start_loc.back() + (clear ? 0 : new_tokens(w, row)));
    for (std::size_t a = 0; a < from.size(); ++a) {
      if (row < from[a]->size()) to[a]->push_back(clear ? 0 : (*from[a])[row]);
    }
  }
  return out;
}

// Removes rows [first, first + count), closing the gap in query_start_loc.
Workload without_rows(const Workload& w, std::size_t first, std::size_t count) {
  return rows_edited(w, [&](std::size_t row) { return row < first || row >= first + count; },
                     [](std::size_t) { return false; });
}

// What a set_optional_scalar or set_more_optional step sets: none (count 0), or its value.
std::optional<std::int64_t> optional_value(const ShrinkStep& step) {
  return step.count == 0 ? std::nullopt : std::optional<std::int64_t>(step.value);
}

// A copy of `w` with one edit.
template <typename Edit>
Workload edited(const Workload& w, Edit&& edit) {
  Workload out = w;
  edit(out);
  return out;
}

Workload with_new_tokens(const Workload& w, std::size_t row, std::int64_t tokens) {
  Workload out = w;
  const std::int64_t delta = tokens - new_tokens(w, row);
  for (std::size_t j = row + 1; j < out.query_start_loc.size(); ++j) out.query_start_loc[j] += delta;
  return out;
}

// Whether chunk size `chunk` and second scalar `block` keep the divisibility
// the workload's had (a block size a multiple of the chunk size, or the
// other way round): specs that read both rule on it, and a shrink keeps it.
bool keeps_divisibility(const Workload& w, std::int64_t chunk, std::int64_t block) {
  if (w.block_size == 0) return true;
  if (w.block_size % w.chunk_size == 0 && block % chunk != 0) return false;
  if (w.chunk_size % w.block_size == 0 && chunk % block != 0) return false;
  return true;
}

// A step's place in a pass: steps are listed in increasing place, so a
// resumed pass can start at the accepted step's place (shrink_steps_resuming).
std::tuple<int, std::int64_t, std::int64_t> place_of(const ShrinkStep& step) {
  using Kind = ShrinkStep::Kind;
  using Place = std::tuple<int, std::int64_t, std::int64_t>;
  switch (step.kind) {
    case Kind::cut_new_tokens: return Place{-1, 0, 0};
    // Larger removals first (each count's removals, then its clears), the smallest candidates first.
    case Kind::remove_rows: return Place{0, -2 * static_cast<std::int64_t>(step.count), static_cast<std::int64_t>(step.row)};
    case Kind::clear_rows: return Place{0, 1 - 2 * static_cast<std::int64_t>(step.count), static_cast<std::int64_t>(step.row)};
    case Kind::simplest_values: return Place{1, 0, 0};
    case Kind::set_offset: return Place{2, 0, 0};
    case Kind::set_chunk_size: return Place{3, 0, 0};
    case Kind::set_block_size: return Place{3, 1, 0};
    case Kind::set_optional_scalar: return Place{3, 2, 0};
    case Kind::clear_flag: return Place{3, 3, 0};
    case Kind::set_computed:
    case Kind::set_new_tokens:
    case Kind::set_second_per_row: return Place{4, static_cast<std::int64_t>(step.row), 0};
    case Kind::set_more_scalar: return Place{3, 4, static_cast<std::int64_t>(step.row)};
    case Kind::set_more_optional: return Place{3, 5, static_cast<std::int64_t>(step.row)};
    case Kind::clear_more_flag: return Place{3, 6, static_cast<std::int64_t>(step.row)};
    case Kind::set_more_per_row: return Place{4, static_cast<std::int64_t>(step.row), 1 + static_cast<std::int64_t>(step.count)};
    case Kind::narrow_dtype: return Place{5, 0, 0};
  }
  return Place{0, 0, 0};
}

}  // namespace

std::vector<ShrinkStep> shrink_steps(const Workload& w) {
  using Kind = ShrinkStep::Kind;
  std::vector<ShrinkStep> steps;
  const std::size_t rows = w.num_computed_tokens.size();

  // A huge output (a row near 2^31 tokens at a small chunk size: tens of
  // millions of chunks) makes every candidate cost seconds: first try emptying,
  // then halving, the rows that hold most of it.
  const auto sizes = output_sizes(view_of(w));
  if (sizes.ok() && sizes.value().num_chunks() > kHugeOutputChunks) {
    std::vector<std::size_t> order(rows);
    for (std::size_t row = 0; row < rows; ++row) order[row] = row;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return new_tokens(w, a) > new_tokens(w, b); });
    for (std::size_t k = 0; k < std::min<std::size_t>(order.size(), 4); ++k) {
      const std::int64_t tokens = new_tokens(w, order[k]);
      if (tokens == 0) break;
      steps.push_back({Kind::cut_new_tokens, order[k], 0, 0});
      if (tokens / 2 > 0) steps.push_back({Kind::cut_new_tokens, order[k], 0, tokens / 2});
    }
  }

  // Fewer rows: blocks of rows, rows/2, rows/4, ..., 1. Removing a block
  // that lies, with the block before it, inside one run of identical rows
  // gives the workload that removing the block before it gave, so it is not
  // listed again: a huge batch of empty rows (32,768 rows and more) then has a
  // few removal steps per block size, not one per row.
  const auto others = other_per_row(w);
  const auto same_other_values = [&](std::size_t i, std::size_t j) {
    return std::all_of(others.begin(), others.end(),
                       [&](const auto* values) { return value_at(*values, i) == value_at(*values, j); });
  };
  const auto other_values_busy = [&](std::size_t row) {
    return std::any_of(others.begin(), others.end(), [&](const auto* values) { return value_at(*values, row) != 0; });
  };
  std::vector<std::size_t> run_end(rows);  // one past the last row equal to row i, from i on
  for (std::size_t i = rows; i-- > 0;) {
    const bool same_as_next = i + 1 < rows && w.num_computed_tokens[i] == w.num_computed_tokens[i + 1] &&
                              new_tokens(w, i) == new_tokens(w, i + 1) && same_other_values(i, i + 1);
    run_end[i] = same_as_next ? run_end[i + 1] : i + 1;
  }
  // Above kManyRows rows, each block size's removals are followed by emptying
  // blocks of that size that hold a busy row (computed or new tokens): an
  // empty block keeps the later rows' indices, which a huge-batch failure
  // (a row index past 2^15) depends on, so the busy rows go block by block.
  std::vector<std::size_t> busy_before(rows + 1, 0);  // busy rows before row i
  for (std::size_t i = 0; i < rows; ++i)
    busy_before[i + 1] =
        busy_before[i] + (w.num_computed_tokens[i] != 0 || new_tokens(w, i) != 0 || other_values_busy(i) ? 1 : 0);
  for (std::size_t block = rows; block >= 1; block /= 2) {
    for (std::size_t first = 0; first + block <= rows; first += block) {
      if (first >= block && run_end[first - block] >= first + block) continue;
      steps.push_back({Kind::remove_rows, first, block, 0});
    }
    if (rows > kManyRows && block < rows) {
      for (std::size_t first = 0; first + block <= rows; first += block) {
        if (busy_before[first + block] > busy_before[first]) steps.push_back({Kind::clear_rows, first, block, 0});
      }
    }
    if (block == 1) break;
  }
  // Keeping only the first 1, 2, 4, ... rows, among the removals by size: the
  // smallest candidates first, so a failure of any batch of k rows or more (a
  // hang, a crash: each accepted step a restart) takes one step, not one per halving.
  for (std::size_t kept = 1; kept < rows; kept *= 2) steps.push_back({Kind::remove_rows, kept, rows - kept, 0});
  std::stable_sort(steps.begin(), steps.end(),
                   [](const ShrinkStep& a, const ShrinkStep& b) { return place_of(a) < place_of(b); });
  steps.erase(std::unique(steps.begin(), steps.end(),
                          [](const ShrinkStep& a, const ShrinkStep& b) {
                            return a.kind == b.kind && a.row == b.row && a.count == b.count && a.value == b.value;
                          }),
              steps.end());

  // Every value at once: each accepted step through an implementation that
  // hangs or crashes on any such workload costs a restart or a timeout.
  const bool any_tokens = std::any_of(w.num_computed_tokens.begin(), w.num_computed_tokens.end(),
                                      [](std::int64_t c) { return c != 0; }) ||
                          w.query_start_loc.back() != w.query_start_loc.front() ||
                          std::any_of(w.second_per_row.begin(), w.second_per_row.end(), [](std::int64_t v) { return v != 0; });
  const auto nonzero = [](std::int64_t v) { return v != 0; };
  const bool any_more = std::any_of(w.more_scalars.begin(), w.more_scalars.end(), nonzero) ||
                        std::any_of(w.more_per_row.begin(), w.more_per_row.end(),
                                    [&](const auto& values) { return std::any_of(values.begin(), values.end(), nonzero); }) ||
                        std::any_of(w.more_optionals.begin(), w.more_optionals.end(), [](const auto& v) { return v.has_value(); }) ||
                        std::any_of(w.more_flags.begin(), w.more_flags.end(), [](std::uint8_t f) { return f != 0; });
  if (any_tokens || w.query_start_loc[0] != 0 || w.chunk_size != 1 || w.block_size > 1 || w.optional_scalar || w.flag ||
      any_more)
    steps.push_back({Kind::simplest_values, 0, 0, 0});

  // Only differences of query_start_loc are read: move the offset toward 0.
  for (std::int64_t offset : towards(w.query_start_loc[0], 0)) steps.push_back({Kind::set_offset, 0, 0, offset});

  // Smaller chunk sizes, unless they would multiply the output.
  // A smaller chunk size may multiply the chunks by 4 per step, but never past
  // 65,536 (or the failure's own count, if larger): repeated, 4x per step once
  // took a 64-chunk failure to 42 million chunks, and seconds per candidate;
  // an FLA length near 2^31 at C = 2^20 went to a million chunks, each
  // candidate half a second through a Python function.
  constexpr std::int64_t kLargestGrownOutput = std::int64_t{1} << 16;
  const std::int64_t current = sizes.ok() ? sizes.value().num_chunks() : 0;
  const std::int64_t budget =
      std::min(std::max<std::int64_t>(4096, 4 * current), std::max(current, kLargestGrownOutput));
  for (std::int64_t chunk : towards(w.chunk_size, 1)) {
    if (!keeps_divisibility(w, chunk, w.block_size)) continue;
    const ShrinkStep step{Kind::set_chunk_size, 0, 0, chunk};
    const auto sizes = output_sizes(view_of(apply(w, step)));
    if (sizes.ok() && sizes.value().num_chunks() <= budget) steps.push_back(step);
  }

  // A second scalar (a block size): smaller, keeping its divisibility with the chunk size.
  if (w.block_size > 1 && w.block_size % w.chunk_size == 0) {
    for (std::int64_t chunks : towards(w.block_size / w.chunk_size, 1))
      steps.push_back({Kind::set_block_size, 0, 0, chunks * w.chunk_size});
  } else if (w.block_size > 1) {
    for (std::int64_t block : towards(w.block_size, 1)) {
      if (keeps_divisibility(w, w.chunk_size, block)) steps.push_back({Kind::set_block_size, 0, 0, block});
    }
  }

  // An optional scalar: none first (the simplest), then smaller values toward 1 (count 1: a value is given).
  if (w.optional_scalar) {
    steps.push_back({Kind::set_optional_scalar, 0, 0, 0});
    for (std::int64_t value : towards(*w.optional_scalar, 1)) steps.push_back({Kind::set_optional_scalar, 0, 1, value});
  }
  if (w.flag) steps.push_back({Kind::clear_flag, 0, 0, 0});
  // More scalars toward 0, more optional scalars to none then toward 0, more flags false (row: which).
  for (std::size_t i = 0; i < w.more_scalars.size(); ++i) {
    for (std::int64_t value : towards(w.more_scalars[i], 0)) steps.push_back({Kind::set_more_scalar, i, 0, value});
  }
  for (std::size_t i = 0; i < w.more_optionals.size(); ++i) {
    if (!w.more_optionals[i]) continue;
    steps.push_back({Kind::set_more_optional, i, 0, 0});
    for (std::int64_t value : towards(*w.more_optionals[i], 0)) steps.push_back({Kind::set_more_optional, i, 1, value});
  }
  for (std::size_t i = 0; i < w.more_flags.size(); ++i) {
    if (w.more_flags[i] != 0) steps.push_back({Kind::clear_more_flag, i, 0, 0});
  }

  // Per row: computed tokens (same residue first, then any smaller value), then new tokens.
  for (std::size_t row = 0; row < rows; ++row) {
    const std::int64_t c = w.num_computed_tokens[row];
    const std::int64_t residue = c % w.chunk_size;
    for (std::int64_t blocks : towards(c / w.chunk_size, 0))
      steps.push_back({Kind::set_computed, row, 0, blocks * w.chunk_size + residue});
    for (std::int64_t value : towards(c, 0)) steps.push_back({Kind::set_computed, row, 0, value});
    for (std::int64_t tokens : towards(new_tokens(w, row), 0)) steps.push_back({Kind::set_new_tokens, row, 0, tokens});
    for (std::int64_t value : towards(value_at(w.second_per_row, row), 0))
      steps.push_back({Kind::set_second_per_row, row, 0, value});
    for (std::size_t k = 0; k < w.more_per_row.size(); ++k) {
      for (std::int64_t value : towards(value_at(w.more_per_row[k], row), 0))
        steps.push_back({Kind::set_more_per_row, row, k, value});
    }
  }
  if (w.dtype == Dtype::int64) steps.push_back({Kind::narrow_dtype, 0, 0, 0});
  return steps;
}

Workload apply(const Workload& w, const ShrinkStep& step) {
  using Kind = ShrinkStep::Kind;
  switch (step.kind) {
    case Kind::remove_rows: return without_rows(w, step.row, step.count);
    case Kind::clear_rows:
      return rows_edited(w, [](std::size_t) { return true; },
                         [&](std::size_t row) { return row >= step.row && row < step.row + step.count; });
    case Kind::set_new_tokens:
    case Kind::cut_new_tokens: return with_new_tokens(w, step.row, step.value);
    case Kind::set_offset: {
      Workload shifted = w;
      for (auto& q : shifted.query_start_loc) q += step.value - w.query_start_loc[0];
      return shifted;
    }
    case Kind::set_chunk_size: return edited(w, [&](Workload& x) { x.chunk_size = step.value; });
    case Kind::set_block_size: return edited(w, [&](Workload& x) { x.block_size = step.value; });
    case Kind::simplest_values: {
      Workload simplest{1,
                        std::vector<std::int64_t>(w.num_computed_tokens.size(), 0),
                        std::vector<std::int64_t>(w.query_start_loc.size(), 0),
                        w.dtype,
                        w.block_size == 0 ? 0 : 1,
                        std::vector<std::int64_t>(w.second_per_row.size(), 0),
                        std::nullopt,
                        false};
      simplest.more_scalars.assign(w.more_scalars.size(), 0);
      for (const auto& values : w.more_per_row) simplest.more_per_row.emplace_back(values.size(), 0);
      simplest.more_optionals.assign(w.more_optionals.size(), std::nullopt);
      simplest.more_flags.assign(w.more_flags.size(), 0);
      return simplest;
    }
    case Kind::set_optional_scalar: return edited(w, [&](Workload& x) { x.optional_scalar = optional_value(step); });
    case Kind::clear_flag: return edited(w, [&](Workload& x) { x.flag = false; });
    case Kind::narrow_dtype: return edited(w, [&](Workload& x) { x.dtype = Dtype::int32; });
    case Kind::set_computed: return edited(w, [&](Workload& x) { x.num_computed_tokens[step.row] = step.value; });
    case Kind::set_second_per_row: return edited(w, [&](Workload& x) { x.second_per_row[step.row] = step.value; });
    case Kind::set_more_scalar: return edited(w, [&](Workload& x) { x.more_scalars[step.row] = step.value; });
    case Kind::set_more_per_row:
      return edited(w, [&](Workload& x) { x.more_per_row[step.count][step.row] = step.value; });
    case Kind::set_more_optional: return edited(w, [&](Workload& x) { x.more_optionals[step.row] = optional_value(step); });
    case Kind::clear_more_flag: return edited(w, [&](Workload& x) { x.more_flags[step.row] = 0; });
  }
  return w;
}

std::vector<ShrinkStep> shrink_steps_resuming(const Workload& workload, const ShrinkStep& accepted) {
  std::vector<ShrinkStep> steps = shrink_steps(workload);
  // shrink_steps lists steps in increasing (phase, ...) order, so a rotation
  // at the first step not before the accepted one keeps each phase's order.
  const auto resume = place_of(accepted);
  const auto first = std::find_if(steps.begin(), steps.end(), [&](const ShrinkStep& s) { return place_of(s) >= resume; });
  std::rotate(steps.begin(), first, steps.end());
  return steps;
}

Shrunk shrink_batched(Workload workload,
                      const std::function<std::optional<std::size_t>(std::span<const Workload>)>& first_failing,
                      const ShrinkOptions& options) {
  Shrunk result;
  GreedyShrink<Workload, ShrinkStep> how;
  how.steps = [](const Workload& w, const std::optional<ShrinkStep>& accepted) {
    return accepted ? shrink_steps_resuming(w, *accepted) : shrink_steps(w);
  };
  how.candidate = [&options](const Workload& w, const ShrinkStep& step) -> std::optional<Workload> {
    Workload candidate = apply(w, step);
    if (options.allowed && !options.allowed(candidate)) return std::nullopt;
    return candidate;
  };
  how.first_failing = first_failing;
  how.on_smaller = [&](const Workload& smaller) {
    ++result.accepted;
    if (options.on_smaller) options.on_smaller(smaller);
  };
  how.stop = options.stop_requested;
  how.max_batch = options.max_batch;
  result.minimal = greedy_shrink(workload, how);
  result.workload = std::move(workload);
  return result;
}

std::vector<Counterexample> shrink_failure(const Workload& found, std::span<const Implementation> implementations,
                                           const std::string& property, ShrinkOptions options,
                                           const std::function<void(const Counterexample&)>& on_smaller) {
  const auto failures = check_all(found, implementations, property);
  if (failures.empty() || failures.front().spec->validate(found)) return failures;
  // The implementations that failed, and how: a candidate counts only if one of
  // them fails it the same way (a crash that shrinks into a wrong answer is another bug).
  std::vector<std::pair<const Implementation*, FindingKind>> failing;
  for (const auto& cx : failures) {
    for (const auto& impl : implementations) {
      if (impl.name == cx.implementation) failing.emplace_back(&impl, cx.finding.kind);
    }
  }
  const Spec& spec = *failures.front().spec;
  Counterexample latest;  // the latest failing candidate's first failure
  latest.spec = &spec;
  latest.property = property;
  const auto first_failing = [&](std::span<const Workload> candidates) -> std::optional<std::size_t> {
    std::vector<std::vector<Answer>> answers;
    for (const auto& [impl, kind] : failing) answers.push_back(answer_all(*impl, candidates));
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const Outcome expected = spec.reference(candidates[i]);
      for (std::size_t k = 0; k < failing.size(); ++k) {
        auto finding = judge(spec, candidates[i], answers[k][i], expected);
        if (!finding || finding->kind != failing[k].second) continue;
        latest.implementation = failing[k].first->name;
        latest.workload = candidates[i];
        latest.finding = std::move(*finding);
        return i;
      }
    }
    return std::nullopt;
  };
  if (on_smaller) options.on_smaller = [&](const Workload&) { on_smaller(latest); };
  // The steps keep Mamba's domain, not every spec's: candidates outside this spec's are not tried.
  options.allowed = [&spec, allowed = std::move(options.allowed)](const Workload& w) {
    return !spec.validate(w) && (!allowed || allowed(w));
  };
  const Shrunk shrunk = shrink_batched(found, first_failing, options);
  auto smallest = check_all(shrunk.workload, implementations, property);
  for (auto& cx : smallest) cx.status = shrunk.minimal ? kMinimal : "not fully shrunk (stopped after " +
                                                                        std::to_string(shrunk.accepted) + " steps)";
  return smallest;
}

}  // namespace chunkmeta::harness
