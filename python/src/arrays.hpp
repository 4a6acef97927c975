// Python values <-> the library's arrays, with no link to torch or numpy: torch
// tensors are read through their public Python attributes and made through
// DLPack capsules (torch._C._from_dlpack), numpy arrays and other buffers are
// read through the buffer protocol and made with numpy.empty, and lists and
// tuples of ints are copied. Neither torch nor numpy is imported to read; each
// is looked up once it is (and torch only ever when a tensor is at hand).
#pragma once

#include <pybind11/pybind11.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "chunkmeta/types.hpp"

namespace chunkmeta::python {

namespace py = pybind11;

// What a caller passed, and so what its results are made as.
enum class ArrayKind { torch, numpy, lists };
enum class IntType { int32, int64 };

// "torch", "numpy" or "lists" as check()'s `arrays` names them; ValueError otherwise.
ArrayKind array_kind(const std::string& name);
// The kind of results for these inputs: torch if any is a tensor, else numpy if
// any is a buffer, else lists.
ArrayKind kind_of_results(std::initializer_list<ArrayKind> inputs);

// An array's shape past its rows: a vector (1-D), or a table of `columns`
// (2-D, even of one column, as vLLM's .view(rows, -1) gives it; 0 columns: any
// width, for an input).
struct Shape {
  int columns = 1;
  bool table = false;
  static constexpr Shape table_of(int columns) { return {columns, true}; }
  int dimensions() const { return table ? 2 : 1; }
};

// A buffer's export, released with its holder (a constructor that throws after taking it included).
struct BufferExport {
  Py_buffer view{};
  bool held = false;
  BufferExport() = default;
  BufferExport(const BufferExport&) = delete;
  BufferExport& operator=(const BufferExport&) = delete;
  ~BufferExport() {
    if (held) PyBuffer_Release(&view);
  }
};

// Memory one drop-in call reads in place (an input) or writes (an out=
// buffer), registered on this thread for as long as it is alive. Whichever of
// two arrives second is checked against the first: memory written that
// overlaps any other is a ValueError naming both (the library writes each
// output whole while reading the inputs, so overlapping memory would give
// wrong metadata or change the caller's input without a word). InputArray and
// OutBuffer register themselves, so a drop-in cannot leave one out.
class MemoryInUse {
 public:
  enum class Use { read, written };
  MemoryInUse() = default;
  MemoryInUse(const MemoryInUse&) = delete;
  MemoryInUse& operator=(const MemoryInUse&) = delete;
  ~MemoryInUse();
  // Registers `bytes` from `data`, after checking them against what is in use;
  // `name` (the argument, e.g. "out[0] (cu_chunk_seqlen)") must outlive this.
  void enter(const void* data, std::size_t bytes, const char* name, Use use);
  // An argument whose memory is not read yet must not be written over (FLA's
  // cu_seqlens when its values come from cu_seqlens_cpu): a CPU tensor's or a
  // buffer's extent, of any dtype and strides; nothing for anything else.
  void enter_argument(py::handle value, const char* name);

 private:
  const std::byte* begin_ = nullptr;
  const std::byte* end_ = nullptr;
  const char* name_ = nullptr;
  Use use_ = Use::read;
  MemoryInUse* previous_ = nullptr;
  MemoryInUse* next_ = nullptr;
  bool entered_ = false;
};

// The integers of one input argument: a view of a tensor's or a buffer's
// memory (no copy), or the values of a list or tuple of ints, copied wide (they
// may lie outside int32, to be named by validation).
class InputArray {
 public:
  // Raises TypeError naming `argument` for anything else: another dtype, a
  // device other than the CPU, a strided view, more dimensions, a dict, a
  // generator or any other iterable. `int64_allowed`: int64 tensors and
  // buffers are read in place too (else only int32).
  InputArray(py::handle value, const char* argument, bool int64_allowed = false);
  // A 2-D table (an engine's block table): an int32 CPU tensor or numpy array
  // read in place, or a list of equal-length lists of ints copied; its entries
  // row after row, `columns()` wide.
  struct Table {};
  InputArray(py::handle value, const char* argument, Table);
  InputArray(const InputArray&) = delete;
  InputArray& operator=(const InputArray&) = delete;
  ~InputArray();

  ArrayKind kind() const { return kind_; }
  // The type the values are held in: a tensor's or buffer's own, int64 for a copied sequence.
  IntType type() const { return type_; }
  bool copied() const { return copied_; }
  std::span<const std::int32_t> int32() const { return {static_cast<const std::int32_t*>(data_), size_}; }
  std::span<const std::int64_t> int64() const { return {static_cast<const std::int64_t*>(data_), size_}; }
  std::vector<std::int64_t> widened() const;
  std::size_t size() const { return size_; }
  std::int64_t columns() const { return columns_; }  // 1, or a table's width

