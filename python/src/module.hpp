// The parts of the `_chunkmeta` extension: the drop-ins (dropins.cpp) and
// check() / replay() on a Python callable (door.cpp), joined in module.cpp.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <string_view>

#include "chunkmeta/types.hpp"

namespace chunkmeta::python {

namespace py = pybind11;

// chunkmeta.InvalidWorkload, defined in __init__.py and handed over at import.
void set_invalid_workload_type(py::object type);
[[noreturn]] void raise_invalid(const Error& error);
[[noreturn]] void raise_invalid(const std::string& message, std::string_view code, std::string_view field,
                                std::int64_t index, std::string_view kind);

// The drop-ins, as METH_FASTCALL functions (pybind11's dispatcher costs more
// than the computation), and the module's other functions.
void add_dropins(py::module_& m);
void add_door(py::module_& m);

}  // namespace chunkmeta::python
