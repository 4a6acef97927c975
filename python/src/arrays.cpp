#include "arrays.hpp"

#include "module.hpp"

#include <dlpack/dlpack.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <tuple>
#include <cstring>
#include <limits>
#include <new>

namespace chunkmeta::python {
namespace {

[[noreturn]] void type_error(const std::string& message) {
  PyErr_SetString(PyExc_TypeError, message.c_str());
  throw py::error_already_set();
}

std::string type_name(py::handle value) { return Py_TYPE(value.ptr())->tp_name; }


// Attribute and method names, interned once: looking them up by C string would
// create a Python string on every call.
PyObject* name(const char* text) {
  PyObject* interned = PyUnicode_InternFromString(text);
  if (interned == nullptr) throw py::error_already_set();
  return interned;  // kept for the life of the process
}

struct Names {
  PyObject* dtype = name("dtype");
  PyObject* is_cpu = name("is_cpu");
  PyObject* layout = name("layout");
  PyObject* ndim = name("ndim");
  PyObject* is_contiguous = name("is_contiguous");
  PyObject* data_ptr = name("data_ptr");
  PyObject* numel = name("numel");
  PyObject* shape = name("shape");
  PyObject* device = name("device");
  PyObject* reshape = name("reshape");
  PyObject* storage_offset = name("storage_offset");
  PyObject* untyped_storage = name("untyped_storage");  // torch 2
  PyObject* private_storage = name("_storage");         // torch 1.13: the same UntypedStorage
  PyObject* nbytes = name("nbytes");
  PyObject* stride = name("stride");
  PyObject* element_size = name("element_size");
};
const Names& names() {
  static const Names interned;
  return interned;
}

py::object attribute(py::handle object, PyObject* attribute_name) {
  PyObject* value = PyObject_GetAttr(object.ptr(), attribute_name);
  if (value == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(value);
}

py::object call_method(py::handle object, PyObject* method_name) {
  PyObject* self = object.ptr();
  PyObject* value = PyObject_VectorcallMethod(method_name, &self, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
  if (value == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(value);
}

// torch's objects, resolved once torch is imported by someone else: the
// extension never imports torch to read an argument.
struct Torch {
  PyTypeObject* tensor_type = nullptr;
  PyObject* strided = nullptr;
  PyObject* from_dlpack = nullptr;  // torch._C._from_dlpack: a DLPack capsule -> a tensor
  struct Dtype {
    PyObject* object;
    int bits;
    bool is_signed;
  };
  Dtype int32{}, int64{};
  std::vector<Dtype> integers;  // every integer dtype, for reading outputs
};

const Torch* resolve_torch(PyObject* module) {
  auto* torch = new Torch;  // kept for the life of the process, like the module
  const auto get = [module](const char* attr) {
    PyObject* value = PyObject_GetAttrString(module, attr);
    if (value == nullptr) throw py::error_already_set();
    return value;
  };
  torch->tensor_type = reinterpret_cast<PyTypeObject*>(get("Tensor"));
  torch->strided = get("strided");
  const py::object c_module = py::reinterpret_steal<py::object>(get("_C"));
  torch->from_dlpack = PyObject_GetAttrString(c_module.ptr(), "_from_dlpack");
  if (torch->from_dlpack == nullptr) throw py::error_already_set();
  for (const auto& [attr, bits, is_signed] : std::initializer_list<std::tuple<const char*, int, bool>>{
           {"int8", 8, true}, {"int16", 16, true}, {"int32", 32, true}, {"int64", 64, true}, {"uint8", 8, false}}) {
    torch->integers.push_back({get(attr), bits, is_signed});
  }
  torch->int32 = torch->integers[2];
  torch->int64 = torch->integers[3];
  return torch;
}

// torch if it is imported, else nullptr (one dictionary lookup until it is).
const Torch* loaded_torch() {
  static const Torch* torch = nullptr;
  if (torch != nullptr) return torch;
  PyObject* module = PyImport_GetModule(py::str("torch").ptr());
  if (module == nullptr) {
    if (PyErr_Occurred()) throw py::error_already_set();
    return nullptr;
  }
  const py::object owner = py::reinterpret_steal<py::object>(module);
  if (module == Py_None) return nullptr;  // sys.modules["torch"] = None: torch blocked
  torch = resolve_torch(module);
  return torch;
}

const Torch& imported_torch() {
  if (const Torch* torch = loaded_torch()) return *torch;
  py::module_::import("torch");
  return *loaded_torch();
}

bool is_tensor(py::handle value) {
  const Torch* torch = loaded_torch();
  return torch != nullptr && PyObject_TypeCheck(value.ptr(), torch->tensor_type);
}

struct Numpy {
  PyObject* empty = nullptr;
  PyObject* int32 = nullptr;
  PyObject* int64 = nullptr;
};

const Numpy& numpy() {
  static const Numpy* numpy = [] {
    const py::module_ module = py::module_::import("numpy");
    auto* resolved = new Numpy;
    resolved->empty = py::object(module.attr("empty")).release().ptr();
    resolved->int32 = module.attr("dtype")("int32").release().ptr();
    resolved->int64 = module.attr("dtype")("int64").release().ptr();
    return resolved;
  }();
  return *numpy;
}

std::size_t size_of(IntType type) { return type == IntType::int32 ? 4 : 8; }
const char* dtype_name(IntType type) { return type == IntType::int32 ? "int32" : "int64"; }

// "torch.int64 tensor on cuda:0", as a Python user spells it.
std::string describe_tensor(py::handle tensor) {
  std::string text = py::str(attribute(tensor, names().dtype)).cast<std::string>() + " tensor on " +
                     py::str(attribute(tensor, names().device)).cast<std::string>();
  const py::object layout = attribute(tensor, names().layout);
  if (const Torch* torch = loaded_torch(); torch != nullptr && layout.ptr() != torch->strided)
    text += ", layout " + py::str(layout).cast<std::string>();
  return text;
}

std::string shape_of(py::handle tensor) {
  return py::str(py::tuple(attribute(tensor, names().shape))).cast<std::string>();
}

// Whether the tensor's storage holds the `entries` of `item_bytes` it claims
// from its storage offset on: a storage resized under it (t.storage().resize_(0))
// leaves its shape, and reading by the shape would read freed memory. Where
// the storage cannot be asked (neither method), a null data pointer is refused.
// For results of a function under test (read_output); the drop-ins' hot path
// refuses a null data pointer only (tensor_memory).
bool storage_holds(py::handle tensor, const void* data, std::int64_t entries, int item_bytes) {
  if (entries == 0) return true;
  if (data == nullptr) return false;
  const Names& n = names();
  PyObject* self = tensor.ptr();
  PyObject* storage = PyObject_VectorcallMethod(n.untyped_storage, &self, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
  if (storage == nullptr) {
    PyErr_Clear();
    storage = PyObject_VectorcallMethod(n.private_storage, &self, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
  }
  if (storage == nullptr) {
    PyErr_Clear();
    return true;
  }
  const py::object held = py::reinterpret_steal<py::object>(storage);
  const long long bytes = PyLong_AsLongLong(call_method(held, n.nbytes).ptr());
  const long long offset = PyLong_AsLongLong(call_method(tensor, n.storage_offset).ptr());
  if (bytes < 0 || offset < 0) {
    PyErr_Clear();
    return false;
  }
  const unsigned long long needed_items = static_cast<unsigned long long>(offset) + static_cast<unsigned long long>(entries);
  return needed_items <= static_cast<unsigned long long>(bytes) / static_cast<unsigned long long>(item_bytes);
}

// A dense, C-contiguous CPU tensor's memory, checked through its public
// attributes (~35 ns each, a method ~70 ns) in the order that names the first
// thing wrong. `wanted` says what the argument must be, for the message only.
struct TensorMemory {
  void* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t columns = 1;
};

// "1-D", "of shape (N, 2)", "2-D": what `shape` asks.
std::string shape_wanted(Shape shape) {
  if (!shape.table) return "1-D";
  if (shape.columns == 0) return "2-D";
  return "of shape (N, " + std::to_string(shape.columns) + ")";
}

[[noreturn]] void wrong_tensor(py::handle tensor, const char* argument, const char* wanted, IntType type) {
  type_error(std::string(argument) + " must be " + wanted + ", not a " + describe_tensor(tensor) +
             " (convert it explicitly, e.g. .to(torch." + dtype_name(type) + ").cpu())");
}

TensorMemory tensor_memory(py::handle tensor, const char* argument, IntType type, Shape shape, const char* wanted) {
  const Torch& torch = *loaded_torch();
  const Names& n = names();
  const PyObject* expected = type == IntType::int32 ? torch.int32.object : torch.int64.object;
  if (attribute(tensor, n.dtype).ptr() != expected || attribute(tensor, n.is_cpu).ptr() != Py_True)
    wrong_tensor(tensor, argument, wanted, type);
  // One read of the shape (a torch.Size, a tuple) gives the dimensions and the entries.
  const py::object sizes = attribute(tensor, n.shape);
  if (!PyTuple_Check(sizes.ptr())) type_error(std::string(argument) + " has a shape that is not a tuple");
  const Py_ssize_t ndim = PyTuple_GET_SIZE(sizes.ptr());
  const auto size = [&](Py_ssize_t d) {
    const long long value = PyLong_AsLongLong(PyTuple_GET_ITEM(sizes.ptr(), d));
    if (value < 0) throw py::error_already_set();
    return static_cast<std::int64_t>(value);
  };
  const std::int64_t width = ndim == 2 ? size(1) : 1;
  if (ndim != shape.dimensions() || (shape.columns > 0 && width != shape.columns)) {
    type_error(std::string(argument) + " must be " + shape_wanted(shape) + ", not of shape " + shape_of(tensor));
  }
  const std::int64_t rows = size(0);
  // A sparse tensor says it is contiguous; its data pointer is what it refuses.
  PyObject* self = tensor.ptr();
  PyObject* contiguous = PyObject_VectorcallMethod(n.is_contiguous, &self, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
  PyObject* address = contiguous == Py_True
                          ? PyObject_VectorcallMethod(n.data_ptr, &self, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr)
                          : nullptr;
  const bool was_contiguous = contiguous == Py_True;
  Py_XDECREF(contiguous);
  if (address == nullptr) {
    PyErr_Clear();
    if (attribute(tensor, n.layout).ptr() != torch.strided) wrong_tensor(tensor, argument, wanted, type);
    if (!was_contiguous) type_error(std::string(argument) + " must be contiguous (it is a strided view; call .contiguous())");
    type_error(std::string(argument) + " has no memory to read (" + describe_tensor(tensor) + ")");
  }
  TensorMemory memory;
  memory.data = PyLong_AsVoidPtr(address);
  Py_DECREF(address);
  if (memory.data == nullptr && PyErr_Occurred()) throw py::error_already_set();
  memory.columns = width;
  memory.rows = width == 0 ? 0 : rows;
  // A storage resized to nothing under the tensor (t.storage().resize_(0)) leaves a null data pointer:
  // refused at no cost. Its size is not asked here (three Python calls, ~0.3 us a tensor on every
  // drop-in call); the results check() reads from a function under test are (read_output).
  if (memory.data == nullptr && memory.rows * memory.columns > 0)
    type_error(std::string(argument) + " has no memory to read (its storage was resized to nothing?)");
  return memory;
}

// The buffer protocol's integer formats: "i", "=i", "<i", "@i", "l" ... as (bytes, signed).
std::optional<std::pair<int, bool>> integer_format(const Py_buffer& view) {
  if (view.format == nullptr) return std::pair{1, false};  // plain bytes
  std::string_view format(view.format);
  bool native = true;
  if (!format.empty() && (format[0] == '=' || format[0] == '<' || format[0] == '@' || format[0] == '>' || format[0] == '!')) {
    native = format[0] == '@' || format[0] == '=' || (format[0] == '<') == (std::endian::native == std::endian::little);
    format.remove_prefix(1);
  }
  if (format.size() != 1 || !native) return std::nullopt;
  const char c = format[0];
  const int bytes = static_cast<int>(view.itemsize);
  switch (c) {
    case 'b': case 'h': case 'i': case 'l': case 'q': case 'n': return std::pair{bytes, true};
    case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N': return std::pair{bytes, false};
    default: return std::nullopt;
  }
}

bool has_type(const Py_buffer& view, IntType type) {
  const auto format = integer_format(view);
  return format && format->second && format->first == static_cast<int>(size_of(type));
}

std::string describe_buffer(const Py_buffer& view, py::handle value) {
  const std::string format = view.format != nullptr ? view.format : "B";
  return std::to_string(view.ndim) + "-D " + type_name(value) + " of format '" + format + "' (" +
         std::to_string(view.itemsize) + "-byte items)";
}

// A Python int (or __index__) as int64; `where` names it ("seq_lens[3]") and
// `index` is its entry (Error::kNoIndex for a scalar). One that no int64 holds
// is chunkmeta.InvalidWorkload showing it as given: a value clamped to int64
// would be named as though the caller had passed it.
std::int64_t int64_of(py::handle value, const char* argument, const std::string& where, std::int64_t index) {
  PyObject* object = value.ptr();
  if (PyBool_Check(object) || PyFloat_Check(object) || !PyIndex_Check(object)) {
    type_error(where + " must be an int, not " + type_name(value) + " (" + short_repr(value) + ")");
  }
  const py::object exact = py::reinterpret_steal<py::object>(PyNumber_Index(object));
  if (!exact) throw py::error_already_set();
  int overflow = 0;
  const long long wide = PyLong_AsLongLongAndOverflow(exact.ptr(), &overflow);
  if (overflow != 0) {
    raise_invalid(where + " is " + py::str(exact).cast<std::string>() +
                      ", out of range: it does not fit in int64 (-2^63 to 2^63-1), the integers the library reads",
                  to_string(overflow > 0 ? ErrorCode::value_too_large : ErrorCode::negative_value), argument, index,
                  "invalid_input");
  }
  if (wide == -1 && PyErr_Occurred()) throw py::error_already_set();
  return wide;
}

// A list's or tuple's items as wide ints; a float, a bool or another type is a
// TypeError. Items are entries `first_index` on of `argument`; a table's row
// `row` (-1: not a table) is named "argument[row][column]".
std::vector<std::int64_t> ints_of_sequence(py::handle value, const char* argument, std::int64_t first_index = 0,
                                           std::int64_t row = -1) {
  PyObject* sequence = value.ptr();
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(sequence);
  PyObject** items = PySequence_Fast_ITEMS(sequence);
  // A list's items as they were, held, once Python code may run: an item's
  // __index__ can empty or refill the list, freeing the items read here.
  py::object snapshot;
  std::vector<std::int64_t> out(static_cast<std::size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!snapshot && PyList_Check(sequence) && !PyLong_CheckExact(items[i])) {
      snapshot = py::reinterpret_steal<py::object>(PyList_AsTuple(sequence));
      if (!snapshot) throw py::error_already_set();
      items = PySequence_Fast_ITEMS(snapshot.ptr());
    }
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
    const std::string where = std::string(argument) + (row >= 0 ? "[" + std::to_string(row) + "]" : "") + "[" +
                              std::to_string(i) + "]";
    out[static_cast<std::size_t>(i)] = int64_of(item, argument, where, first_index + i);
  }
  return out;
}

bool is_list_or_tuple(py::handle value) { return PyList_Check(value.ptr()) || PyTuple_Check(value.ptr()); }

}  // namespace

ArrayKind array_kind(const std::string& name) {
  if (name == "torch") return ArrayKind::torch;
  if (name == "numpy") return ArrayKind::numpy;
  if (name == "lists") return ArrayKind::lists;
  throw py::value_error("arrays must be 'torch', 'numpy' or 'lists', not '" + name + "'");
}

ArrayKind kind_of_results(std::initializer_list<ArrayKind> inputs) {
  ArrayKind kind = ArrayKind::lists;
  for (const ArrayKind input : inputs) {
    if (input == ArrayKind::torch) return ArrayKind::torch;
    if (input == ArrayKind::numpy) kind = ArrayKind::numpy;
  }
  return kind;
}

bool to_flag(py::handle value, const char* argument) {
  if (!PyBool_Check(value.ptr())) type_error(std::string(argument) + " must be True or False, not " + type_name(value));
  return value.ptr() == Py_True;
}

std::int64_t to_int64(py::handle value, const char* argument) {
  return int64_of(value, argument, argument, Error::kNoIndex);
}

namespace {
thread_local int tensors_in_use = 0;
}  // namespace

bool tensor_memory_in_use() { return tensors_in_use > 0; }

InputArray::InputArray(py::handle value, const char* argument, bool int64_allowed)
    : InputArray(value, argument, 1, int64_allowed) {}

InputArray::InputArray(py::handle value, const char* argument, Table) : InputArray(value, argument, 2, false) {}

InputArray::InputArray(py::handle value, const char* argument, int dimensions, bool int64_allowed) {
  // Words for the errors only: no string is built on the way to a result.
  const bool table = dimensions == 2;
  const char* types = int64_allowed ? "int32 or int64" : "int32";
  const char* shape = table ? "2-D" : "1-D";
  if (is_tensor(value)) {
    kind_ = ArrayKind::torch;
    owner_ = py::reinterpret_borrow<py::object>(value);
    type_ = int64_allowed && attribute(value, names().dtype).ptr() == loaded_torch()->int64.object ? IntType::int64
                                                                                                   : IntType::int32;
    const char* wanted = table ? "a 2-D int32 CPU tensor"
                               : (int64_allowed ? "an int32 or int64 CPU tensor" : "an int32 CPU tensor");
    const TensorMemory memory = tensor_memory(value, argument, type_, table ? Shape::table_of(0) : Shape{}, wanted);
    data_ = memory.data;
    columns_ = memory.columns;
    size_ = static_cast<std::size_t>(memory.rows * memory.columns);
    memory_.enter(data_, size_ * size_of(type_), argument, MemoryInUse::Use::read);
    ++tensors_in_use;
    return;
  }
  if (is_list_or_tuple(value)) {
    kind_ = ArrayKind::lists;
    copied_ = true;
    if (table) {
      copy_rows(value, argument);
    } else {
      values_ = ints_of_sequence(value, argument);
    }
    data_ = values_.data();
    size_ = values_.size();
    return;
  }
  if (PyObject_CheckBuffer(value.ptr())) {
    kind_ = ArrayKind::numpy;
    Py_buffer& view = buffer_.view;
    if (PyObject_GetBuffer(value.ptr(), &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
      PyErr_Clear();
      type_error(std::string(argument) + " must be a contiguous array (this " + type_name(value) + " is not contiguous)");
    }
    buffer_.held = true;
    const bool int32 = has_type(view, IntType::int32);
    const bool int64 = int64_allowed && has_type(view, IntType::int64);
    if ((!int32 && !int64) || view.ndim != dimensions) {
      type_error(std::string(argument) + " must be a " + shape + " " + types + " array, not a " +
                 describe_buffer(view, value) + "; convert it explicitly, e.g. .astype(numpy.int32)");
    }
    type_ = int32 ? IntType::int32 : IntType::int64;
    data_ = view.buf;
    columns_ = table ? view.shape[1] : 1;
    size_ = static_cast<std::size_t>(view.shape[0] * columns_);
    memory_.enter(data_, size_ * size_of(type_), argument, MemoryInUse::Use::read);
    return;
  }
  type_error(std::string(argument) + " must be " + (table ? "a 2-D " : "an ") + types + " CPU tensor, a " + shape + " " +
             types + " numpy array, or " + (table ? "a list of lists of ints" : "a list or tuple of ints") + ", not " +
             type_name(value));
}

// A table's rows (a list of lists of ints) copied row after row; rows of several lengths are a TypeError.
void InputArray::copy_rows(py::handle value, const char* argument) {
  columns_ = -1;
  std::size_t index = 0;
  for (const auto row : py::reinterpret_borrow<py::sequence>(value)) {
    if (!is_list_or_tuple(row))
      type_error(std::string(argument) + " must be a list of lists of ints; its row " + std::to_string(index) + " is " +
                 type_name(row));
    const auto entries = ints_of_sequence(row, argument, static_cast<std::int64_t>(values_.size()),
                                          static_cast<std::int64_t>(index++));
    if (columns_ >= 0 && static_cast<std::int64_t>(entries.size()) != columns_)
      type_error(std::string(argument) + " must have rows of one length (" + std::to_string(columns_) + "), not " +
                 std::to_string(entries.size()));
    columns_ = static_cast<std::int64_t>(entries.size());
    values_.insert(values_.end(), entries.begin(), entries.end());
  }
  columns_ = std::max<std::int64_t>(columns_, 0);
}

InputArray::~InputArray() {
  if (kind_ == ArrayKind::torch) --tensors_in_use;
}

std::vector<std::int64_t> InputArray::widened() const {
  if (type_ == IntType::int64) return {int64().begin(), int64().end()};
  return {int32().begin(), int32().end()};
}

// One allocation for every result: a header with a DLManagedTensor per array
// (handed to torch, which calls its deleter when the tensor dies), then the
// entries, 64-byte aligned. Freed when the last holder lets go.
struct Results::Block {
  static constexpr std::size_t kArrays = kMostArrays;
  static constexpr std::size_t kAlignment = 64;
  std::atomic<int> holders{1};
  DLManagedTensor tensors[kArrays]{};
  std::int64_t shapes[kArrays][2]{};
  std::int64_t strides[kArrays][2]{};

  static std::size_t header_bytes() { return (sizeof(Block) + kAlignment - 1) / kAlignment * kAlignment; }
  static Block* allocate(std::size_t data_bytes) {
    void* memory = ::operator new(header_bytes() + data_bytes, std::align_val_t(kAlignment));
    return new (memory) Block;
  }
  std::byte* data() { return reinterpret_cast<std::byte*>(this) + header_bytes(); }
  void release() {
    if (holders.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      this->~Block();
      ::operator delete(static_cast<void*>(this), std::align_val_t(kAlignment));
    }
  }
  static void deleter(DLManagedTensor* tensor) { static_cast<Block*>(tensor->manager_ctx)->release(); }
};

namespace {
constexpr const char* kCapsuleName = "dltensor";
// A capsule torch never took (an error before from_dlpack) still holds its tensor.
void release_unused_capsule(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, kCapsuleName)) {
    auto* tensor = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
    tensor->deleter(tensor);
  }
}
}  // namespace

Results::Results(ArrayKind kind, IntType type, std::initializer_list<std::int64_t> capacities,
                 std::initializer_list<Shape> shapes)
    : kind_(kind), type_(type), count_(capacities.size()) {
  if (count_ > kMostArrays || (shapes.size() != 0 && shapes.size() != count_))
    throw std::logic_error("Results: at most kMostArrays arrays, each with its shape");
  std::copy(capacities.begin(), capacities.end(), capacities_.begin());
  std::copy(shapes.begin(), shapes.end(), shapes_.begin());
  std::int64_t entries = 0;
  for (std::size_t i = 0; i < count_; ++i) {
    offsets_[i] = entries;
    entries += capacities_[i] * shapes_[i].columns;
  }
  if (kind_ != ArrayKind::numpy) {
    block_ = Block::allocate(static_cast<std::size_t>(entries) * size_of(type_));
    return;
  }
  const Numpy& np = numpy();
  // One array: its own shape, so that a table's result is a row slice of it.
  PyObject* shape = count_ == 1 && shapes_[0].table
                        ? Py_BuildValue("(Li)", static_cast<long long>(capacities_[0]), shapes_[0].columns)
                        : PyLong_FromLongLong(entries);
  if (shape == nullptr) throw py::error_already_set();
  const py::object shape_owner = py::reinterpret_steal<py::object>(shape);
  PyObject* arguments[] = {shape, type_ == IntType::int32 ? np.int32 : np.int64};
  PyObject* made = PyObject_Vectorcall(np.empty, arguments, 2, nullptr);
  if (made == nullptr) throw py::error_already_set();
  numpy_block_ = py::reinterpret_steal<py::object>(made);
  if (PyObject_GetBuffer(made, &numpy_view_, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) throw py::error_already_set();
  holds_numpy_view_ = true;
}

Results::~Results() {
  if (holds_numpy_view_) PyBuffer_Release(&numpy_view_);
  if (block_ != nullptr) block_->release();
}

void* Results::storage(std::size_t i) const {
  std::byte* base = kind_ == ArrayKind::numpy ? static_cast<std::byte*>(numpy_view_.buf) : block_->data();
  return base + offsets_[i] * static_cast<std::int64_t>(size_of(type_));
}

py::object Results::finish(std::initializer_list<std::int64_t> rows) {
  std::array<py::object, kMostArrays> made;
  for (std::size_t i = 0; i < count_; ++i) {
    const std::int64_t n = rows.begin()[i];
    const int columns = shapes_[i].columns;
    const bool table = shapes_[i].table;
    switch (kind_) {
      case ArrayKind::torch: {
        const Torch& torch = imported_torch();
        DLManagedTensor& tensor = block_->tensors[i];
        block_->shapes[i][0] = n;
        block_->shapes[i][1] = columns;
        block_->strides[i][0] = columns;
        block_->strides[i][1] = 1;
        tensor.dl_tensor.data = storage(i);
        tensor.dl_tensor.device = {kDLCPU, 0};
        tensor.dl_tensor.ndim = shapes_[i].dimensions();
        tensor.dl_tensor.dtype = {static_cast<std::uint8_t>(kDLInt), static_cast<std::uint8_t>(8 * size_of(type_)), 1};
        tensor.dl_tensor.shape = block_->shapes[i];
        tensor.dl_tensor.strides = block_->strides[i];
        tensor.dl_tensor.byte_offset = 0;
        tensor.manager_ctx = block_;
        tensor.deleter = &Block::deleter;
        block_->holders.fetch_add(1, std::memory_order_relaxed);  // the capsule's, then torch's
        PyObject* capsule = PyCapsule_New(&tensor, kCapsuleName, release_unused_capsule);
        if (capsule == nullptr) {
          block_->release();
          throw py::error_already_set();
        }
        PyObject* result = PyObject_CallOneArg(torch.from_dlpack, capsule);
        Py_DECREF(capsule);
        if (result == nullptr) throw py::error_already_set();
        made[i] = py::reinterpret_steal<py::object>(result);
        break;
      }
      case ArrayKind::numpy: {
        const std::int64_t begin = count_ == 1 ? 0 : offsets_[i];
        const std::int64_t end = count_ == 1 ? n : offsets_[i] + n * columns;
        PyObject* slice = PySequence_GetSlice(numpy_block_.ptr(), begin, end);
        if (slice == nullptr) throw py::error_already_set();
        made[i] = py::reinterpret_steal<py::object>(slice);
        if (table && count_ > 1) made[i] = made[i].attr("reshape")(n, columns);
        break;
      }
      case ArrayKind::lists: {
        const auto item = [&](std::int64_t at) -> PyObject* {
          return type_ == IntType::int32 ? PyLong_FromLong(static_cast<const std::int32_t*>(storage(i))[at])
                                         : PyLong_FromLongLong(static_cast<const std::int64_t*>(storage(i))[at]);
        };
        py::list list(static_cast<std::size_t>(n));
        for (std::int64_t r = 0; r < n; ++r) {
          PyObject* entry = nullptr;
          if (!table) {
            entry = item(r);
          } else {
            entry = PyList_New(columns);
            for (int c = 0; entry != nullptr && c < columns; ++c) {
              PyObject* value = item(r * columns + c);
              if (value == nullptr) {
                Py_CLEAR(entry);
                break;
              }
              PyList_SET_ITEM(entry, c, value);
            }
          }
          if (entry == nullptr) throw py::error_already_set();
          PyList_SET_ITEM(list.ptr(), static_cast<Py_ssize_t>(r), entry);
        }
        made[i] = std::move(list);
        break;
      }
    }
  }
  if (count_ == 1) return std::move(made[0]);
  PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(count_));
  if (tuple == nullptr) throw py::error_already_set();
  for (std::size_t i = 0; i < count_; ++i) PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), made[i].release().ptr());
  return py::reinterpret_steal<py::object>(tuple);
}

OutBuffer::OutBuffer(py::handle value, const char* name, IntType type, Shape shape) : columns_(shape.columns) {
  const char* wanted = type == IntType::int32 ? "a writable int32 CPU tensor or numpy array"
                                              : "a writable int64 CPU tensor or numpy array";
  const auto bytes = [&] { return static_cast<std::size_t>(rows_ * columns_) * size_of(type); };
  if (is_tensor(value)) {
    const TensorMemory memory = tensor_memory(value, name, type, shape, wanted);
    data_ = memory.data;
    rows_ = memory.rows;
    memory_.enter(data_, bytes(), name, MemoryInUse::Use::written);
    tensor_ = true;
    ++tensors_in_use;
    return;
  }
  if (!PyObject_CheckBuffer(value.ptr())) type_error(std::string(name) + " must be " + wanted + ", not " + type_name(value));
  Py_buffer& view = buffer_.view;
  if (PyObject_GetBuffer(value.ptr(), &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
    PyErr_Clear();
    type_error(std::string(name) + " must be " + wanted + " (this " + type_name(value) +
               " is read-only or not contiguous)");
  }
  buffer_.held = true;
  const bool shaped = view.ndim == shape.dimensions() && (!shape.table || view.shape[1] == shape.columns);
  if (!has_type(view, type) || !shaped) {
    type_error(std::string(name) + " must be a " + dtype_name(type) + " array " + shape_wanted(shape) + ", not a " +
               describe_buffer(view, value));
  }
  data_ = view.buf;
  rows_ = view.shape[0];
  memory_.enter(data_, bytes(), name, MemoryInUse::Use::written);
}

OutBuffer::~OutBuffer() {
  if (tensor_) --tensors_in_use;
}

namespace {
thread_local MemoryInUse* last_in_use = nullptr;  // this thread's memory in use, newest last
}  // namespace

void MemoryInUse::enter(const void* data, std::size_t bytes, const char* name, Use use) {
  if (bytes == 0 || data == nullptr) return;  // nothing to read or write over
  begin_ = static_cast<const std::byte*>(data);
  end_ = begin_ + bytes;
  name_ = name;
  use_ = use;
  for (const MemoryInUse* other = last_in_use; other != nullptr; other = other->previous_) {
    if (use_ == Use::read && other->use_ == Use::read) continue;
    if (!(begin_ < other->end_ && other->begin_ < end_)) continue;
    const MemoryInUse& output = use_ == Use::written ? *this : *other;
    const MemoryInUse& overlapped = use_ == Use::written ? *other : *this;
    throw py::value_error(std::string(output.name_) + " overlaps " +
                          (overlapped.use_ == Use::written ? std::string(overlapped.name_) +
                                                                 ": each output needs memory of its own"
                                                           : "the input " + std::string(overlapped.name_) +
                                                                 ": the outputs cannot be written over what is being read"));
  }
  previous_ = last_in_use;
  if (previous_ != nullptr) previous_->next_ = this;
  last_in_use = this;
  entered_ = true;
}

MemoryInUse::~MemoryInUse() {
  if (!entered_) return;
  if (previous_ != nullptr) previous_->next_ = next_;
  if (next_ != nullptr) {
    next_->previous_ = previous_;
  } else {
    last_in_use = previous_;
  }
}

void MemoryInUse::enter_argument(py::handle value, const char* name) {
  // The span of memory strides reach from a base address: lowest and highest byte touched.
  const auto extent = [&](const void* base, int ndim, auto&& shape, auto&& stride, std::int64_t item_bytes) {
    std::int64_t low = 0, high = item_bytes;
    for (int d = 0; d < ndim; ++d) {
      if (shape(d) == 0) return;
      const std::int64_t reach = (shape(d) - 1) * stride(d);
      (reach < 0 ? low : high) += reach;
    }
    enter(static_cast<const std::byte*>(base) + low, static_cast<std::size_t>(high - low), name, Use::read);
  };
  if (is_tensor(value)) {
    if (attribute(value, names().is_cpu).ptr() != Py_True) return;  // another device's memory
    const py::tuple sizes(attribute(value, names().shape));
    const py::tuple strides(call_method(value, names().stride));
    const auto item_bytes = py::cast<std::int64_t>(call_method(value, names().element_size));
    const void* data = PyLong_AsVoidPtr(call_method(value, names().data_ptr).ptr());
    if (data == nullptr && PyErr_Occurred()) throw py::error_already_set();
    extent(data, static_cast<int>(sizes.size()), [&](int d) { return py::cast<std::int64_t>(sizes[d]); },
           [&](int d) { return py::cast<std::int64_t>(strides[d]) * item_bytes; }, item_bytes);
    return;
  }
  if (!PyObject_CheckBuffer(value.ptr())) return;
  Py_buffer view{};
  if (PyObject_GetBuffer(value.ptr(), &view, PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();
    return;  // memory the buffer protocol does not describe: nothing to compare with
  }
  const std::unique_ptr<Py_buffer, void (*)(Py_buffer*)> held(&view, PyBuffer_Release);
  extent(view.buf, view.ndim, [&](int d) { return std::int64_t{view.shape[d]}; },
         [&](int d) { return std::int64_t{view.strides[d]}; }, std::int64_t{view.itemsize});
}

py::object make_array(ArrayKind kind, const std::vector<std::int64_t>& values, IntType type) {
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
  if (kind == ArrayKind::torch) imported_torch();
  Results made(kind, type, {n});
  if (type == IntType::int32) {
    auto out = made.array<std::int32_t>(0);
    for (std::size_t i = 0; i < values.size(); ++i) out[i] = static_cast<std::int32_t>(values[i]);
  } else {
    std::memcpy(made.array<std::int64_t>(0).data(), values.data(), values.size() * sizeof(std::int64_t));
  }
  return made.finish({n});
}

namespace {

// Entries of `bytes`-wide integers (signed or not) at `data`, appended as int32; false at the first outside int32.
bool append_entries(const void* data, std::int64_t count, int bytes, bool is_signed, const char* name,
                    Int32Array& out, std::string* why) {
  const auto* raw = static_cast<const std::byte*>(data);
  for (std::int64_t i = 0; i < count; ++i) {
    std::int64_t v = 0;
    const std::byte* at = raw + i * bytes;
    switch (bytes) {
      case 1: v = is_signed ? std::int64_t{*reinterpret_cast<const std::int8_t*>(at)} : std::int64_t{*reinterpret_cast<const std::uint8_t*>(at)}; break;
      case 2: { std::int16_t s; std::uint16_t u; std::memcpy(&s, at, 2); std::memcpy(&u, at, 2); v = is_signed ? s : u; break; }
      case 4: { std::int32_t s; std::uint32_t u; std::memcpy(&s, at, 4); std::memcpy(&u, at, 4); v = is_signed ? s : static_cast<std::int64_t>(u); break; }
      default: {
        std::uint64_t u;
        std::memcpy(&u, at, 8);
        if (!is_signed && u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
          *why = std::string(name) + "[" + std::to_string(out.size()) + "] is " + std::to_string(u) + ", outside int32";
          return false;
        }
        v = static_cast<std::int64_t>(u);
      }
    }
    if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max()) {
      *why = std::string(name) + "[" + std::to_string(out.size()) + "] is " + std::to_string(v) + ", outside int32";
      return false;
    }
    out.push_back(static_cast<std::int32_t>(v));
  }
  return true;
}

bool append_int(py::handle item, const std::string& where, Int32Array& out, std::string* why) {
  PyObject* object = item.ptr();
  if (PyBool_Check(object) || !PyIndex_Check(object)) {
    *why = where + " is " + short_repr(item) + " (" + type_name(item) + "), not an integer";
    return false;
  }
  const py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(object));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0 || v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max()) {
    *why = where + " is " + py::str(index).cast<std::string>() + ", outside int32";
    return false;
  }
  out.push_back(static_cast<std::int32_t>(v));
  return true;
}

std::string shape_text(int ndim, const Py_ssize_t* shape) {
  std::string text = "(";
  for (int d = 0; d < ndim; ++d) text += (d ? ", " : "") + std::to_string(shape[d]);
  return text + (ndim == 1 ? ",)" : ")");
}

}  // namespace

namespace {

// Whether `entries` more overflow the answer's room; if not, they take it.
bool a_flood(const char* name, std::size_t entries, AnswerRoom& room, std::string* why) {
  if (entries <= room.most - std::min(room.most, room.taken)) {
    room.taken += entries;
    return false;
  }
  *why = std::string(name) + " of " + std::to_string(entries) + " entries, more than an answer to this workload can hold (" +
         std::to_string(room.most) + ")";
  if (room.taken > 0) *why += ", with the " + std::to_string(room.taken) + " entries of the outputs before it";
  return true;
}

}  // namespace

std::optional<Int32Array> read_output(py::handle value, const char* name, std::string* why, int columns,
                                      AnswerRoom& room, std::string* dtype) {
  Int32Array out;
  const std::string shape_wanted = columns == 1 ? "1-D" : "of shape (N, 2)";
  if (dtype != nullptr) dtype->clear();
  if (is_tensor(value)) {
    const Torch& torch = *loaded_torch();
    const py::object tensor_dtype = attribute(value, names().dtype);
    const Torch::Dtype* integer = nullptr;
    for (const auto& candidate : torch.integers) {
      if (candidate.object == tensor_dtype.ptr()) integer = &candidate;
    }
    const long ndim = PyLong_AsLong(attribute(value, names().ndim).ptr());
    const bool shaped = ndim == columns && (columns == 1 || py::tuple(attribute(value, names().shape))[1].cast<std::int64_t>() == 2);
    if (integer == nullptr || attribute(value, names().is_cpu).ptr() != Py_True ||
        attribute(value, names().layout).ptr() != torch.strided || !shaped) {
      *why = std::string(name) + " is a " + std::to_string(ndim) + "-D " + describe_tensor(value) + " of shape " +
             shape_of(value) + ", not a " + shape_wanted + " integer CPU tensor";
      return std::nullopt;
    }
    if (dtype != nullptr) *dtype = py::str(tensor_dtype).cast<std::string>().substr(6);  // "torch.int32" -> "int32"
    // The layout the engine hands its kernels, which read through the pointer: C-contiguous, as a
    // numpy array must be. A strided view (torch.stack([i, j]).T) is another layout, not this one copied.
    if (call_method(value, names().is_contiguous).ptr() != Py_True) {
      *why = std::string(name) + " is a tensor of shape " + shape_of(value) +
             " that is not contiguous (a strided view): a kernel reading it through its pointer sees another layout";
      return std::nullopt;
    }
    void* data = PyLong_AsVoidPtr(call_method(value, names().data_ptr).ptr());
    const long long entries = PyLong_AsLongLong(call_method(value, names().numel).ptr());
    if (entries < 0) throw py::error_already_set();
    if (a_flood(name, static_cast<std::size_t>(entries), room, why)) return std::nullopt;
    if (!storage_holds(value, data, entries, integer->bits / 8)) {
      *why = std::string(name) + " is a tensor of shape " + shape_of(value) +
             " whose storage holds fewer entries than its shape claims (a storage resized under it?)";
      return std::nullopt;
    }
    if (!append_entries(data, entries, integer->bits / 8, integer->is_signed, name, out, why)) return std::nullopt;
    return out;
  }
  if (is_list_or_tuple(value)) {
    const py::sequence items = py::reinterpret_borrow<py::sequence>(value);
    if (a_flood(name, items.size() * static_cast<std::size_t>(columns), room, why)) return std::nullopt;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const std::string where = std::string(name) + "[" + std::to_string(i) + "]";
      if (columns == 1) {
        if (!append_int(items[i], where, out, why)) return std::nullopt;
        continue;
      }
      const py::handle row = items[i];
      if (!is_list_or_tuple(row) || py::len(row) != 2) {
        *why = where + " is " + short_repr(row) + ", not a pair of integers";
        return std::nullopt;
      }
      for (std::size_t c = 0; c < 2; ++c) {
        if (!append_int(py::reinterpret_borrow<py::sequence>(row)[c], where + "[" + std::to_string(c) + "]", out, why))
          return std::nullopt;
      }
    }
    return out;
  }
  if (PyObject_CheckBuffer(value.ptr())) {
    Py_buffer view{};
    if (PyObject_GetBuffer(value.ptr(), &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
      PyErr_Clear();
      *why = std::string(name) + " is a " + type_name(value) +
             " that is not C-contiguous (a strided view or Fortran order): a kernel reading it through its pointer "
             "sees another layout";
      return std::nullopt;
    }
    const auto format = integer_format(view);
    const bool shaped = view.ndim == columns && (columns == 1 || view.shape[1] == 2);
    bool read = false;
    if (!format || !shaped) {
      *why = std::string(name) + " is a " + describe_buffer(view, value) + " of shape " +
             shape_text(view.ndim, view.shape) + ", not a " + shape_wanted + " integer array";
    } else if (!a_flood(name, static_cast<std::size_t>(view.len / view.itemsize), room, why)) {
      if (dtype != nullptr) *dtype = (format->second ? "int" : "uint") + std::to_string(8 * format->first);
      read = append_entries(view.buf, view.len / view.itemsize, format->first, format->second, name, out, why);
    }
    PyBuffer_Release(&view);
    if (!read) return std::nullopt;
    return out;
  }
  *why = std::string(name) + " is " + type_name(value) + ", not an integer tensor, array, list or tuple";
  return std::nullopt;
}

std::string utf8_of(py::handle text) {
  // A lone surrogate (which no UTF-8 holds) is escaped, never an exception of the harness's.
  const py::object bytes = py::reinterpret_steal<py::object>(PyUnicode_AsEncodedString(text.ptr(), "utf-8", "backslashreplace"));
  if (!bytes) throw py::error_already_set();
  return std::string(PyBytes_AS_STRING(bytes.ptr()), static_cast<std::size_t>(PyBytes_GET_SIZE(bytes.ptr())));
}

std::string short_repr(py::handle value, std::size_t most, int depth) {
  PyObject* object = value.ptr();
  const bool list = PyList_Check(object), tuple = PyTuple_Check(object);
  const auto repr_of = [](py::handle v) {
    const py::object text = py::reinterpret_steal<py::object>(PyObject_Repr(v.ptr()));
    if (!text) throw py::error_already_set();
    return utf8_of(text);
  };
  std::string text, count;  // the count of what was left out, kept past the cut
  if (PyUnicode_Check(object) && PyUnicode_GET_LENGTH(object) > static_cast<Py_ssize_t>(most)) {
    const py::object head = py::reinterpret_steal<py::object>(PyUnicode_Substring(object, 0, static_cast<Py_ssize_t>(most)));
    if (!head) throw py::error_already_set();
    text = repr_of(head);
    count = " (" + std::to_string(PyUnicode_GET_LENGTH(object)) + " characters)";
  } else if (PyBytes_Check(object) || PyByteArray_Check(object)) {
    constexpr Py_ssize_t kShown = 32;
    const Py_ssize_t size = PyBytes_Check(object) ? PyBytes_GET_SIZE(object) : PyByteArray_GET_SIZE(object);
    const py::object head = py::reinterpret_steal<py::object>(PySequence_GetSlice(object, 0, std::min(size, kShown)));
    if (!head) throw py::error_already_set();
    text = repr_of(head);
    if (size > kShown) count = "... (" + std::to_string(size) + " bytes)";
  } else if (list || tuple || PyAnySet_Check(object) || PyDict_Check(object)) {
    // The object's own items and count (a subclass's __len__ or __getitem__ is not asked). Each item is held
    // while its repr() runs, and the count read again after it: that code may change the container.
    constexpr Py_ssize_t kShown = 8;
    const auto size_now = [&]() -> Py_ssize_t {  // the object's own count, never a subclass's __len__
      if (list) return PyList_GET_SIZE(object);
      if (tuple) return PyTuple_GET_SIZE(object);
      return PyDict_Check(object) ? PyDict_GET_SIZE(object) : PySet_GET_SIZE(object);
    };
    const Py_ssize_t size = size_now();
    const bool exact = Py_TYPE(object) == &PyList_Type || Py_TYPE(object) == &PyTuple_Type ||
                       Py_TYPE(object) == &PySet_Type || Py_TYPE(object) == &PyFrozenSet_Type || Py_TYPE(object) == &PyDict_Type;
    const bool dict = PyDict_Check(object);
    const char* open = list ? "[" : tuple ? "(" : "{";
    const char* close = list ? "]" : tuple ? (size == 1 ? ",)" : ")") : "}";
    text = (exact ? "" : type_name(value) + "(") + open;
    Py_ssize_t position = 0;  // a dict's
    py::object items = dict || list || tuple ? py::object() : py::reinterpret_steal<py::object>(PyObject_GetIter(object));
    for (Py_ssize_t i = 0; i < kShown && i < size_now(); ++i) {
      if (i > 0) text += ", ";
      if (depth >= 2) {
        text += "...";
        break;
      }
      py::object item, key;
      if (list || tuple) {
        item = py::reinterpret_borrow<py::object>(list ? PyList_GET_ITEM(object, i) : PyTuple_GET_ITEM(object, i));
      } else if (dict) {
        PyObject *k = nullptr, *v = nullptr;
        if (!PyDict_Next(object, &position, &k, &v)) break;
        key = py::reinterpret_borrow<py::object>(k);
        item = py::reinterpret_borrow<py::object>(v);
      } else {
        if (!items) throw py::error_already_set();
        item = py::reinterpret_steal<py::object>(PyIter_Next(items.ptr()));
        if (!item) {
          if (PyErr_Occurred()) throw py::error_already_set();
          break;
        }
      }
      if (key) text += short_repr(key, most, depth + 1) + ": ";
      text += short_repr(item, most, depth + 1);
      if (text.size() > most) break;
    }
    if (size > kShown) text += ", ...";
    text += close;
    if (!exact) text += ")";
    if (size > kShown) count = " (" + std::to_string(size) + " items)";
  } else {
    text = repr_of(value);  // tensors and arrays summarize themselves
  }
  if (text.size() > most) {
    std::size_t cut = most;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // never inside a UTF-8 character
    text = text.substr(0, cut) + "...";
  }
  return text + count;
}

}  // namespace chunkmeta::python
