// The `chunkmeta` Python extension: each spec folder's drop-ins (the fast
// implementations with the engines' signatures and types), and every spec's
// property suite run in this process against a Python callable (door.cpp).
// `chunkmeta/__init__.py` wraps them.
#include "module.hpp"

#include "chunkmeta/types.hpp"

namespace chunkmeta::python {
namespace {

// Never destroyed: it must outlive the interpreter's module teardown.
py::object* invalid_workload_type = nullptr;

}  // namespace

void set_invalid_workload_type(py::object type) { invalid_workload_type = new py::object(std::move(type)); }

void raise_invalid(const std::string& message, std::string_view code, std::string_view field, std::int64_t index,
                   std::string_view kind) {
  py::object index_value = index == Error::kNoIndex ? py::object(py::none()) : py::object(py::int_(index));
  py::object error = (*invalid_workload_type)(message, py::str(code.data(), code.size()),
                                              py::str(field.data(), field.size()), index_value,
                                              py::str(kind.data(), kind.size()));
  PyErr_SetObject(invalid_workload_type->ptr(), error.ptr());
  throw py::error_already_set();
}

void add_fastcall_methods(py::module_& m, PyMethodDef* methods) {
  if (PyModule_AddFunctions(m.ptr(), methods) != 0) throw py::error_already_set();
}

void raise_invalid(const Error& error) {
  raise_invalid(error.message(), to_string(error.code), error.field, error.index,
                kind_of(error.code) == ErrorKind::invalid_input ? "invalid_input" : "resource_limit");
}

}  // namespace chunkmeta::python

PYBIND11_MODULE(_chunkmeta, m) {
  using namespace chunkmeta::python;
  m.attr("__version__") = std::string(chunkmeta::kVersion);
  m.def("_set_invalid_workload_type", &set_invalid_workload_type);
#define CHUNKMETA_ADD_DROPINS_OF(folder) add_##folder(m);
  CHUNKMETA_SPEC_FOLDERS(CHUNKMETA_ADD_DROPINS_OF)
  CHUNKMETA_LIBRARY_ONLY_FOLDERS(CHUNKMETA_ADD_DROPINS_OF)
#undef CHUNKMETA_ADD_DROPINS_OF
  add_door(m);
  add_steps(m);
}
