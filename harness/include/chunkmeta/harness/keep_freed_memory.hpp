// For programs that allocate and free outputs of hundreds of kilobytes to
// megabytes call after call (the CLI's cases, the benchmark's fast() and
// reference()): glibc by default maps blocks that large afresh and trims the
// heap's top on free, so every call paid page faults and the clearing of new
// pages (~20% of a check run; 350 us instead of 5 us for one fast() call
// with a 33,489-chunk output on this project's VM). Keeping freed memory in
// the heap costs at most the largest call's footprint.
#pragma once

#include <cstdlib>  // defines __GLIBC__ on glibc
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace chunkmeta::harness {

// Returns whether the C library took both settings (only glibc has them).
inline bool keep_freed_memory() noexcept {
#if defined(__GLIBC__)
  constexpr int kLargest = 1 << 30;
  const bool mapped = mallopt(M_MMAP_THRESHOLD, kLargest) == 1;
  const bool trimmed = mallopt(M_TRIM_THRESHOLD, kLargest) == 1;
  return mapped && trimmed;
#else
  return false;
#endif
}

}  // namespace chunkmeta::harness
