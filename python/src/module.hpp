// The parts of the `_chunkmeta` extension: each spec folder's drop-ins
// (specs/<folder>/<folder>_dropins.cpp) and check() / replay() on a Python
// callable (door.cpp), joined in module.cpp.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <string_view>

#include "chunkmeta/types.hpp"
#include "registry.hpp"

namespace chunkmeta::python {

namespace py = pybind11;

// chunkmeta.InvalidWorkload, defined in __init__.py and handed over at import.
void set_invalid_workload_type(py::object type);
[[noreturn]] void raise_invalid(const Error& error);
[[noreturn]] void raise_invalid(const std::string& message, std::string_view code, std::string_view field,
                                std::int64_t index, std::string_view kind);

// Each spec folder's drop-ins (specs/registry.hpp), and the module's other functions.
#define CHUNKMETA_DECLARE_ADD(folder) void add_##folder(py::module_& m);
CHUNKMETA_SPEC_FOLDERS(CHUNKMETA_DECLARE_ADD)
CHUNKMETA_LIBRARY_ONLY_FOLDERS(CHUNKMETA_DECLARE_ADD)
#undef CHUNKMETA_DECLARE_ADD
void add_door(py::module_& m);
void add_steps(py::module_& m);  // check_steps (steps.cpp)

}  // namespace chunkmeta::python
