// Lives: drawn at random, shrunk to the fewest steps, rows and tokens that still fail, and run by the thousand.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "chunkmeta/steps/steps.hpp"

namespace chunkmeta::steps {
namespace {

std::int64_t uniform(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}
bool one_in(std::mt19937_64& rng, int n) { return uniform(rng, 1, n) == 1; }

// Tokens for one step of a request: few, about a chunk, about a block, several blocks, exactly on the grid.
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

std::vector<std::int64_t> towards_one(std::int64_t value) {
  std::vector<std::int64_t> values;
  for (std::int64_t step = value - 1; step > 0; step /= 2) values.push_back(value - step);
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
  if (steps > 1) {  // without the last step, then without the first
    Life last = life;
    for (auto& r : last.requests) {
      while (r.first_step + static_cast<std::int64_t>(r.pieces.size()) > steps - 1 && !r.pieces.empty()) r.pieces.pop_back();
    }
    add(last);
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
    if (request.prefix_hit > 0) {  // less resumed from the cache
      for (std::int64_t hit : {std::int64_t{0}, request.prefix_hit - life.block_size}) {
        Life less = life;
        less.requests[i].prefix_hit = hit;
        add(less);
      }
    }
    for (std::size_t j = 0; j < request.pieces.size(); ++j) {  // fewer tokens in a step
      for (std::int64_t value : towards_one(request.pieces[j])) {
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
  if (life.mode == Mode::align) {  // the planner's simplest settings
    for (auto setting : {&Life::checkpoint_alignment, &Life::hash_block_size}) {
      Life simpler = life;
      simpler.*setting = setting == &Life::checkpoint_alignment ? 1 : life.block_size;
      add(simpler);
    }
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
    json["checkpoint_alignment"] = life.checkpoint_alignment;
    json["drop_eagle_block"] = life.drop_eagle_block;
  }
  json["requests"] = std::move(requests);
  return json.dump();
}

Life draw(std::mt19937_64& rng, const DrawOptions& options) {
  Life life;
  life.mode = options.mode;
  life.chunk_size = options.chunk_size.value_or(std::int64_t{1} << uniform(rng, 0, 4));
  life.block_size = options.block_size.value_or(life.chunk_size * uniform(rng, 1, 4));
  const std::int64_t block = life.block_size;
  life.hash_block_size = block % 2 == 0 && one_in(rng, 2) ? block / 2 : block;
  const std::int64_t alignments[] = {1, life.chunk_size, life.hash_block_size};
  life.checkpoint_alignment = alignments[uniform(rng, 0, 2)];
  life.drop_eagle_block = one_in(rng, 4);
  const std::int64_t requests = uniform(rng, 1, options.max_requests);
  for (std::int64_t r = 0; r < requests; ++r) {
    Request request;
    request.first_step = uniform(rng, 0, options.max_steps - 1);
    request.prefix_hit = one_in(rng, 2) ? 0 : block * uniform(rng, 1, 3);
    const std::int64_t pieces = uniform(rng, 1, options.max_steps - request.first_step);
    for (std::int64_t j = 0; j < pieces; ++j) {
      // align mode checkpoints only where a step starts on the hash grid: half its steps are whole blocks
      request.pieces.push_back(life.mode == Mode::align && one_in(rng, 2) ? block * uniform(rng, 1, 3)
                                                                          : draw_piece(rng, life.chunk_size, block));
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

CheckResult check(const Functions& functions, std::int64_t lives, std::uint64_t seed, const DrawOptions& options) {
  CheckResult result;
  result.seed = seed;
  std::mt19937_64 rng(seed);
  for (; result.lives < lives; ++result.lives) {
    Life life = draw(rng, options);
    if (auto fault = run(life, functions, &result.tally)) {
      ++result.lives;
      result.found = life;
      const bool sizes_fixed = options.chunk_size.has_value() || options.block_size.has_value();
      result.minimal = shrink(std::move(life), std::move(*fault), functions, sizes_fixed);
      return result;
    }
  }
  return result;
}

}  // namespace chunkmeta::steps
