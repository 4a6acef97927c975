// The row pass for the compiler's default target (SSE2 on x86-64), and the
// choice of kernel for this CPU.
#define CHUNKMETA_KERNEL_ISA baseline
#include <cstdlib>
#include <string_view>

#include "write_rows_kernel.hpp"

namespace chunkmeta::detail {

namespace baseline {
RowsWritten write_rows(const RowInputs<std::int32_t>& in, const Destination& out) noexcept {
  return write_rows<std::int32_t>(in, out);
}
RowsWritten write_rows(const RowInputs<std::int64_t>& in, const Destination& out) noexcept {
  return write_rows<std::int64_t>(in, out);
}
}  // namespace baseline

bool kernel_available(Kernel kernel) noexcept {
  switch (kernel) {
    case Kernel::baseline:
      return true;
    case Kernel::avx2:
#if defined(CHUNKMETA_AVX2_KERNEL)
      return __builtin_cpu_supports("avx2") != 0;
#else
      return false;
#endif
  }
  return false;
}

template <typename Int>
RowsWritten write_rows_with(Kernel kernel, const BasicWorkloadView<Int>& workload, const Destination& out) noexcept {
  const RowInputs<Int> in{workload.chunk_size, workload.num_computed_tokens.size(),
                          workload.num_computed_tokens.data(), workload.query_start_loc.data()};
#if defined(CHUNKMETA_AVX2_KERNEL)
  if (kernel == Kernel::avx2) return avx2::write_rows(in, out);
#endif
  (void)kernel;
  return baseline::write_rows(in, out);
}

namespace {

// The kernel for this process, chosen once: AVX2 where the CPU has it, unless
// CHUNKMETA_KERNEL=baseline asks for the portable one (so tests and fuzzing
// cover the kernel that non-AVX2 machines run, on any machine).
Kernel best_kernel() noexcept {
  static const Kernel best = [] {
    const char* forced = std::getenv("CHUNKMETA_KERNEL");
    if (forced != nullptr && std::string_view(forced) == "baseline") return Kernel::baseline;
    return kernel_available(Kernel::avx2) ? Kernel::avx2 : Kernel::baseline;
  }();
  return best;
}

}  // namespace

template <typename Int>
RowsWritten write_rows(const BasicWorkloadView<Int>& workload, const Destination& out) noexcept {
  return write_rows_with(best_kernel(), workload, out);
}

template RowsWritten write_rows(const BasicWorkloadView<std::int32_t>&, const Destination&) noexcept;
template RowsWritten write_rows(const BasicWorkloadView<std::int64_t>&, const Destination&) noexcept;
template RowsWritten write_rows_with(Kernel, const BasicWorkloadView<std::int32_t>&, const Destination&) noexcept;
template RowsWritten write_rows_with(Kernel, const BasicWorkloadView<std::int64_t>&, const Destination&) noexcept;

}  // namespace chunkmeta::detail
