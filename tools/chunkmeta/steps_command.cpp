// `chunkmeta steps`: requests' whole lives through the engine's functions (steps/),
// any of them an implementation as --impl names one (cmd:, plugin:, built-in) of
// the function's spec: the chunker (`mamba`, or `mamba.checkpointed_chunks` in
// align mode), the plan (`mamba.checkpoint_plan`), the planner
// (`mamba.prefill_checkpoints`). Each step's inputs go to it as that spec's
// workload, named as its inputs are; its outputs come back by name.
#include <chrono>
#include <iostream>
#include <random>
#include <tuple>

#include "chunkmeta/harness/report.hpp"
#include "chunkmeta/steps/through_implementations.hpp"
#include "cli.hpp"

namespace chunkmeta::cli {
namespace {

namespace steps = chunkmeta::steps;

struct StepsOptions {
  std::string mode = "all";
  std::int64_t lives = 1000;
  std::optional<std::uint64_t> seed;
  std::optional<std::int64_t> chunk_size, block_size;
  std::string chunks, plan, checkpoints;  // implementations; empty: chunkmeta's own
  double timeout = 10.0;
};

std::optional<Implementation> one_implementation(const std::string& spec_name, const std::string& text,
                                                 const harness::ResolveOptions& resolve) {
  const Spec* spec = spec_named(spec_name);
  if (spec == nullptr) return std::nullopt;
  auto chosen = implementations(*spec, {text}, resolve);
  if (!chosen) return std::nullopt;
  if (chosen->size() != 1) {
    std::cerr << "chunkmeta steps: " << text << " names " << chosen->size() << " implementations of " << spec_name
              << "; name one\n";
    return std::nullopt;
  }
  return chosen->front();
}

int run_steps(const StepsOptions& chosen, harness::ResolveOptions resolve) {
  // A function the mode never calls would be named in a VERIFIED it took no part in.
  if (chosen.mode == "all" && !chosen.checkpoints.empty()) {
    std::cerr << "chunkmeta steps: --checkpoints is align mode's planner; mode all runs the chunker and the plan "
                 "(--mode align to run it)\n";
    return kExitUsage;
  }
  if (chosen.mode == "align" && !chosen.plan.empty()) {
    std::cerr << "chunkmeta steps: --plan is all mode's write plan; mode align runs the planner and the chunker "
                 "(--mode all to run it)\n";
    return kExitUsage;
  }
  resolve.timeout_seconds = chosen.timeout;
  resolve.valid_only = true;  // every step a life sends is valid input
  const bool align = chosen.mode == "align";
  const auto mode = align ? steps::Mode::align : steps::Mode::all;
  std::string named;
  std::vector<Implementation> chosen_implementations;
  chosen_implementations.reserve(3);  // the pointers below stay valid
  steps::Implementations replaced;
  for (auto [function, text, spec_name, slot] :
       {std::tuple{"chunks", chosen.chunks, steps::chunks_spec(mode), &replaced.chunks},
        std::tuple{"plan", chosen.plan, steps::kPlanSpec, &replaced.plan},
        std::tuple{"checkpoints", chosen.checkpoints, steps::kCheckpointsSpec, &replaced.checkpoints}}) {
    if (text.empty()) continue;
    auto impl = one_implementation(std::string(spec_name), text, resolve);
    if (!impl) return kExitUsage;
    chosen_implementations.push_back(std::move(*impl));
    *slot = &chosen_implementations.back();
    named += (named.empty() ? "" : ", ") + std::string(function) + "=" + text;
  }
  const steps::Functions functions = steps::functions_of(replaced);
  steps::DrawOptions options;
  options.mode = mode;
  options.chunk_size = chosen.chunk_size;
  options.block_size = chosen.block_size;
  const std::uint64_t seed = chosen.seed.value_or(std::random_device{}());
  std::string reproduce = "chunkmeta steps --mode " + chosen.mode + " --seed " + std::to_string(seed);
  if (chosen.lives != StepsOptions{}.lives) reproduce += " --lives " + std::to_string(chosen.lives);
  if (chosen.chunk_size) reproduce += " --chunk-size " + std::to_string(*chosen.chunk_size);
  if (chosen.block_size) reproduce += " --block-size " + std::to_string(*chosen.block_size);
  if (chosen.timeout != StepsOptions{}.timeout) reproduce += " --timeout " + std::to_string(chosen.timeout);
  for (const auto& [flag, text] : {std::pair{"--chunks", chosen.chunks}, {"--plan", chosen.plan},
                                   {"--checkpoints", chosen.checkpoints}}) {
    if (!text.empty()) reproduce += std::string(" ") + flag + " " + harness::shell_quote(text);
  }
  const auto started = std::chrono::steady_clock::now();
  const steps::CheckResult result = steps::check(functions, chosen.lives, seed, options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << steps::report(result, options.mode, named.empty() ? "chunkmeta's own functions" : named, seconds,
                             reproduce)
            << "\n";
  return result.minimal ? kExitFailure : kExitOk;
}

}  // namespace

Command add_steps_command(CLI::App& app, const harness::ResolveOptions& resolve) {
  auto chosen = std::make_shared<StepsOptions>();
  auto* cmd = app.add_subcommand(
      "steps", "Run requests' whole lives through the engine's functions (chunked prefill at random splits, prefix "
               "hits at block boundaries, internal checkpoints in align mode), each step by the kernels' view: every "
               "resumed row must read its state, every block written must hold what it claims. The first failing "
               "life is shrunk to the fewest steps, requests and tokens.");
  cmd->add_option("--mode", chosen->mode, "all: the checkpoint plan writes every block boundary; align: internal "
                                          "checkpoints planned by the planner and cut by the chunker")
      ->check(CLI::IsMember({"all", "align"}));
  cmd->add_option("--lives", chosen->lives, "How many lives (default 1000)")->check(CLI::PositiveNumber);
  cmd->add_option("--seed", chosen->seed, "The run's seed (default: a random one, printed)")
      ->check(digits_only("--seed"));
  cmd->add_option("--chunk-size", chosen->chunk_size, "C for every life, 1 to 2^20 (default: drawn)")
      ->check(CLI::Range(std::int64_t{1}, steps::kLargestSize));
  cmd->add_option("--block-size", chosen->block_size, "M for every life, 1 to 2^20 (default: drawn, a multiple of C)")
      ->check(CLI::Range(std::int64_t{1}, steps::kLargestSize));
  cmd->add_option("--chunks", chosen->chunks, "The chunker: an implementation of mamba (all mode) or "
                                              "mamba.checkpointed_chunks (align mode). " + implementation_help());
  cmd->add_option("--plan", chosen->plan, "The write plan: an implementation of mamba.checkpoint_plan");
  cmd->add_option("--checkpoints", chosen->checkpoints,
                  "The checkpoint planner: an implementation of mamba.prefill_checkpoints");
  cmd->add_option("--timeout", chosen->timeout, "Seconds per call of a cmd: program (default 10)")
      ->check(finite_number(false));
  return {cmd, [chosen, resolve] { return run_steps(*chosen, resolve); }};
}

}  // namespace chunkmeta::cli
