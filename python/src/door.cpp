// check() and replay() in this process: a Python callable with an engine's
// signature as a harness Implementation of its spec, run by the engine.
//   Mamba:  fn(chunk_size, num_prefills, num_computed_tokens, query_start_loc)
//           -> (cu_chunk_seqlen, seq_idx, last_chunk_indices)
//   FLA:    fn(cu_seqlens, chunk_size) -> chunk_indices (N, 2) or chunk_offsets (B + 1)
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "chunkmeta/engine/check.hpp"
#include "chunkmeta/harness/call_budget.hpp"
#include "chunkmeta/harness/corpus.hpp"
#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/properties/generators.hpp"
#include "chunkmeta/properties/tables.hpp"
#include "module.hpp"

namespace chunkmeta::python {
namespace {

using harness::Answer;
using harness::FindingKind;
using harness::Implementation;
using harness::Misbehaviour;
using harness::Outcome;
using harness::Spec;
using harness::Workload;

const Spec& spec_named(const std::string& name) {
  const Spec* spec = harness::find_spec(name);
  if (spec == nullptr) throw py::value_error("unknown spec '" + name + "' (the specs: " + harness::spec_names() + ")");
  return *spec;
}

// chunkmeta._ShrinkTimeout, which check()'s SIGALRM handler raises (from __init__.py).
py::object* shrink_timeout_type = nullptr;

// A raised exception that names a rule (code, field, index, like
// chunkmeta.InvalidWorkload) is a rejection; anything else is a finding.
Answer answer_for_exception(py::error_already_set& raised) {
  const py::object error = raised.value();
  if (py::hasattr(error, "code") && py::hasattr(error, "field") && py::hasattr(error, "index")) {
    const auto code = parse_error_code(py::str(error.attr("code")).cast<std::string>());
    const auto field = harness::known_field(py::str(error.attr("field")).cast<std::string>());
    const py::object index = error.attr("index");
    if (code && field && (index.is_none() || PyLong_Check(index.ptr()))) {
      return Outcome(Error{*code, *field, index.is_none() ? Error::kNoIndex : index.cast<std::int64_t>(), 0, 0});
    }
  }
  const std::string type = py::str(error.get_type().attr("__name__"));
  const std::string message = py::str(error);
  std::string traceback;
  try {
    const py::object trace = raised.trace() ? py::reinterpret_borrow<py::object>(raised.trace()) : py::none();
    const py::object lines = py::module_::import("traceback").attr("format_exception")(raised.type(), error, trace);
    traceback = py::str("").attr("join")(lines).cast<std::string>();
  } catch (std::exception&) {
    traceback = type + ": " + message;
  }
  return Misbehaviour{FindingKind::raised, "raised " + type + ": " + message, traceback};
}

Misbehaviour malformed(py::handle result, std::string summary) {
  return Misbehaviour{FindingKind::malformed_output, std::move(summary),
                      py::repr(result).cast<std::string>().substr(0, 400)};
}

// The one output array of an FLA spec: its shape, and the dtype the SPEC gives
// it (cu_seqlens' for chunk_indices, int64 for chunk_offsets) for an array.
Answer fla_answer(const Spec& spec, py::handle result, const Workload& w) {
  const auto& output = spec.outputs()[0];
  const std::string name(output.name);
  std::string why;
  std::string dtype;
  auto values = read_output(result, name.c_str(), &why, output.columns, &dtype);
  if (!values) return malformed(result, "returned " + why);
  const std::string wanted = output.columns == 2 ? std::string(harness::to_string(w.dtype)) : "int64";
  if (!dtype.empty() && dtype != wanted) {
    return malformed(result, "returned " + name + " of dtype " + dtype + "; the SPEC gives " + wanted +
                                 (output.columns == 2 ? " (cu_seqlens' dtype)" : " (whatever cu_seqlens' dtype)"));
  }
  harness::Arrays arrays;
  arrays.push_back(std::move(*values));
  return Outcome(std::move(arrays));
}

Answer mamba_answer(py::handle result) {
  if (!PyTuple_Check(result.ptr()) && !PyList_Check(result.ptr())) {
    return malformed(result, "returned " + std::string(Py_TYPE(result.ptr())->tp_name) + " instead of three sequences");
  }
  if (py::len(result) != 3)
    return malformed(result, "returned " + std::to_string(py::len(result)) + " values instead of three");
  harness::Arrays arrays;
  const char* names[3] = {"cu_chunk_seqlen", "seq_idx", "last_chunk_indices"};
  for (int i = 0; i < 3; ++i) {
    std::string why;
    std::string dtype;
    auto values = read_output(result[py::int_(i)], names[i], &why, 1, &dtype);
    if (!values) return malformed(result, "returned " + why);
    // The engine uploads the three arrays as int32: an array of another dtype is not what the kernels read.
    if (!dtype.empty() && dtype != "int32")
      return malformed(result, "returned " + std::string(names[i]) + " of dtype " + dtype + "; the SPEC gives int32");
    arrays.push_back(std::move(*values));
  }
  return Outcome(std::move(arrays));
}

// What a Python implementation shares with the run: Ctrl-C, and the time its
// answers take. check() installs a SIGALRM handler that raises
// chunkmeta._Timeout (in the main thread: elsewhere no alarm is set); how long
// a call may take is the harness's one policy (harness/call_budget.hpp).
struct CallState {
  bool interrupted = false;
  bool alarm = false;       // check()'s alarm is installed
  py::object arm_alarm;     // check()'s arm(seconds): 0 disarms (and gives the caller's own timer back)
  harness::CallBudget budget;
  long long calls = 0;

