// The steps' functions through the harness's implementations: by name both ways.
#include "chunkmeta/steps/through_implementations.hpp"

#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/printable.hpp"
#include "chunkmeta/harness/spec.hpp"

namespace chunkmeta::steps {
namespace {

using harness::Json;

// The implementation's outputs by name for the step's inputs, or why there are none.
std::variant<Json, std::string> ask(const harness::Implementation& impl, Json inputs) {
  const harness::Spec& spec = *impl.spec;
  inputs["spec"] = std::string(spec.name());
  auto parsed = harness::parse_workload(inputs);
  if (auto* wrong = std::get_if<harness::InputError>(&parsed)) {
    return "the step is not a workload of " + std::string(spec.name()) + ": " + wrong->message;
  }
  const harness::Answer answer = impl.compute(std::get<harness::SpecWorkload>(parsed).workload);
  if (const auto* m = std::get_if<harness::Misbehaviour>(&answer)) {
    // What the implementation wrote, on one line and printed safely (a fault's words are a line of the report).
    std::string_view evidence = m->detail;
    while (!evidence.empty() && (evidence.back() == '\n' || evidence.back() == ' ')) evidence.remove_suffix(1);
    const std::string detail = harness::printable_line(evidence);
    const std::string summary = harness::printable_line(m->summary);
    const std::string kind(harness::to_string(m->kind));
    // Named by its kind once: "raised ValueError: boom", "crashed: the process exited with status 3 ...".
    const std::string named = summary.rfind(kind + " ", 0) == 0 ? summary : kind + ": " + summary;
    return named + (detail.empty() ? "" : " [" + detail + "]");
  }
  const auto& outcome = std::get<harness::Outcome>(answer);
  if (!outcome) return outcome.error().message();
  return harness::to_json(spec, outcome.value());
}

template <typename Int>
std::vector<Int> array(const Json& outputs, const char* name) {
  std::vector<Int> values;
  for (const auto& v : outputs.at(name)) values.push_back(v.get<Int>());
  return values;
}

}  // namespace

std::string_view chunks_spec(Mode mode) { return mode == Mode::all ? "mamba" : "mamba.checkpointed_chunks"; }

Functions functions_of(const Implementations& implementations) {
  Functions functions = own_functions();
  if (implementations.chunks != nullptr) {
    functions.chunks = [impl = *implementations.chunks](const ChunksInput& in) -> Answer<ChunksOutput> {
      Json inputs = {{"chunk_size", in.chunk_size}, {"num_computed_tokens", in.num_computed_tokens},
                     {"query_start_loc", in.query_start_loc}};
      if (!in.checkpoint_offsets.empty()) inputs["checkpoint_offsets"] = in.checkpoint_offsets;
      auto out = ask(impl, std::move(inputs));
      if (auto* why = std::get_if<std::string>(&out)) return *why;
      const Json& o = std::get<Json>(out);
      ChunksOutput result{array<std::int32_t>(o, "cu_chunk_seqlen"), array<std::int32_t>(o, "seq_idx"),
                          array<std::int32_t>(o, "last_chunk_indices"), {}};
      if (o.contains("checkpoint_chunk_indices")) {
        result.checkpoint_chunk_indices = array<std::int32_t>(o, "checkpoint_chunk_indices");
      }
      return result;
    };
  }
  if (implementations.plan != nullptr) {
    functions.plan = [impl = *implementations.plan](const PlanInput& in) -> Answer<PlanOutput> {
      auto out = ask(impl, {{"chunk_size", in.chunk_size}, {"block_size", in.block_size},
                            {"num_computed_tokens", in.num_computed_tokens}, {"query_start_loc", in.query_start_loc}});
      if (auto* why = std::get_if<std::string>(&out)) return *why;
      const Json& o = std::get<Json>(out);
      return PlanOutput{array<std::int32_t>(o, "block_idx_last_computed_token"),
                        array<std::int32_t>(o, "block_idx_first_scheduled_token"),
                        array<std::int32_t>(o, "block_idx_last_scheduled_token"), array<std::int32_t>(o, "write_row"),
                        array<std::int32_t>(o, "write_block"), array<std::int32_t>(o, "write_chunk")};
    };
  }
  if (implementations.checkpoints != nullptr) {
    functions.checkpoints = [impl = *implementations.checkpoints](const CheckpointsInput& in)
        -> Answer<CheckpointsOutput> {
      auto out = ask(impl, {{"seq_lens", in.seq_lens}, {"query_lens", in.query_lens},
                            {"hash_block_size", in.hash_block_size}, {"mamba_block_size", in.mamba_block_size},
                            {"checkpoint_alignment", in.checkpoint_alignment ? Json(*in.checkpoint_alignment) : Json()},
                            {"drop_eagle_block", in.drop_eagle_block}});
      if (auto* why = std::get_if<std::string>(&out)) return *why;
      const Json& o = std::get<Json>(out);
      return CheckpointsOutput{array<std::int32_t>(o, "checkpoint_offsets"), array<std::int64_t>(o, "checkpoint_cols")};
    };
  }
  return functions;
}

}  // namespace chunkmeta::steps
