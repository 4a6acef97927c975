#include "arrays.hpp"

#include <ATen/EmptyTensor.h>
#include <ATen/Functions.h>
#include <torch/csrc/autograd/python_variable.h>

#include <cstring>
#include <limits>

namespace chunkmeta::python {
namespace {

[[noreturn]] void type_error(const std::string& message) {
  PyErr_SetString(PyExc_TypeError, message.c_str());
  throw py::error_already_set();
}

std::string type_name(py::handle value) { return Py_TYPE(value.ptr())->tp_name; }

// "torch.int64 tensor on cuda:0", as a Python user spells it.
std::string describe_tensor(py::handle value, const at::Tensor& t) {
  std::string text = py::str(value.attr("dtype")).cast<std::string>() + " tensor on " + t.device().str();
  if (t.layout() != at::kStrided) text += ", layout " + c10::str(t.layout());
  return text;
}

// Formats of a C int32 in the buffer protocol ("i", "=i", "<i", or "l" where long is 32 bits).
bool is_int32_format(const Py_buffer& view) {
  if (view.itemsize != 4 || view.format == nullptr) return false;
  std::string_view format(view.format);
  if (!format.empty() && (format[0] == '=' || format[0] == '<' || format[0] == '@')) format.remove_prefix(1);
  return format == "i" || (format == "l" && sizeof(long) == 4);
}

// A sequence's items as wide ints; a float, a bool or another type is a TypeError.
std::vector<std::int64_t> ints_of_sequence(py::handle value, const char* argument) {
  PyObject* fast = PySequence_Fast(value.ptr(), "");
  if (fast == nullptr) {
    PyErr_Clear();
    type_error(std::string(argument) + " must be an int32 torch tensor, an int32 numpy array or a sequence of ints, "
               "not " + type_name(value));
  }
  const py::object owner = py::reinterpret_steal<py::object>(fast);
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  PyObject** items = PySequence_Fast_ITEMS(fast);
  std::vector<std::int64_t> out(static_cast<std::size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = items[i];
    if (PyLong_CheckExact(item)) {  // the common case, without building the argument's name
      int overflow = 0;
      const long long wide = PyLong_AsLongLongAndOverflow(item, &overflow);
      if (overflow == 0 && !(wide == -1 && PyErr_Occurred())) {
        out[static_cast<std::size_t>(i)] = wide;
        continue;
      }
      PyErr_Clear();
    }
    out[static_cast<std::size_t>(i)] = to_int64(item, (std::string(argument) + "[" + std::to_string(i) + "]").c_str());
  }
  return out;
}

// A new int32 CPU tensor of `size` entries, uninitialised (no fill). empty_cpu
// skips the operator dispatcher: a third of the cost of at::empty.
at::Tensor empty_int32(std::int64_t size) { return at::detail::empty_cpu({size}, at::kInt, false, c10::nullopt); }

py::object to_python(at::Tensor tensor) {
  PyObject* wrapped = THPVariable_Wrap(std::move(tensor));
  if (wrapped == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(wrapped);
}

}  // namespace

std::int64_t to_int64(py::handle value, const char* argument) {
  PyObject* object = value.ptr();
  if (PyBool_Check(object) || PyFloat_Check(object) || !PyIndex_Check(object)) {
    type_error(std::string(argument) + " must be an int, not " + type_name(value) + " (" +
               py::repr(value).cast<std::string>() + ")");
  }
  PyObject* index = PyNumber_Index(object);
  if (index == nullptr) throw py::error_already_set();
  int overflow = 0;
  const long long wide = PyLong_AsLongLongAndOverflow(index, &overflow);
  Py_DECREF(index);
  if (overflow > 0) return std::numeric_limits<std::int64_t>::max();
  if (overflow < 0) return std::numeric_limits<std::int64_t>::min();
  if (wide == -1 && PyErr_Occurred()) throw py::error_already_set();
  return wide;
}

InputArray::InputArray(py::handle value, const char* argument) {
  PyObject* object = value.ptr();
  if (THPVariable_Check(object)) {
    const at::Tensor& t = THPVariable_Unpack(object);
    if (t.scalar_type() != at::kInt || !t.device().is_cpu() || t.layout() != at::kStrided) {
      type_error(std::string(argument) + " must be an int32 CPU tensor, not a " + describe_tensor(value, t) +
                 " (convert it explicitly, e.g. .to(torch.int32).cpu())");
    }
    if (t.dim() != 1) type_error(std::string(argument) + " must be 1-D, not of shape " + c10::str(t.sizes()));
    if (!t.is_contiguous()) {
      type_error(std::string(argument) + " must be contiguous (it is a strided view; call .contiguous())");
    }
    narrow_ = {t.data_ptr<std::int32_t>(), static_cast<std::size_t>(t.numel())};
    return;
  }
  if (PyObject_CheckBuffer(object)) {
    if (PyObject_GetBuffer(object, &buffer_, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
      PyErr_Clear();
      type_error(std::string(argument) + " must be a contiguous int32 array (this " + type_name(value) +
                 " is not contiguous)");
    }
    holds_buffer_ = true;
    if (!is_int32_format(buffer_) || buffer_.ndim != 1) {
      const std::string format = buffer_.format != nullptr ? buffer_.format : "B";
      const int ndim = buffer_.ndim;
      type_error(std::string(argument) + " must be a 1-D int32 array, not a " + std::to_string(ndim) + "-D " +
                 type_name(value) + " of format '" + format + "' (" + std::to_string(buffer_.itemsize) +
                 "-byte items); convert it explicitly, e.g. .astype(numpy.int32)");
    }
    narrow_ = {static_cast<const std::int32_t*>(buffer_.buf), static_cast<std::size_t>(buffer_.shape[0])};
    return;
  }
  wide_ = ints_of_sequence(value, argument);
}

InputArray::~InputArray() {
  if (holds_buffer_) PyBuffer_Release(&buffer_);
}

std::vector<std::int64_t> InputArray::widened() const {
  if (wide_) return *wide_;
  return {narrow_.begin(), narrow_.end()};
}

struct OutputTensors::Tensors {
  at::Tensor cu, seq, last;
};

OutputTensors::OutputTensors(std::int64_t cu_capacity, std::int64_t seq_capacity, std::int64_t last_capacity)
    : tensors_(std::make_unique<Tensors>(Tensors{empty_int32(cu_capacity), empty_int32(seq_capacity),
                                                 empty_int32(last_capacity)})) {}

OutputTensors::~OutputTensors() = default;

OutputBuffers OutputTensors::buffers() const {
  const auto span_of = [](const at::Tensor& t) {
    return std::span<std::int32_t>(t.data_ptr<std::int32_t>(), static_cast<std::size_t>(t.numel()));
  };
  return {span_of(tensors_->cu), span_of(tensors_->seq), span_of(tensors_->last)};
}

py::tuple OutputTensors::finish(const OutputSizes& sizes) {
  const auto wrap = [](at::Tensor& t, std::int64_t size) {
    if (t.numel() != size) t.unsafeGetTensorImpl()->set_sizes_contiguous({size});
    return to_python(std::move(t));
  };
  py::object cu = wrap(tensors_->cu, sizes.cu_chunk_seqlen);
  py::object seq = wrap(tensors_->seq, sizes.seq_idx);
  py::object last = wrap(tensors_->last, sizes.last_chunk_indices);
  return py::make_tuple(std::move(cu), std::move(seq), std::move(last));
}

py::object make_array(ArrayKind kind, const std::vector<std::int64_t>& values) {
  const auto n = static_cast<std::int64_t>(values.size());
  if (kind == ArrayKind::lists) {
    py::list list(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      PyObject* item = PyLong_FromLongLong(values[i]);
      if (item == nullptr) throw py::error_already_set();
      PyList_SET_ITEM(list.ptr(), static_cast<Py_ssize_t>(i), item);
    }
    return list;
  }
  at::Tensor filled = empty_int32(n);
  std::int32_t* data = filled.data_ptr<std::int32_t>();
  for (std::size_t i = 0; i < values.size(); ++i) data[i] = static_cast<std::int32_t>(values[i]);
  py::object tensor = to_python(std::move(filled));
  if (kind == ArrayKind::torch) return tensor;
  return tensor.attr("numpy")();
}

std::optional<chunkmeta::Int32Array> read_output(py::handle value, const char* name, std::string* why) {
  const auto fits = [](std::int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; };
  chunkmeta::Int32Array out;
  PyObject* object = value.ptr();
  if (THPVariable_Check(object)) {
    const at::Tensor& t = THPVariable_Unpack(object);
    const bool integral = t.scalar_type() == at::kInt || t.scalar_type() == at::kLong;
    if (!integral || t.dim() != 1 || t.layout() != at::kStrided || !t.device().is_cpu()) {
      *why = std::string(name) + " is a " + std::to_string(t.dim()) + "-D " + describe_tensor(value, t) +
             ", not a 1-D integer CPU tensor";
      return std::nullopt;
    }
    const at::Tensor wide = t.to(at::kLong).contiguous();
    const std::int64_t* data = wide.data_ptr<std::int64_t>();
    for (std::int64_t i = 0; i < wide.numel(); ++i) {
      if (!fits(data[i])) {
        *why = std::string(name) + "[" + std::to_string(i) + "] is " + std::to_string(data[i]) + ", outside int32";
        return std::nullopt;
      }
      out.push_back(static_cast<std::int32_t>(data[i]));
    }
    return out;
  }
  if (PyObject_CheckBuffer(object)) {
    Py_buffer view{};
    if (PyObject_GetBuffer(object, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) == 0) {
      if (is_int32_format(view) && view.ndim == 1) {
        const auto* data = static_cast<const std::int32_t*>(view.buf);
        out.assign(data, data + view.shape[0]);
        PyBuffer_Release(&view);
        return out;
      }
      PyBuffer_Release(&view);
    } else {
      PyErr_Clear();
    }
  }
  try {  // any other sequence of ints (lists, tuples, numpy arrays of other integer types)
    for (const std::int64_t v : ints_of_sequence(value, name)) {
      if (!fits(v)) {
        *why = std::string(name) + "[" + std::to_string(out.size()) + "] is " + std::to_string(v) + ", outside int32";
        return std::nullopt;
      }
      out.push_back(static_cast<std::int32_t>(v));
    }
    return out;
  } catch (py::error_already_set& e) {
    *why = e.what();
    return std::nullopt;
  }
}

}  // namespace chunkmeta::python
