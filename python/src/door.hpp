// check()'s door for other callers in the module (check_steps): a Python
// callable with an engine's signature as a harness Implementation of a spec.
#pragma once

#include <pybind11/pybind11.h>

#include <functional>
#include <string>

#include "chunkmeta/harness/implementation.hpp"

namespace chunkmeta::python {

namespace py = pybind11;

struct PythonFunction {
  harness::Implementation implementation;
  // Ctrl-C came during a call: that answer and every one after are the reference's (no finding);
  // the caller raises KeyboardInterrupt once it has said what it found.
  std::function<bool()> interrupted;
};

// fn called as check() calls it: the spec's inputs in its order, arrays of the
// kind named ("torch", "numpy", "lists"; the spec's list inputs stay lists);
// its outputs read and checked as check() reads them; an input it changes, an
// exception, a wrong output type is its finding; a call past `timeout`
// seconds (0: none) is cut short by `alarm` (check()'s _Alarm.arm).
PythonFunction python_function(py::object fn, std::string name, const harness::Spec& spec, const std::string& arrays,
                               double timeout, py::object alarm);

}  // namespace chunkmeta::python
