// Lives: drawn at random, shrunk to the fewest steps, rows and tokens that still fail, and run by the thousand.
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "chunkmeta/steps/steps.hpp"

namespace chunkmeta::steps {
namespace {

constexpr std::int64_t kLargestTokens = 2147483647;  // a row's tokens fit in int32, as in every engine

std::int64_t uniform(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}
bool one_in(std::mt19937_64& rng, int n) { return uniform(rng, 1, n) == 1; }

// Tokens for one step of a request (at least one): few, about a chunk, about a block, several blocks, exactly on the grid.
std::int64_t draw_piece(std::mt19937_64& rng, std::int64_t chunk, std::int64_t block) {
  switch (uniform(rng, 0, 5)) {
    case 0: return uniform(rng, 1, 3);
    case 1: return std::max<std::int64_t>(1, chunk + uniform(rng, -1, 1));
    case 2: return std::max<std::int64_t>(1, block + uniform(rng, -1, 1));
    case 3: return block * uniform(rng, 1, 3);
    default: return uniform(rng, 1, 3 * block + 2);
  }
}

// A life without requests that run no step, its steps counted from the first that runs one.
Life compacted(Life life) {
  std::erase_if(life.requests, [](const Request& r) { return r.pieces.empty(); });
  if (life.requests.empty()) return life;
  std::int64_t first = life.requests.front().first_step;
  for (const auto& r : life.requests) first = std::min(first, r.first_step);
  for (auto& r : life.requests) r.first_step -= first;
  return life;
}

// `target`, then values halving the distance back toward `value` (none when value <= target).
std::vector<std::int64_t> towards(std::int64_t value, std::int64_t target) {
  std::vector<std::int64_t> values;
  for (std::int64_t step = value - target; step > 0; step /= 2) values.push_back(value - step);
  return values;
}

// Smaller lives, the most wanted first: fewer steps, fewer requests, then fewer tokens.
std::vector<Life> smaller(const Life& life, bool sizes_fixed) {
  std::vector<Life> out;
  const auto add = [&](Life candidate) {
    candidate = compacted(std::move(candidate));
    if (!candidate.requests.empty() && candidate != life) out.push_back(std::move(candidate));
  };
  const std::int64_t steps = life.steps();
  if (steps > 1) {  // without the last step, then without the first (its requests start a step later)
    Life last = life;
    for (auto& r : last.requests) {
      while (r.first_step + static_cast<std::int64_t>(r.pieces.size()) > steps - 1 && !r.pieces.empty()) r.pieces.pop_back();
    }
    add(last);
    Life first = life;
    for (auto& r : first.requests) {
      if (r.first_step == 0 && !r.pieces.empty()) {
        r.pieces.erase(r.pieces.begin());
      } else {
        --r.first_step;
      }
    }
    add(first);
  }
  for (std::size_t i = 0; i < life.requests.size(); ++i) {  // a request fewer
    Life without = life;
    without.requests.erase(without.requests.begin() + static_cast<std::ptrdiff_t>(i));
    add(without);
  }
  for (std::size_t i = 0; i < life.requests.size(); ++i) {
    const Request& request = life.requests[i];
    for (std::size_t j = 0; j + 1 < request.pieces.size(); ++j) {  // two of its steps as one
      Life merged = life;
      auto& pieces = merged.requests[i].pieces;
      pieces[j] += pieces[j + 1];
      pieces.erase(pieces.begin() + static_cast<std::ptrdiff_t>(j) + 1);
      add(merged);
    }
    if (request.pieces.size() > 1) {  // its last step dropped
      Life shorter = life;
      shorter.requests[i].pieces.pop_back();
      add(shorter);
    }
    if (request.first_step > 0) {  // run earlier
      Life earlier = life;
      --earlier.requests[i].first_step;
      add(earlier);
    }
    if (request.prefix_hit > 0) {  // less resumed from the cache: fewer whole blocks, halving the distance to none
      for (std::int64_t blocks : towards(request.prefix_hit / life.block_size, 0)) {
        Life less = life;
        less.requests[i].prefix_hit = blocks * life.block_size;
        add(less);
      }
    }
    for (std::size_t j = 0; j < request.pieces.size(); ++j) {  // fewer tokens in a step
      for (std::int64_t value : towards(request.pieces[j], 1)) {
        Life fewer = life;
        fewer.requests[i].pieces[j] = value;
        add(fewer);
      }
    }
  }
  if (!sizes_fixed) {  // smaller blocks and chunks, M staying a multiple of C
    if (life.block_size > life.chunk_size) {
      Life one = life;
      one.block_size = life.chunk_size;
      one.hash_block_size = std::min(one.hash_block_size, one.block_size);
      for (auto& r : one.requests) r.prefix_hit = r.prefix_hit / life.block_size * one.block_size;
      add(one);
    }
    if (life.chunk_size > 1 && life.chunk_size % 2 == 0) {
      Life half = life;
      half.chunk_size /= 2;
      add(half);
    }
  }
  if (life.decode_tokens > 0) {  // no decodes before the prefills
    Life none = life;
    none.decode_tokens = 0;
    add(none);
  }
  if (life.mode == Mode::align) {  // the planner's simplest settings
    Life aligned = life;
    aligned.checkpoint_alignment = 1;
    add(aligned);
    Life hashed = life;
    hashed.hash_block_size = life.block_size;
    add(hashed);
    if (life.drop_eagle_block) {
      Life kept = life;
      kept.drop_eagle_block = false;
      add(kept);
    }
  }
  return out;
}

}  // namespace

std::string to_json(const Life& life) {
  nlohmann::json requests = nlohmann::json::array();
  for (const auto& r : life.requests) {
    requests.push_back({{"first_step", r.first_step}, {"prefix_hit", r.prefix_hit}, {"pieces", r.pieces}});
  }
  nlohmann::json json = {{"mode", to_string(life.mode)}, {"chunk_size", life.chunk_size},
                         {"block_size", life.block_size}};
  if (life.mode == Mode::align) {
    json["hash_block_size"] = life.hash_block_size;
    json["checkpoint_alignment"] =
        life.checkpoint_alignment ? nlohmann::json(*life.checkpoint_alignment) : nlohmann::json(nullptr);
    json["drop_eagle_block"] = life.drop_eagle_block;
  }
  if (life.decode_tokens > 0) json["decode_tokens"] = life.decode_tokens;
  json["requests"] = std::move(requests);
  return json.dump();
}

Life draw(std::mt19937_64& rng, const DrawOptions& options) {
  Life life;
  life.mode = options.mode;
  // Chunk sizes are powers of two in the engines, but nothing requires it (c % C is not c & (C - 1)).
  const std::int64_t chunk_sizes[] = {1, 2, 3, 4, 6, 8, 16};
  life.chunk_size = options.chunk_size.value_or(chunk_sizes[uniform(rng, 0, 6)]);
  life.block_size = options.block_size.value_or(life.chunk_size * uniform(rng, 1, 4));
  const std::int64_t block = life.block_size;
  life.hash_block_size = block % 2 == 0 && one_in(rng, 2) ? block / 2 : block;
  const std::int64_t alignments[] = {1, life.chunk_size, life.hash_block_size};
  life.checkpoint_alignment = one_in(rng, 6) ? std::nullopt : std::optional(alignments[uniform(rng, 0, 2)]);
  life.drop_eagle_block = one_in(rng, 4);
  life.decode_tokens = one_in(rng, 2) ? 0 : uniform(rng, 1, 5);
  const std::int64_t requests = uniform(rng, 1, options.max_requests);
  for (std::int64_t r = 0; r < requests; ++r) {
    Request request;
    request.first_step = uniform(rng, 0, options.max_steps - 1);
    request.prefix_hit = one_in(rng, 2) ? 0 : block * uniform(rng, 1, 3);
    // A long prompt resumed in the last blocks before 2^31 tokens: its pieces then end at 2^31 - 1 at most.
    if (one_in(rng, 16)) request.prefix_hit = std::max<std::int64_t>(0, (kLargestTokens / block - uniform(rng, 0, 2)) * block);
    std::int64_t room = kLargestTokens - request.prefix_hit;
    const std::int64_t pieces = uniform(rng, 1, options.max_steps - request.first_step);
    for (std::int64_t j = 0; j < pieces; ++j) {
      if (one_in(rng, 10)) {  // in the batch with no new tokens this step (its row writes nothing)
        request.pieces.push_back(0);
        continue;
      }
      // align mode checkpoints only where a step starts on the hash grid: half its steps are whole blocks
      const std::int64_t piece = life.mode == Mode::align && one_in(rng, 2) ? block * uniform(rng, 1, 3)
                                                                            : draw_piece(rng, life.chunk_size, block);
      request.pieces.push_back(std::min(piece, room));
      room -= request.pieces.back();
    }
    life.requests.push_back(std::move(request));
  }
  return compacted(std::move(life));
}

Shrunk shrink(Life life, Fault fault, const Functions& functions, bool sizes_fixed, int max_runs) {
  Shrunk shrunk{std::move(life), std::move(fault), 0};
  for (int runs = 0; runs < max_runs;) {
    bool took = false;
    for (Life& candidate : smaller(shrunk.life, sizes_fixed)) {
      if (++runs > max_runs) break;
      if (auto still = run(candidate, functions)) {
        shrunk.life = std::move(candidate);
        shrunk.fault = std::move(*still);
        ++shrunk.steps_taken;
        took = true;
        break;
      }
    }
    if (!took) break;
  }
  return shrunk;
}

CheckResult check(const Functions& functions, std::int64_t lives, std::uint64_t seed, const DrawOptions& options,
                  const std::function<bool()>& stop_requested) {
  CheckResult result;
  result.seed = seed;
  std::mt19937_64 rng(seed);
  for (; result.lives < lives && !(stop_requested && stop_requested()); ++result.lives) {
    Life life = draw(rng, options);
    if (auto fault = run(life, functions, &result.tally)) {
      ++result.lives;
      result.found = life;
      // A failure must fail again (a function that crashes at random, or keeps state between calls, need not).
      if (!run(life, functions)) {
        result.flaky = true;
        result.minimal = Shrunk{std::move(life), std::move(*fault), 0};
        return result;
      }
      const bool sizes_fixed = options.chunk_size.has_value() || options.block_size.has_value();
      result.minimal = shrink(std::move(life), std::move(*fault), functions, sizes_fixed);
      if (!run(result.minimal->life, functions)) result.flaky = true;
      return result;
    }
  }
  return result;
}

std::string report(const CheckResult& result, Mode mode, const std::string& functions, double seconds,
                   const std::string& reproduce) {
  using kernel_view::count_words;
  const Tally& t = result.tally;
  char elapsed[32];
  std::snprintf(elapsed, sizeof elapsed, "%.2f", seconds);
  const std::string ran = (result.lives == 1 ? std::string("1 life") : std::to_string(result.lives) + " lives") + ", " + count_words(t.steps, "step") + " (" +
                          count_words(t.resumed_reads, "resumed read") + ", " + count_words(t.writes, "write") + ", " +
                          count_words(t.checkpoints, "checkpoint") + ") in " + elapsed + " s, mode " + to_string(mode) +
                          ", seed " + std::to_string(result.seed);
  if (!result.minimal) return "VERIFIED steps (" + functions + "): " + ran;
  const Shrunk& minimal = *result.minimal;
  const std::string status =
      result.flaky ? "flaky: it failed once and passed when run again (a race, state kept between calls, randomness)"
                   : "minimal: " + count_words(minimal.life.steps(), "step") + ", " +
                         count_words(static_cast<std::int64_t>(minimal.life.rows()), "request") + ", after " +
                         count_words(minimal.steps_taken, "shrink step");
  return "NOT VERIFIED steps (" + functions + "): life " + std::to_string(result.lives) + " fails\n" +
         "  fault:     " + to_string(minimal.fault) + "\n" +
         "  life:      " + to_json(minimal.life) + "  (" + status + ")\n" +
         "  the step:  " + minimal.fault.inputs + "\n" +
         "  found as:  " + to_json(*result.found) + "\n" +
         "  reproduce: " + reproduce + "\n" +
         "  ran:       " + ran;
}

}  // namespace chunkmeta::steps