  void arm(double seconds) const { arm_alarm(seconds); }
};

// fn called with the workload's arguments; the alarm cuts it short.
Answer call(const py::object& fn, const Spec& spec, ArrayKind kind, const Workload& w, CallState& state) {
  const bool mamba = spec.reads_computed_tokens();
  const double units = harness::CallBudget::units_of(spec, w);
  const double budget = state.alarm ? state.budget.limit(units) : 0;
  const auto start = std::chrono::steady_clock::now();
  try {
    // The arguments are made before the alarm is armed: only fn itself is ever cut short.
    const py::tuple arguments =
        mamba ? py::make_tuple(w.chunk_size, w.rows(), make_array(kind, w.num_computed_tokens),
                               make_array(kind, w.query_start_loc))
              : py::make_tuple(make_array(kind, w.query_start_loc,
                                          w.dtype == harness::Dtype::int64 ? IntType::int64 : IntType::int32),
                               w.chunk_size);
    if (budget > 0) state.arm(budget);
    const py::object result = fn(*arguments);
    if (budget > 0) state.arm(0);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (++state.calls > 1) state.budget.measured(units, took);  // the first call pays the lazy set-up
    return mamba ? mamba_answer(result) : fla_answer(spec, result, w);
  } catch (py::error_already_set& raised) {
    if (budget > 0) {
      try {
        state.arm(0);
      } catch (py::error_already_set&) {  // the alarm's own exception, arriving late
      }
    }
    if (budget > 0 && shrink_timeout_type != nullptr && raised.matches(*shrink_timeout_type)) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%.3f", budget);
      const std::string why(state.budget.why_adapted(units));
      state.budget.cut_short();
      Misbehaviour hang{FindingKind::timed_out, std::string("gave no answer within ") + seconds + " s" + why + "; cut short",
                        ""};
      hang.limit_seconds = budget;
      return hang;
    }
    if (raised.matches(PyExc_KeyboardInterrupt)) {
      state.interrupted = true;
      return spec.reference(w);
    }
    return answer_for_exception(raised);
  }
}

struct PythonImplementation {
  Implementation implementation;
  std::shared_ptr<CallState> state = std::make_shared<CallState>();
};

// Calls fn with the GIL held (check() never releases it). After Ctrl-C the
// suite stops (stop_requested) and any workload still asked for is answered by
// the reference; check() then raises KeyboardInterrupt.
PythonImplementation python_implementation(py::object fn, std::string name, const Spec& spec, ArrayKind kind,
                                           bool valid_only, double timeout, py::object alarm) {
  PythonImplementation out;
  auto state = out.state;
  state->budget = harness::CallBudget(timeout);
  state->alarm = !alarm.is_none() && shrink_timeout_type != nullptr;
  state->arm_alarm = std::move(alarm);
  out.implementation = harness::in_process(
      std::move(name), "a Python function, called in this process", spec,
      [fn = std::move(fn), &spec, kind, state](const Workload& w) -> Answer {
        if (state->interrupted) return spec.reference(w);
        // The engine's int32 tensors cannot hold such a workload: its conversion would fail first.
        const bool int32_arrays = spec.reads_computed_tokens() || w.dtype == harness::Dtype::int32;
        if (kind != ArrayKind::lists && int32_arrays && !harness::fits_int32(w)) return Outcome(*spec.validate(w));
        Answer answer = call(fn, spec, kind, w, *state);
        if (PyErr_CheckSignals() != 0) {
          PyErr_Clear();
          state->interrupted = true;
        }
        return answer;
      });
  out.implementation.rejects_invalid_input = !valid_only;
  out.implementation.shrinking = [state](bool shrinking) { state->budget.set_shrinking(shrinking); };
  out.implementation.confirm = [state, &spec, compute = out.implementation.compute](const Workload& w,
                                                                                     double expired) {
    return state->budget.confirming(expired, harness::CallBudget::units_of(spec, w), [&] { return compute(w); });
  };
  return out;
}

py::dict counterexample_dict(const harness::Counterexample& cx, const std::optional<harness::WrittenFiles>& files) {
  const Spec& spec = cx.spec != nullptr ? *cx.spec : harness::mamba_spec();
  py::dict d;
  d["property"] = cx.property;
  d["workload"] = harness::dump_line(harness::to_json(spec, cx.workload));
  d["finding"] = std::string(harness::to_string(cx.finding.kind));
  d["summary"] = cx.finding.summary;
  d["status"] = cx.status;
  d["actual"] = cx.finding.actual ? py::object(py::str(harness::outcome_for_report(spec, *cx.finding.actual).dump()))
                                  : py::none();
  d["report"] = harness::render(cx, files);
  d["report_file"] = files ? py::object(py::str(files->report.string())) : py::none();
  d["corpus_file"] = files && !files->corpus_entry.empty() ? py::object(py::str(files->corpus_entry.string())) : py::none();
  return d;
}

void write_out(const std::string& text) { py::module_::import("sys").attr("stdout").attr("write")(text); }

const engine::Property* find_property(const engine::PropertyTable& table, const std::string& name) {
  for (const auto& property : table.properties) {
    if (property.name == name) return &property;
  }
  return nullptr;
}

py::dict run_check(py::object fn, const std::string& spec_name, const std::string& name, int cases,
                   int min_cases, std::optional<std::uint64_t> seed, bool valid_only, double time_budget,
                   std::optional<std::filesystem::path> report_dir, const std::string& arrays,
                   std::vector<std::filesystem::path> corpus, bool fail_fast, bool keep_going,
                   std::vector<std::string> only, std::vector<std::string> exclude, bool generate, bool shrink,
                   double timeout, py::object alarm, const std::string& rerun_command, bool verbose) {
  const Spec& spec = spec_named(spec_name);
  const engine::PropertyTable& table = properties::table_of(spec);
  for (const auto& property : only) {
    if (find_property(table, property) == nullptr)
      throw py::value_error("unknown property '" + property + "' of spec " + spec_name);
  }
  if (auto unknown = table.unknown_edge_class(exclude)) {
    throw py::value_error("exclude: '" + *unknown + "' is not an edge class of " + spec_name + "; its edge classes: " +
                          table.edge_class_names());
  }
  auto python =
      python_implementation(std::move(fn), name, spec, array_kind(arrays), valid_only, timeout, std::move(alarm));
  engine::CheckOptions options;
  options.corpus = std::move(corpus);
  options.suite.cases = cases;
  options.suite.seed = seed;
  options.suite.time_budget_seconds = time_budget;
  options.suite.min_cases = min_cases;
  if (report_dir) options.suite.report_dir = *report_dir;
  options.suite.only = std::move(only);
  options.suite.excluded_classes = std::move(exclude);
  options.suite.include_library = false;
  options.suite.stop_at_first_failure = fail_fast;
  options.suite.shrink = shrink;
  options.properties_after_replay_failure = keep_going;
  options.suite.distinct_bugs = keep_going;
  options.suite.rerun_command = rerun_command;
  options.suite.stop_requested = [state = python.state] { return state->interrupted; };
  if (verbose) options.progress = [](std::string_view what) { write_out(std::string(what)); };
  options.generate = generate;
  // Two calls on a one-row workload first: the first pays the function's lazy
  // set-up, the second says what a small workload costs (the time budgets' measure).
  for (int i = 0; i < 2 && !python.state->interrupted; ++i) (void)python.implementation.compute(Workload{1, {0}, {0, 0}});
  const auto result = engine::check(table, {python.implementation}, options);

  py::dict summary;
  summary["passed"] = result.passed();
  summary["text"] = result.text;
  summary["verdict"] = result.verdict();
  py::list replay_failures;
  for (const auto& cx : result.replay.failures) {
    py::dict d = counterexample_dict(cx, std::nullopt);
    replay_failures.append(d);
  }
  summary["replayed_files"] = result.replay.files;
  summary["replay_failures"] = replay_failures;
  py::list shrunk;
  for (const auto& reported : result.replay.reported)
    shrunk.append(counterexample_dict(reported.counterexample, reported.files));
  summary["replay_shrunk"] = shrunk;
  // No suite when the corpus replay already failed (its properties are then not run).
  const engine::SuiteResult none;
  const auto& suite = result.suites.empty() ? none : result.suites.front();
  py::list property_results;
  for (const auto& p : suite.properties) {
    py::dict d;
    d["name"] = p.property;
    d["passed"] = p.passed;
    d["skipped"] = p.skipped;
    d["cases"] = p.cases;
    d["seconds"] = p.seconds;
    d["calls"] = p.implementation_calls;
    d["seed"] = p.seed;
    d["message"] = p.message;
    d["duplicate_of"] = p.duplicate_of;
    d["planned"] = p.planned;
    d["complete"] = p.complete();
    d["not_run"] = p.not_run;
    d["stopped"] = p.stopped;
    d["counterexample"] = p.counterexample ? py::object(counterexample_dict(*p.counterexample, p.files)) : py::none();
    property_results.append(d);
  }
  summary["properties"] = property_results;
  summary["cases"] = suite.cases();
  summary["seconds"] = suite.seconds();
  summary["seed"] = py::int_(engine::seed_of(options.suite));
  if (python.state->interrupted) {
    // Say what was found before stopping as Python asked.
    write_out(result.text + "Interrupted: the run stopped early; any report above is the smallest case found so far.\n");
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  return summary;
}

py::dict run_replay(py::object fn, const std::string& spec_name, const std::string& name,
                    std::vector<std::filesystem::path> paths, const std::string& arrays, bool valid_only) {
  const Spec& spec = spec_named(spec_name);
  auto python = python_implementation(std::move(fn), name, spec, array_kind(arrays), valid_only, 0, py::none());
  const auto replayed = engine::replay_corpus({python.implementation}, paths);
  py::dict summary;
  summary["passed"] = replayed.passed();
  summary["files"] = replayed.files;
  summary["text"] = replayed.text;
  py::list failures;
  for (const auto& cx : replayed.failures) failures.append(counterexample_dict(cx, std::nullopt));
  summary["failures"] = failures;
  return summary;
}

// The spec a corpus entry or report file is of, or None when it is not one.
py::object spec_of_file(const std::filesystem::path& file) {
  auto loaded = harness::load_corpus_entry(file);
  if (std::holds_alternative<std::string>(loaded)) return py::none();
  return py::str(std::string(std::get<harness::CorpusEntry>(loaded).spec->name()));
}

// The edge classes chunkmeta's own generators promise, and those a workload
// hits (to test that chunkmeta.strategies draws the same ones).
std::vector<std::string> edge_classes_of(const std::string& spec, std::int64_t chunk_size,
                                         std::vector<std::int64_t> computed, std::vector<std::int64_t> offsets,
                                         const std::string& dtype) {
  const bool mamba = spec_named(spec).reads_computed_tokens();
  Workload w{chunk_size, std::move(computed), std::move(offsets),
             dtype == "int64" ? harness::Dtype::int64 : harness::Dtype::int32};
  if (!mamba) w.num_computed_tokens.assign(w.query_start_loc.empty() ? 0 : w.query_start_loc.size() - 1, 0);
  return mamba ? properties::edge_classes(w) : properties::fla_edge_classes(w);
}

std::vector<std::string> all_edge_classes_of(const std::string& spec) {
  return properties::table_of(spec_named(spec)).classes.front().names;
}

}  // namespace

void add_door(py::module_& m) {
  m.def("_edge_classes", &edge_classes_of, py::arg("spec"), py::arg("chunk_size"), py::arg("computed"),
        py::arg("offsets"), py::arg("dtype"));
  m.def("_all_edge_classes", &all_edge_classes_of, py::arg("spec"));
  m.def("_set_timeout_type", [](py::object type) {
    shrink_timeout_type = new py::object(std::move(type));  // kept for the life of the process
  });
  m.def("_check", &run_check, py::arg("fn"), py::arg("spec"), py::arg("name"), py::arg("cases"), py::arg("min_cases"),
        py::arg("seed"),
        py::arg("valid_only"), py::arg("time_budget"), py::arg("report_dir"), py::arg("arrays"), py::arg("corpus"),
        py::arg("fail_fast"), py::arg("keep_going"), py::arg("properties"), py::arg("exclude"), py::arg("generate"),
        py::arg("shrink"),
        py::arg("timeout"), py::arg("alarm"), py::arg("rerun_command"), py::arg("verbose"));
  m.def("_replay", &run_replay, py::arg("fn"), py::arg("spec"), py::arg("name"), py::arg("paths"), py::arg("arrays"),
        py::arg("valid_only"));
  m.def("_spec_of_file", &spec_of_file, py::arg("file"));
  m.def("_specs", [] {
    std::vector<std::string> names;
    for (const Spec* spec : harness::all_specs()) names.emplace_back(spec->name());
    return names;
  });
  m.def(
      "_properties",
      [](const std::string& spec) {
        std::vector<std::string> names;
        for (const auto& p : properties::table_of(spec_named(spec)).properties) {
          if (p.scope == engine::Scope::implementation) names.push_back(p.name);
        }
        return names;
      },
      py::arg("spec"));
}

}  // namespace chunkmeta::python
