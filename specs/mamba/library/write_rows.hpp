// The fast implementation's row pass: checks the value rules (3-5) as it
// reads the rows, cuts every row and writes its chunks. Compiled once per
// instruction set (write_rows_kernel.hpp, included by write_rows_baseline.cpp
// and, on x86-64, write_rows_avx2.cpp); write_rows picks the best one the CPU
// runs, once per process.
#pragma once

#include <cstddef>
#include <cstdint>

#include "chunkmeta/types.hpp"

namespace chunkmeta::detail {

// Where the rows go: `room` chunk slots in both cu and seq, cu_size entries
// in cu (its closing entry needs one past the chunks), and last_chunk_indices
// if it holds B entries.
struct Destination {
  std::int32_t* cu;
  std::int32_t* seq;
  std::int32_t* last;
  std::int64_t room;
  std::int64_t cu_size;
  bool last_fits;
};

struct RowsWritten {
  std::int64_t chunks = 0;
  bool out_of_domain = false;  // some value, step or c_i + n_i is outside [0, 2^31-1]: nothing more was written
  bool overflowed = false;         // some row did not fit in `room`
};

// A workload of valid shape as raw arrays: what a kernel reads.
template <typename Int>
struct RowInputs {
  std::int64_t chunk_size;
  std::size_t rows;
  const Int* computed;  // rows entries
  const Int* starts;    // rows + 1 entries
};

// The instruction sets a kernel is built for.
enum class Kernel { baseline, avx2 };

// For a workload whose shape is valid (rules 1-2), with the
// kernel the CPU runs best.
template <typename Int>
RowsWritten write_rows(const BasicWorkloadView<Int>& workload, const Destination& out) noexcept;

// One kernel by name, so tests cover every kernel on any machine that runs
// it; kernel_available says which.
bool kernel_available(Kernel kernel) noexcept;
template <typename Int>
RowsWritten write_rows_with(Kernel kernel, const BasicWorkloadView<Int>& workload, const Destination& out) noexcept;

#define CHUNKMETA_DECLARE_KERNEL(isa)                                                                     \
  namespace isa {                                                                                          \
  RowsWritten write_rows(const RowInputs<std::int32_t>& in, const Destination& out) noexcept;            \
  RowsWritten write_rows(const RowInputs<std::int64_t>& in, const Destination& out) noexcept;            \
  }
CHUNKMETA_DECLARE_KERNEL(baseline)
CHUNKMETA_DECLARE_KERNEL(avx2)
#undef CHUNKMETA_DECLARE_KERNEL

}  // namespace chunkmeta::detail
