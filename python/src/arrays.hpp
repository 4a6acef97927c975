// Python values <-> the library's arrays, for the extension module: int32 torch
// tensors read in place and created at their exact size, objects with the
// buffer protocol (numpy) read in place, and sequences of ints copied.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "chunkmeta/chunkmeta.hpp"

namespace chunkmeta::python {

namespace py = pybind11;

// The integers of one input argument: an int32 view (tensor or buffer, no copy)
// or wide values (a sequence of Python ints, which may lie outside int32).
class InputArray {
 public:
  // Raises TypeError (py::error_already_set) for anything that is not a CPU,
  // contiguous, 1-D int32 tensor or buffer, or a sequence of ints.
  InputArray(py::handle value, const char* argument);
  InputArray(const InputArray&) = delete;
  InputArray& operator=(const InputArray&) = delete;
  ~InputArray();

  bool is_int32() const { return !wide_; }
  std::span<const std::int32_t> int32() const { return narrow_; }
  std::vector<std::int64_t> widened() const;
  std::size_t size() const { return wide_ ? wide_->size() : narrow_.size(); }

 private:
  std::span<const std::int32_t> narrow_;
  std::optional<std::vector<std::int64_t>> wide_;
  Py_buffer buffer_{};
  bool holds_buffer_ = false;
};

// A Python int (or an object with __index__, not a bool) as int64, saturating
// beyond it so that validation names the value as too large or negative.
std::int64_t to_int64(py::handle value, const char* argument);

// Three int32 output tensors allocated for `capacity` entries each, written in
// place, then given their final lengths (<= capacity) without copying.
class OutputTensors {
 public:
  OutputTensors(std::int64_t cu_capacity, std::int64_t seq_capacity, std::int64_t last_capacity);
  ~OutputTensors();
  OutputBuffers buffers() const;
  // Shortens each tensor to `sizes` and hands the three to Python.
  py::tuple finish(const OutputSizes& sizes);

 private:
  struct Tensors;
  std::unique_ptr<Tensors> tensors_;
};

// How check() hands a workload's arrays to the function under test.
enum class ArrayKind { torch, numpy, lists };
py::object make_array(ArrayKind kind, const std::vector<std::int64_t>& values);

// One output of the function under test as int32 values, or why it is not one
// (a sentence naming `name`). Accepts tensors, buffers and sequences of ints.
std::optional<chunkmeta::Int32Array> read_output(py::handle value, const char* name, std::string* why);

}  // namespace chunkmeta::python
