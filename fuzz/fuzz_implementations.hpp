// The implementations the fuzz targets check, per spec: the built-in ones or a
// plugin's (CHUNKMETA_FUZZ_PLUGIN), or, in the test-only planted build, a
// deliberately wrong one.
#pragma once

#include <vector>

#include "chunkmeta/harness/oracle.hpp"

const std::vector<chunkmeta::harness::Implementation>& fuzz_implementations(const chunkmeta::harness::Spec& spec);
