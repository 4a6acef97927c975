// chunkmeta.check_steps: requests' lives through the engine's functions (steps/),
// any of them a Python callable. __init__.py adapts the callables to the engine's
// signatures and types; here each is called with plain lists and gives lists back.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <chrono>

#include "chunkmeta/harness/printable.hpp"
#include "chunkmeta/steps/steps.hpp"
#include "module.hpp"

namespace chunkmeta::python {
namespace {

using namespace chunkmeta::steps;

template <typename Int>
std::vector<Int> ints(const py::handle& value) {
  std::vector<Int> out;
  for (const auto& item : value) out.push_back(item.cast<Int>());
  return out;
}

// A Python callable's outputs as the steps read them; an exception (the function's, or a
// wrong shape) becomes its text: the step reports it as the function's, never as ours.
template <typename Output, typename Call>
Answer<Output> answered(Call&& call) {
  try {
    return call();
  } catch (py::error_already_set& error) {
    if (error.matches(PyExc_KeyboardInterrupt)) throw;
    // The exception's type and words, on one line (no traceback: the step and its inputs say where).
    std::string words = py::str(error.type().attr("__name__")).cast<std::string>() + ": ";
    try {
      words += py::str(error.value()).cast<std::string>();
    } catch (py::error_already_set&) {
      words += "(its text could not be read)";
    }
    return harness::printable_line(words);
  } catch (const py::cast_error& error) {
    return std::string("an output is not a sequence of integers: ") + error.what();
  }
}

std::vector<py::object> outputs(const py::object& result, std::size_t least, const char* function) {
  std::vector<py::object> out;
  for (const auto& item : result) out.push_back(py::reinterpret_borrow<py::object>(item));
  if (out.size() < least) {
    throw py::cast_error(std::string(function) + " returned " + std::to_string(out.size()) + " outputs, not " +
                         std::to_string(least));
  }
  return out;
}

Functions functions_of(const py::object& chunks, const py::object& plan, const py::object& checkpoints) {
  Functions functions = own_functions();
  if (!chunks.is_none()) {
    functions.chunks = [chunks](const ChunksInput& in) {
      return answered<ChunksOutput>([&] {
        const py::object offsets = in.checkpoint_offsets.empty() ? py::object(py::none()) : py::cast(in.checkpoint_offsets);
        const auto out = outputs(chunks(in.chunk_size, in.num_computed_tokens, in.query_start_loc, offsets),
                                 in.checkpoint_offsets.empty() ? 3 : 4, "chunks");
        ChunksOutput output{ints<std::int32_t>(out[0]), ints<std::int32_t>(out[1]), ints<std::int32_t>(out[2]), {}};
        if (!in.checkpoint_offsets.empty()) output.checkpoint_chunk_indices = ints<std::int32_t>(out[3]);
        return output;
      });
    };
  }
  if (!plan.is_none()) {
    functions.plan = [plan](const PlanInput& in) {
      return answered<PlanOutput>([&] {
        const auto out = outputs(plan(in.chunk_size, in.block_size, in.num_computed_tokens, in.query_start_loc), 6, "plan");
        return PlanOutput{ints<std::int32_t>(out[0]), ints<std::int32_t>(out[1]), ints<std::int32_t>(out[2]),
                          ints<std::int32_t>(out[3]), ints<std::int32_t>(out[4]), ints<std::int32_t>(out[5])};
      });
    };
  }
  if (!checkpoints.is_none()) {
    functions.checkpoints = [checkpoints](const CheckpointsInput& in) {
      return answered<CheckpointsOutput>([&] {
        const auto out = outputs(checkpoints(in.seq_lens, in.query_lens, in.hash_block_size, in.mamba_block_size,
                                             in.checkpoint_alignment, in.drop_eagle_block),
                                 2, "checkpoints");
        return CheckpointsOutput{ints<std::int32_t>(out[0]), ints<std::int64_t>(out[1])};
      });
    };
  }
  return functions;
}

py::dict fault_dict(const Fault& fault) {
  py::dict d;
  d["step"] = fault.step;
  d["function"] = fault.function;
  d["rule"] = fault.fault.rule;
  d["what"] = fault.fault.what;
  d["rows"] = fault.rows;
  d["inputs"] = fault.inputs;
  d["text"] = to_string(fault);
  return d;
}

}  // namespace

void add_steps(py::module_& m) {
  m.attr("_STEPS_LARGEST_SIZE") = kLargestSize;
  m.def(
      "_check_steps",
      [](py::object chunks, py::object plan, py::object checkpoints, const std::string& mode, std::int64_t lives,
         std::uint64_t seed, std::optional<std::int64_t> chunk_size, std::optional<std::int64_t> block_size,
         const std::string& functions_named, const std::string& reproduce, std::int64_t max_requests,
         std::int64_t max_steps) {
        DrawOptions options;
        options.mode = mode == "align" ? Mode::align : Mode::all;
        options.chunk_size = chunk_size;
        options.block_size = block_size;
        options.max_requests = max_requests;
        options.max_steps = max_steps;
        const auto started = std::chrono::steady_clock::now();
        const CheckResult result = check(functions_of(chunks, plan, checkpoints), lives, seed, options);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        py::dict out;
        out["text"] = report(result, options.mode, functions_named, seconds, reproduce);
        out["seconds"] = seconds;
        out["lives"] = result.lives;
        out["steps"] = result.tally.steps;
        out["resumed_reads"] = result.tally.resumed_reads;
        out["writes"] = result.tally.writes;
        out["checkpoints"] = result.tally.checkpoints;
        out["seed"] = result.seed;
        if (result.minimal) {
          out["minimal"] = to_json(result.minimal->life);
          out["fault"] = fault_dict(result.minimal->fault);
        }
        return out;
      },
      py::arg("chunks"), py::arg("plan"), py::arg("checkpoints"), py::arg("mode"), py::arg("lives"), py::arg("seed"),
      py::arg("chunk_size"), py::arg("block_size"), py::arg("functions_named"), py::arg("reproduce"),
      py::arg("max_requests") = 4, py::arg("max_steps") = 5);
}

}  // namespace chunkmeta::python
