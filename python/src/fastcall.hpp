// What every spec folder's drop-ins share: METH_FASTCALL functions
// (pybind11's dispatcher costs more than the computation) with arguments by
// position or keyword, Python errors set and never thrown through C, the GIL
// released for large outputs, and a per-call timer for bench/python_bench.py.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>

#include "arrays.hpp"
#include "module.hpp"

namespace chunkmeta::python {

// --- Arguments: a METH_FASTCALL function's, by position or keyword ---

// A function's arguments: the first `positional` may come by position, the
// first `required` must come; the rest are keyword-only. Each slot of `given`
// is the argument or nullptr.
struct Signature {
  const char* function;
  std::initializer_list<const char*> names;
  Py_ssize_t positional;
  Py_ssize_t required;
};

template <std::size_t N>
void bind_arguments(const Signature& signature, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                    std::array<PyObject*, N>& given) {
  given.fill(nullptr);
  const auto* names = signature.names.begin();
  const auto count = static_cast<Py_ssize_t>(signature.names.size());
  if (nargs > signature.positional) {
    throw py::type_error(std::string(signature.function) + "() takes " + std::to_string(signature.positional) +
                         " positional arguments (" + std::to_string(nargs) + " given)");
  }
  for (Py_ssize_t i = 0; i < nargs; ++i) given[static_cast<std::size_t>(i)] = args[i];
  const Py_ssize_t keywords = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t k = 0; k < keywords; ++k) {
    PyObject* name = PyTuple_GET_ITEM(kwnames, k);
    Py_ssize_t slot = -1;
    for (Py_ssize_t i = 0; i < count && slot < 0; ++i) {
      if (PyUnicode_CompareWithASCIIString(name, names[i]) == 0) slot = i;
    }
    if (slot < 0 || given[static_cast<std::size_t>(slot)] != nullptr) {
      const std::string spelled = py::str(name);
      throw py::type_error(slot < 0 ? std::string(signature.function) + "() got an unexpected keyword argument '" +
                                          spelled + "'"
                                    : std::string(signature.function) + "() got multiple values for '" + spelled + "'");
    }
    given[static_cast<std::size_t>(slot)] = args[nargs + k];
  }
  for (Py_ssize_t i = 0; i < signature.required; ++i) {
    if (given[static_cast<std::size_t>(i)] == nullptr) {
      throw py::type_error(std::string(signature.function) + "() missing argument '" + names[i] + "'");
    }
  }
}

inline py::handle or_none(PyObject* argument) { return argument != nullptr ? py::handle(argument) : py::handle(Py_None); }

// Runs `body` as a METH_FASTCALL function body: Python errors set, never thrown through C.
template <typename Body>
PyObject* guarded(Body&& body) {
  try {
    return body().release().ptr();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (py::builtin_exception& e) {
    e.set_error();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

// Below this much output the computation takes well under a microsecond,
// less than handing the GIL over and back; above it, other threads run meanwhile.
constexpr std::int64_t kReleaseGilAbove = 4096;

template <typename Compute>
auto without_gil_if_large(std::int64_t entries, Compute&& compute) {
  if (entries > kReleaseGilAbove && !tensor_memory_in_use()) {
    py::gil_scoped_release unlocked;
    return compute();
  }
  return compute();
}

// A METH_FASTCALL | METH_KEYWORDS function as a PyMethodDef's function pointer.
template <typename Function>
PyCFunction fastcall(Function* function) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(function));
}

// The drop-ins of a spec folder (their docstrings start with their signature
// in CPython's form, "name(...)\n--\n\n", which inspect.signature() reads),
// added to the module; `methods` lives as long as the module.
void add_fastcall_methods(py::module_& m, PyMethodDef* methods);

// Nanoseconds per C++ call on the same inputs into buffers allocated once, so
// a Python call's overhead over the library is measured on one workload.
template <typename Call>
double nanoseconds_per_call(int iterations, Call&& call) {
  const auto start = std::chrono::steady_clock::now();
  std::int64_t written = 0;
  for (int i = 0; i < iterations; ++i) {
    written += call();
    asm volatile("" : : "r"(written) : "memory");  // keep every call and its stores
  }
  const std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / iterations;
}

}  // namespace chunkmeta::python
