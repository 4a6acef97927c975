// chunkmeta.check_steps: requests' lives through the engine's functions (steps/),
// any of them a Python callable. Each callable goes through check()'s door
// (door.hpp) as an implementation of its function's spec, and through the
// steps' bridge by input and output names (steps/through_implementations.hpp),
// as the CLI's `chunkmeta steps` sends `cmd:` and `plugin:` implementations:
// the engine's signatures and arrays, timeouts, and what a function raises,
// returns wrongly or changes in its inputs as that function's fault.
#include <pybind11/stl.h>

#include <chrono>
#include <optional>

#include "chunkmeta/harness/spec.hpp"
#include "chunkmeta/steps/steps.hpp"
#include "chunkmeta/steps/through_implementations.hpp"
#include "door.hpp"
#include "module.hpp"

namespace chunkmeta::python {
namespace {

using namespace chunkmeta::steps;

// The callables given, each through check()'s door as an implementation of its function's spec.
struct StepFunctions {
  std::optional<PythonFunction> chunks, plan, checkpoints;

  bool interrupted() const {
    for (const auto* f : {&chunks, &plan, &checkpoints}) {
      if (*f && (*f)->interrupted()) return true;
    }
    return false;
  }
  Functions functions() const {
    const auto of = [](const std::optional<PythonFunction>& f) { return f ? &f->implementation : nullptr; };
    return functions_of(Implementations{of(chunks), of(plan), of(checkpoints)});
  }
};

std::optional<PythonFunction> through_the_door(const py::object& fn, const char* name, std::string_view spec,
                                               const std::string& arrays, double timeout, const py::object& alarm) {
  if (fn.is_none()) return std::nullopt;
  return python_function(fn, std::string("python:") + name, *harness::find_spec(spec), arrays, timeout, alarm);
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
         const std::string& arrays, double timeout, py::object alarm, const std::string& functions_named,
         const std::string& reproduce, std::int64_t max_requests, std::int64_t max_steps) {
        DrawOptions options;
        options.mode = mode == "align" ? Mode::align : Mode::all;
        const StepFunctions given{through_the_door(chunks, "chunks", chunks_spec(options.mode), arrays, timeout, alarm),
                                  through_the_door(plan, "plan", kPlanSpec, arrays, timeout, alarm),
                                  through_the_door(checkpoints, "checkpoints", kCheckpointsSpec, arrays, timeout, alarm)};
        options.chunk_size = chunk_size;
        options.block_size = block_size;
        options.max_requests = max_requests;
        options.max_steps = max_steps;
        const auto started = std::chrono::steady_clock::now();
        const CheckResult result = check(given.functions(), lives, seed, options, [&given] { return given.interrupted(); });
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        if (given.interrupted()) {
          // After Ctrl-C every call was answered by the reference: nothing it passed was judged.
          PyErr_SetNone(PyExc_KeyboardInterrupt);
          throw py::error_already_set();
        }
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
      py::arg("chunk_size"), py::arg("block_size"), py::arg("arrays"), py::arg("timeout"), py::arg("alarm"),
      py::arg("functions_named"), py::arg("reproduce"),
      py::arg("max_requests") = 4, py::arg("max_steps") = 5);
}

}  // namespace chunkmeta::python
