// The steps' functions answered by implementations as the harness knows them
// (built-in, cmd:, plugin:, a mutant): each step's inputs go to an
// implementation of the function's spec as that spec's workload, named as its
// inputs are; its outputs come back by name; an error or a misbehaviour (a
// crash, a hang) is the function's answer of none, in words.
#pragma once

#include <string_view>

#include "chunkmeta/harness/implementation.hpp"
#include "chunkmeta/steps/steps.hpp"

namespace chunkmeta::steps {

// The spec a function of the steps is an implementation of.
std::string_view chunks_spec(Mode mode);  // "mamba" (all), "mamba.checkpointed_chunks" (align)
inline constexpr std::string_view kPlanSpec = "mamba.checkpoint_plan";
inline constexpr std::string_view kCheckpointsSpec = "mamba.prefill_checkpoints";

// chunkmeta's own functions with those given replaced (nullptr: chunkmeta's own).
struct Implementations {
  const harness::Implementation* chunks = nullptr;
  const harness::Implementation* plan = nullptr;
  const harness::Implementation* checkpoints = nullptr;
};
// The implementations are copied into the functions.
Functions functions_of(const Implementations& implementations);

}  // namespace chunkmeta::steps
