// The implementations the differential target checks: the built-in ones, or,
// in the test-only planted build, a deliberately wrong one.
#pragma once

#include <vector>

#include "chunkmeta/harness/oracle.hpp"

const std::vector<chunkmeta::harness::Implementation>& fuzz_implementations();
