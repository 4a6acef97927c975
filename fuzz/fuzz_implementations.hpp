// The implementations the fuzz targets check, per spec: the built-in ones or a
// plugin's (CHUNKMETA_FUZZ_PLUGIN), or, in the test-only planted build, a
// deliberately wrong one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "chunkmeta/harness/oracle.hpp"

const std::vector<chunkmeta::harness::Implementation>& fuzz_implementations(const chunkmeta::harness::Spec& spec);

// The differential targets' one body (each spec folder's fuzz/<target>.cpp is
// this call): one implementation of `specs` (their fuzz_implementations in
// order), picked by byte 0's low 7 bits, gets the valid workload its spec's
// codec decodes from the bytes and is judged by the oracle against the
// reference (the reference itself against the spec's invariants); a failure
// prints everything and aborts. `specs` and `target` are the same on every call.
int fuzz_differential(std::initializer_list<const chunkmeta::harness::Spec*> specs, const std::uint8_t* data,
                      std::size_t size, std::string_view target);