 private:
  InputArray(py::handle value, const char* argument, int dimensions, bool int64_allowed);
  void copy_rows(py::handle value, const char* argument);
  ArrayKind kind_ = ArrayKind::lists;
  IntType type_ = IntType::int64;
  bool copied_ = false;
  const void* data_ = nullptr;
  std::size_t size_ = 0;
  std::int64_t columns_ = 1;
  std::vector<std::int64_t> values_;
  BufferExport buffer_;
  py::object owner_;  // the tensor whose memory is read
  MemoryInUse memory_;  // what is read in place, while it is read
};

// A Python int (or an object with __index__, not a bool) as int64. One that no
// int64 holds is chunkmeta.InvalidWorkload (value_too_large or negative_value on
// field `argument`) showing the value as given, never clamped to int64.
std::int64_t to_int64(py::handle value, const char* argument);
// A flag argument: True or False, nothing else (an engine passes a bool; 0, 1 or None is a TypeError).
bool to_flag(py::handle value, const char* argument);

// New results, made in one allocation: `capacities` arrays of one integer type,
// each of its `shapes` (1-D unless given), written in place and then
// handed to Python as tensors, numpy arrays or lists of their final lengths.
class Results {
 public:
  static constexpr std::size_t kMostArrays = 6;
  Results(ArrayKind kind, IntType type, std::initializer_list<std::int64_t> capacities,
          std::initializer_list<Shape> shapes = {});
  Results(const Results&) = delete;
  Results& operator=(const Results&) = delete;
  ~Results();

  template <typename Int>
  std::span<Int> array(std::size_t i) const {
    return {static_cast<Int*>(storage(i)), static_cast<std::size_t>(capacities_[i] * shapes_[i].columns)};
  }
  // Each array shortened to `rows[i]` rows, as Python objects (a tuple when
  // there are several arrays, else the one array).
  py::object finish(std::initializer_list<std::int64_t> rows);

 private:
  void* storage(std::size_t i) const;
  ArrayKind kind_;
  IntType type_;
  std::size_t count_ = 0;                              // arrays
  std::array<std::int64_t, kMostArrays> capacities_{};  // rows of each
  std::array<Shape, kMostArrays> shapes_{};
  std::array<std::int64_t, kMostArrays> offsets_{};    // of each array in the block, in entries
  struct Block;
  Block* block_ = nullptr;             // torch and lists: our allocation
  py::object numpy_block_;             // numpy: the array holding every result
  Py_buffer numpy_view_{};
  bool holds_numpy_view_ = false;
};

// A caller's buffer results are written into (`out=`): a writable, C-contiguous
// CPU tensor or buffer of `type` and `shape` (1-D, or (rows, k) for a table of k); TypeError naming `name` otherwise,
// ValueError naming both when it overlaps an input or another output in use (MemoryInUse).
class OutBuffer {
 public:
  OutBuffer(py::handle value, const char* name, IntType type, Shape shape = {});
  OutBuffer(const OutBuffer&) = delete;
  OutBuffer& operator=(const OutBuffer&) = delete;
  ~OutBuffer();

  template <typename Int>
  std::span<Int> entries() const {
    return {static_cast<Int*>(data_), static_cast<std::size_t>(rows_ * columns_)};
  }
  std::int64_t rows() const { return rows_; }

 private:
  void* data_ = nullptr;
  std::int64_t rows_ = 0;
  int columns_ = 1;
  BufferExport buffer_;
  bool tensor_ = false;
  MemoryInUse memory_;  // what is written, checked against every input and output in use
};

// Whether this thread reads or writes a tensor's memory (an InputArray or an
// OutBuffer of a tensor is alive): the GIL must then stay held, as another
// thread could give the tensor other storage (t.set_()) and free this one.
// A buffer's export, or our own results, keep their memory however long.
bool tensor_memory_in_use();

// An argument for the function under test, as the engine would pass it.
py::object make_array(ArrayKind kind, const std::vector<std::int64_t>& values, IntType type = IntType::int32);

// repr() of a value from code under test in at most about `most` characters,
// never built whole: a list, tuple or bytes-like value (subclasses too) shows
// its first items, each shortened the same way, and its count; any other is
// repr()'d (tensors and arrays summarize themselves) and cut. What repr()
// raises goes on to the caller.
std::string short_repr(py::handle value, std::size_t most = 80, int depth = 0);
// A str's text as UTF-8, a lone surrogate escaped (\\udc80) rather than an exception.
std::string utf8_of(py::handle text);

// One output of the function under test as int32 values (rows of `columns`
// entries, flattened), or why it is not one: a sentence naming `name`. Accepts
// integer tensors and buffers (any integer dtype, read as values), and lists
// and tuples of ints (of pairs for `columns` 2). `dtype`, if given, receives
// the tensor's or array's dtype name ("int32", "int64", ...; "" for a sequence).
// An answer's outputs together hold at most `most` entries (Spec::most_answer_entries);
// each output read takes its entries (`taken`).
struct AnswerRoom {
  std::size_t most = 0;
  std::size_t taken = 0;
};
// One of more entries than `room` has left is a flood, refused before a single entry is read.
std::optional<Int32Array> read_output(py::handle value, const char* name, std::string* why, int columns,
                                      AnswerRoom& room, std::string* dtype = nullptr);

}  // namespace chunkmeta::python
