// The row pass built for AVX2 (this file alone is compiled with -mavx2);
// write_rows_baseline.cpp calls it only on CPUs that report AVX2.
#define CHUNKMETA_KERNEL_ISA avx2
#include "write_rows_kernel.hpp"

namespace chunkmeta::detail::avx2 {
RowsWritten write_rows(const RowInputs<std::int32_t>& in, const Destination& out) noexcept {
  return write_rows<std::int32_t>(in, out);
}
RowsWritten write_rows(const RowInputs<std::int64_t>& in, const Destination& out) noexcept {
  return write_rows<std::int64_t>(in, out);
}
}  // namespace chunkmeta::detail::avx2
