// Validation and output sizing in one place, used by every implementation.
#pragma once

#include "chunkmeta/types.hpp"

namespace chunkmeta::detail {

template <typename Int>
Result<OutputSizes> checked_sizes(const BasicWorkloadView<Int>& workload, const Limits& limits) noexcept;

extern template Result<OutputSizes> checked_sizes(const WorkloadView&, const Limits&) noexcept;
extern template Result<OutputSizes> checked_sizes(const WorkloadView32&, const Limits&) noexcept;

}  // namespace chunkmeta::detail
