// The `chunkmeta` Python extension: the fast implementation with the engine's
// signature and types, and the property suite run in this process against a
// Python callable. `chunkmeta/__init__.py` wraps `_check` and `_replay`.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "chunkmeta/harness/implementations.hpp"
#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/properties/check.hpp"

namespace chunkmeta::python {
namespace {

using harness::Answer;
using harness::Implementation;
using harness::Misbehaviour;
using harness::Outcome;

// chunkmeta.InvalidWorkload, defined in __init__.py and handed over at import.
// Never destroyed: it must outlive the interpreter's module teardown.
py::object* invalid_workload_type = nullptr;

[[noreturn]] void raise_invalid(const std::string& message, std::string_view code, std::string_view field,
                                std::int64_t index, std::string_view kind) {
  py::object index_value = index == Error::kNoIndex ? py::object(py::none()) : py::object(py::int_(index));
  py::object error = (*invalid_workload_type)(message, py::str(code.data(), code.size()),
                                              py::str(field.data(), field.size()), index_value,
                                              py::str(kind.data(), kind.size()));
  PyErr_SetObject(invalid_workload_type->ptr(), error.ptr());
  throw py::error_already_set();
}

[[noreturn]] void raise_invalid(const Error& error) {
  raise_invalid(error.message(), to_string(error.code), error.field, error.index,
                kind_of(error.code) == ErrorKind::invalid_input ? "invalid_input" : "resource_limit");
}

// Below this many rows + chunks the computation takes well under a microsecond,
// less than handing the GIL over and back; above it, other threads run meanwhile.
constexpr std::int64_t kReleaseGilAbove = 4096;

template <typename Int>
Result<OutputSizes> write_outputs(const BasicWorkloadView<Int>& view, const OutputBuffers& out) {
  if (static_cast<std::int64_t>(out.seq_idx.size() + out.last_chunk_indices.size()) > kReleaseGilAbove) {
    py::gil_scoped_release unlocked;
    return fast_into(view, out);
  }
  return fast_into(view, out);
}

// Chunks of a well-shaped workload are at most tokens/C + 2B (a head and a
// partial tail per row), at most 2B + 1 above the exact count. Allocating
// that lets one fast_into pass validate, count and write; -1 when the shape
// is wrong or the bound is large enough that exact sizing is worth a pass.
template <typename Int>
std::int64_t chunk_bound(const BasicWorkloadView<Int>& view) {
  constexpr std::int64_t kLargest = std::int64_t{1} << 20;
  const auto& q = view.query_start_loc;
  const auto rows = static_cast<std::int64_t>(view.num_computed_tokens.size());
  if (view.chunk_size < 1 || q.size() != view.num_computed_tokens.size() + 1 || q.back() < q.front()) return -1;
  const std::int64_t tokens = static_cast<std::int64_t>(q.back()) - static_cast<std::int64_t>(q.front());
  if (tokens > kMaxValue || rows > kLargest) return -1;
  const std::int64_t bound = tokens / view.chunk_size + 2 * rows;
  return bound <= kLargest ? bound : -1;
}

template <typename Int>
py::object compute_view(const BasicWorkloadView<Int>& view, ArrayKind kind) {
  const auto rows = static_cast<std::int64_t>(view.num_computed_tokens.size());
  const auto write = [&view](const Results& results) {
    return write_outputs(view, {results.array<std::int32_t>(0), results.array<std::int32_t>(1),
                                results.array<std::int32_t>(2)});
  };
  if (const std::int64_t bound = chunk_bound(view); bound >= 0) {
    Results results(kind, IntType::int32, {bound + 1, bound, rows});
    const auto written = write(results);
    if (written.ok()) {
      const auto& n = written.value();
      return results.finish({n.cu_chunk_seqlen, n.seq_idx, n.last_chunk_indices});
    }
    if (written.error().code != ErrorCode::output_buffer_too_small) raise_invalid(written.error());
  }
  // Exact sizes first (a validating pass), then one write.
  const auto sizes = output_sizes(view);
  if (!sizes.ok()) raise_invalid(sizes.error());
  const auto& n = sizes.value();
  Results results(kind, IntType::int32, {n.cu_chunk_seqlen, n.seq_idx, n.last_chunk_indices});
  const auto written = write(results);
  if (!written.ok()) raise_invalid(written.error());
  return results.finish({n.cu_chunk_seqlen, n.seq_idx, n.last_chunk_indices});
}

// out=(cu_chunk_seqlen, seq_idx, last_chunk_indices): the caller's int32
// buffers, written in place; the three lengths written are returned.
template <typename Int>
py::object compute_into(const BasicWorkloadView<Int>& view, py::handle out) {
  if (!(PyTuple_Check(out.ptr()) || PyList_Check(out.ptr())) || py::len(out) != 3) {
    throw py::type_error("out must be a tuple of three int32 buffers (cu_chunk_seqlen, seq_idx, last_chunk_indices), not " +
                         std::string(Py_TYPE(out.ptr())->tp_name));
  }
  PyObject** buffers = PySequence_Fast_ITEMS(out.ptr());  // a tuple or a list
  const OutBuffer cu(buffers[0], "out[0] (cu_chunk_seqlen)", IntType::int32);
  const OutBuffer seq(buffers[1], "out[1] (seq_idx)", IntType::int32);
  const OutBuffer last(buffers[2], "out[2] (last_chunk_indices)", IntType::int32);
  const auto written = write_outputs(view, {cu.entries<std::int32_t>(), seq.entries<std::int32_t>(),
                                            last.entries<std::int32_t>()});
  if (!written.ok()) raise_invalid(written.error());
  const auto& n = written.value();
  PyObject* lengths = Py_BuildValue("(LLL)", static_cast<long long>(n.cu_chunk_seqlen), static_cast<long long>(n.seq_idx),
                                    static_cast<long long>(n.last_chunk_indices));
  if (lengths == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(lengths);
}

py::object compute_chunk_metadata(py::handle chunk_size, py::handle num_prefills, py::handle num_computed_tokens,
                                  py::handle query_start_loc, py::handle out) {
  const std::int64_t c = to_int64(chunk_size, "chunk_size");
  const std::int64_t rows = to_int64(num_prefills, "num_prefills");
  const InputArray computed(num_computed_tokens, "num_computed_tokens_p_cpu");
  const InputArray starts(query_start_loc, "query_start_loc_p_cpu");
  if (rows != static_cast<std::int64_t>(computed.size())) {
    raise_invalid("num_prefills is " + std::to_string(rows) + " but num_computed_tokens_p_cpu has " +
                      std::to_string(computed.size()) + " entries; they must agree",
                  "length_mismatch", "num_prefills", Error::kNoIndex, "invalid_input");
  }
  const ArrayKind kind = kind_of_results({computed.kind(), starts.kind()});
  if (!computed.copied() && !starts.copied()) {
    const WorkloadView32 view{c, computed.int32(), starts.int32()};
    return out.is_none() ? compute_view(view, kind) : compute_into(view, out);
  }
  const auto wide_computed = computed.widened();
  const auto wide_starts = starts.widened();
  const WorkloadView view{c, wide_computed, wide_starts};
  return out.is_none() ? compute_view(view, kind) : compute_into(view, out);
}

// The engine calls this once per prefill step, so it is a plain METH_FASTCALL
// function: pybind11's general dispatcher would cost more than the computation.
constexpr const char* kComputeArguments[] = {"chunk_size", "num_prefills", "num_computed_tokens_p_cpu",
                                             "query_start_loc_p_cpu", "out"};
constexpr int kPositionalArguments = 4;  // out is keyword-only

PyObject* compute_chunk_metadata_fastcall(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* given[5] = {nullptr, nullptr, nullptr, nullptr, nullptr};
  try {
    if (nargs > kPositionalArguments)
      throw py::type_error("compute_chunk_metadata() takes 4 positional arguments (" + std::to_string(nargs) + " given)");
    for (Py_ssize_t i = 0; i < nargs; ++i) given[i] = args[i];
    const Py_ssize_t keywords = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < keywords; ++k) {
      PyObject* name = PyTuple_GET_ITEM(kwnames, k);
      int slot = -1;
      for (int i = 0; i < 5 && slot < 0; ++i) {
        if (PyUnicode_CompareWithASCIIString(name, kComputeArguments[i]) == 0) slot = i;
      }
      if (slot < 0 || given[slot] != nullptr) {
        const std::string spelled = py::str(name);
        throw py::type_error(slot < 0 ? "compute_chunk_metadata() got an unexpected keyword argument '" + spelled + "'"
                                      : "compute_chunk_metadata() got multiple values for '" + spelled + "'");
      }
      given[slot] = args[nargs + k];
    }
    for (int i = 0; i < kPositionalArguments; ++i) {
      if (given[i] == nullptr) {
        throw py::type_error(std::string("compute_chunk_metadata() missing argument '") + kComputeArguments[i] + "'");
      }
    }
    const py::handle out = given[4] != nullptr ? py::handle(given[4]) : py::handle(Py_None);
    return compute_chunk_metadata(given[0], given[1], given[2], given[3], out).release().ptr();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (py::builtin_exception& e) {
    e.set_error();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

const char* const kComputeDoc = R"doc(compute_chunk_metadata(chunk_size, num_prefills, num_computed_tokens_p_cpu, query_start_loc_p_cpu, *, out=None)

The engine's chunk metadata, computed by chunkmeta's fast implementation.

Inputs: chunk_size and num_prefills are ints; the arrays are int32 CPU tensors
(read in place, no copy), int32 numpy arrays or other buffers (read in place),
or lists or tuples of ints. A tensor or array of another dtype, device, shape or
layout, or any other object (a dict, a generator), raises TypeError; nothing is
converted silently.

Returns (cu_chunk_seqlen, seq_idx, last_chunk_indices) of exactly K+1, K and
num_prefills int32 entries, of the inputs' kind: CPU tensors for tensor inputs,
numpy arrays for arrays, lists for lists. With out=(cu, seq, last), writable
int32 tensors or arrays (views of the engine's persistent buffers), the results
are written into them instead and the three lengths are returned; a buffer
too small raises InvalidWorkload (output_buffer_too_small) naming it and the
size needed. max_output_sizes() sizes them once from the engine's limits.
The GIL is released while large workloads are computed.

Raises chunkmeta.InvalidWorkload (a ValueError) with the code, field and index
of the broken rule, or output_too_large above the library's cap of 2**26 chunks.)doc";

PyMethodDef compute_method[] = {
    {"compute_chunk_metadata", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&compute_chunk_metadata_fastcall)),
     METH_FASTCALL | METH_KEYWORDS, kComputeDoc},
    {nullptr, nullptr, 0, nullptr}};

// --- check() and replay(): a Python callable as a harness Implementation. ---

// Field names an exception may carry back as a rejection (Error keeps a view).
std::optional<std::string_view> known_field(const std::string& field) {
  for (std::string_view known : {"chunk_size", "num_computed_tokens", "query_start_loc", "cu_chunk_seqlen", "seq_idx",
                                  "last_chunk_indices"}) {
    if (field == known) return known;
  }
  return std::nullopt;
}

// A raised exception that names a rule (code, field, index, like
// chunkmeta.InvalidWorkload) is a rejection; anything else is a finding.
Answer answer_for_exception(py::error_already_set& raised) {
  const py::object error = raised.value();
  if (py::hasattr(error, "code") && py::hasattr(error, "field") && py::hasattr(error, "index")) {
    const auto code = parse_error_code(py::str(error.attr("code")).cast<std::string>());
    const auto field = known_field(py::str(error.attr("field")).cast<std::string>());
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
  return Misbehaviour{harness::FindingKind::raised, "raised " + type + ": " + message, traceback};
}

Answer answer_for_result(py::handle result) {
  const auto malformed = [&result](std::string summary) {
    return Misbehaviour{harness::FindingKind::malformed_output, std::move(summary),
                        py::repr(result).cast<std::string>().substr(0, 400)};
  };
  if (!PyTuple_Check(result.ptr()) && !PyList_Check(result.ptr())) {
    return malformed("returned " + std::string(Py_TYPE(result.ptr())->tp_name) + " instead of three sequences");
  }
  if (py::len(result) != 3) return malformed("returned " + std::to_string(py::len(result)) + " values instead of three");
  ChunkMetadata out;
  Int32Array* targets[3] = {&out.cu_chunk_seqlen, &out.seq_idx, &out.last_chunk_indices};
  const char* names[3] = {"cu_chunk_seqlen", "seq_idx", "last_chunk_indices"};
  for (int i = 0; i < 3; ++i) {
    std::string why;
    auto values = read_output(result[py::int_(i)], names[i], &why);
    if (!values) return malformed("returned " + why);
    *targets[i] = std::move(*values);
  }
  return Outcome(std::move(out));
}

struct PythonImplementation {
  Implementation implementation;
  std::shared_ptr<bool> interrupted = std::make_shared<bool>(false);
};

// Calls fn(chunk_size, num_prefills, computed, starts) with the GIL held (check()
// never releases it). After Ctrl-C the suite stops (stop_requested) and any
// workload still asked for is answered by the reference; check() then raises
// KeyboardInterrupt.
PythonImplementation python_implementation(py::object fn, std::string name, ArrayKind kind, bool valid_only) {
  PythonImplementation out;
  auto interrupted = out.interrupted;
  out.implementation = harness::in_process(
      std::move(name), "a Python function, called in this process",
      [fn = std::move(fn), kind, interrupted](const Workload& w) -> Answer {
        if (*interrupted) return reference(w);
        if (kind != ArrayKind::lists && !harness::fits_int32(w)) return Outcome(*validate(w));
        Answer answer = Misbehaviour{};
        try {
          const py::object result = fn(w.chunk_size, w.num_computed_tokens.size(), make_array(kind, w.num_computed_tokens),
                                       make_array(kind, w.query_start_loc));
          answer = answer_for_result(result);
        } catch (py::error_already_set& raised) {
          if (raised.matches(PyExc_KeyboardInterrupt)) {
            *interrupted = true;
            return reference(w);
          }
          answer = answer_for_exception(raised);
        }
        if (PyErr_CheckSignals() != 0) {
          PyErr_Clear();
          *interrupted = true;
        }
        return answer;
      });
  out.implementation.rejects_invalid_input = !valid_only;
  return out;
}

py::dict counterexample_dict(const harness::Counterexample& cx, const std::optional<harness::WrittenFiles>& files) {
  py::dict d;
  d["property"] = cx.property;
  d["workload"] = harness::dump_line(harness::to_json(cx.workload));
  d["finding"] = std::string(harness::to_string(cx.finding.kind));
  d["summary"] = cx.finding.summary;
  d["actual"] = cx.finding.actual ? py::object(py::str(harness::to_json(*cx.finding.actual).dump())) : py::none();
  d["report"] = harness::render(cx, files);
  d["report_file"] = files ? py::object(py::str(files->report.string())) : py::none();
  return d;
}

void write_out(const std::string& text) { py::module_::import("sys").attr("stdout").attr("write")(text); }

py::dict run_check(py::object fn, const std::string& name, int cases, std::optional<std::uint64_t> seed,
                   bool valid_only, double time_budget, std::optional<std::filesystem::path> report_dir,
                   const std::string& arrays, std::vector<std::filesystem::path> corpus, bool fail_fast, bool keep_going,
                   std::vector<std::string> only, const std::string& rerun_command, bool verbose) {
  for (const auto& property : only) {
    if (properties::find_property(property) == nullptr) throw py::value_error("unknown property '" + property + "'");
  }
  auto python = python_implementation(std::move(fn), name, array_kind(arrays), valid_only);
  properties::CheckOptions options;
  options.corpus = std::move(corpus);
  options.suite.cases = cases;
  options.suite.seed = seed;
  options.suite.time_budget_seconds = time_budget;
  if (report_dir) options.suite.report_dir = *report_dir;
  options.suite.only = std::move(only);
  options.suite.include_library = false;
  options.suite.stop_at_first_failure = fail_fast;
  options.properties_after_replay_failure = keep_going;
  options.suite.rerun_command = rerun_command;
  options.suite.stop_requested = [interrupted = python.interrupted] { return *interrupted; };
  if (verbose) options.progress = [](std::string_view what) { write_out(std::string(what)); };
  const auto result = properties::check({python.implementation}, options);

  py::dict summary;
  summary["passed"] = result.passed();
  summary["text"] = result.text;
  py::list replay_failures;
  for (const auto& cx : result.replay.failures) replay_failures.append(counterexample_dict(cx, std::nullopt));
  summary["replayed_files"] = result.replay.files;
  summary["replay_failures"] = replay_failures;
  py::list shrunk;
  for (const auto& reported : result.replay.reported)
    shrunk.append(counterexample_dict(reported.counterexample, reported.files));
  summary["replay_shrunk"] = shrunk;
  // No suite when the corpus replay already failed (its properties are then not run).
  const properties::SuiteResult none;
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
    d["counterexample"] = p.counterexample ? py::object(counterexample_dict(*p.counterexample, p.files)) : py::none();
    property_results.append(d);
  }
  summary["properties"] = property_results;
  summary["cases"] = suite.cases();
  summary["seconds"] = suite.seconds();
  summary["seed"] = py::int_(properties::seed_of(options.suite));
  if (*python.interrupted) {
    // Say what was found before stopping as Python asked.
    write_out(result.text + "Interrupted: the run stopped early; any report above is the smallest case found so far.\n");
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  return summary;
}

py::dict run_replay(py::object fn, const std::string& name, std::vector<std::filesystem::path> paths,
                    const std::string& arrays, bool valid_only) {
  auto python = python_implementation(std::move(fn), name, array_kind(arrays), valid_only);
  const auto replayed = properties::replay_corpus({python.implementation}, paths);
  py::dict summary;
  summary["passed"] = replayed.passed();
  summary["files"] = replayed.files;
  summary["text"] = replayed.text;
  py::list failures;
  for (const auto& cx : replayed.failures) failures.append(counterexample_dict(cx, std::nullopt));
  summary["failures"] = failures;
  return summary;
}

// For bench/python_bench.py: nanoseconds per C++ fast_into call on the same
// int32 inputs, into buffers allocated once, so the Python call's overhead
// over the library is measured in one process on one workload.
double fast_into_nanoseconds(std::int64_t chunk_size, py::handle num_computed_tokens, py::handle query_start_loc,
                             int iterations) {
  const InputArray computed(num_computed_tokens, "num_computed_tokens");
  const InputArray starts(query_start_loc, "query_start_loc");
  if (computed.copied() || starts.copied()) throw py::type_error("int32 tensors or arrays expected");
  const WorkloadView32 view{chunk_size, computed.int32(), starts.int32()};
  const auto sizes = output_sizes(view);
  if (!sizes.ok()) raise_invalid(sizes.error());
  std::vector<std::int32_t> cu(static_cast<std::size_t>(sizes.value().cu_chunk_seqlen));
  std::vector<std::int32_t> seq(static_cast<std::size_t>(sizes.value().seq_idx));
  std::vector<std::int32_t> last(static_cast<std::size_t>(sizes.value().last_chunk_indices));
  const auto start = std::chrono::steady_clock::now();
  std::int64_t written = 0;
  for (int i = 0; i < iterations; ++i) {
    const auto result = fast_into(view, {cu, seq, last});
    written += result.ok() ? result.value().seq_idx : -1;
    asm volatile("" : : "r"(cu.data()), "r"(written) : "memory");  // keep every call and its stores
  }
  const std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / iterations;
}

}  // namespace
}  // namespace chunkmeta::python

PYBIND11_MODULE(_chunkmeta, m) {
  namespace py = pybind11;
  using namespace chunkmeta::python;
  m.attr("__version__") = std::string(chunkmeta::kVersion);
  m.def("_set_invalid_workload_type", [](py::object type) { invalid_workload_type = new py::object(std::move(type)); });
  if (PyModule_AddFunctions(m.ptr(), compute_method) != 0) throw py::error_already_set();
  m.def("_check", &run_check, py::arg("fn"), py::arg("name"), py::arg("cases"), py::arg("seed"), py::arg("valid_only"),
        py::arg("time_budget"), py::arg("report_dir"), py::arg("arrays"), py::arg("corpus"), py::arg("fail_fast"),
        py::arg("keep_going"), py::arg("properties"), py::arg("rerun_command"), py::arg("verbose"));
  m.def("_replay", &run_replay, py::arg("fn"), py::arg("name"), py::arg("paths"), py::arg("arrays"),
        py::arg("valid_only"));
  m.def(
      "max_output_sizes",
      [](std::int64_t max_tokens, std::int64_t max_rows, std::int64_t chunk_size) {
        const auto sizes = chunkmeta::max_output_sizes(max_tokens, max_rows, chunk_size);
        if (!sizes.ok()) raise_invalid(sizes.error());
        return py::make_tuple(sizes.value().cu_chunk_seqlen, sizes.value().seq_idx, sizes.value().last_chunk_indices);
      },
      py::arg("max_tokens"), py::arg("max_rows"), py::arg("chunk_size"),
      R"doc(max_output_sizes(max_tokens, max_rows, chunk_size) -> (cu_chunk_seqlen, seq_idx, last_chunk_indices)

Buffer sizes that hold compute_chunk_metadata's results for every prefill step
of an engine whose steps have at most max_tokens new tokens (its max batched
tokens) and max_rows requests, at chunk_size: size the out= buffers once.)doc");
  m.def("_fast_into_nanoseconds", &fast_into_nanoseconds, py::arg("chunk_size"), py::arg("num_computed_tokens"),
        py::arg("query_start_loc"), py::arg("iterations"));
  m.def("_properties", [] {
    std::vector<std::string> names;
    for (const auto& p : chunkmeta::properties::all_properties()) {
      if (p.scope == chunkmeta::properties::Scope::implementation) names.push_back(p.name);
    }
    return names;
  });
}
