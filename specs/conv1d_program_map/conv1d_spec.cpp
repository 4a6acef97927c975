// specs/conv1d_program_map as a Spec: its inputs and three outputs described,
// its four invariants checked from query_start_loc and block_m alone, the
// library's entry points as built-ins (the writer pads with -1), and FLA's
// fuzz codec for cu_seqlens (the same input domain), int32 as vLLM holds it.
#include "conv1d_spec.hpp"

#include "chunkmeta/harness/states.hpp"
#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/violation.hpp"

namespace chunkmeta::harness {
namespace {

using conv1d::ProgramMap;

enum Output : std::size_t { nums, batch_ptr, token_chunk_offset_ptr };

std::int64_t length_of(const Workload& w, std::size_t i) { return w.query_start_loc[i + 1] - w.query_start_loc[i]; }
std::int64_t programs_of(const Workload& w, std::size_t i) { return (length_of(w, i) + w.chunk_size - 1) / w.chunk_size; }

// The contract's four invariants, for a valid workload.
std::optional<InvariantViolation> map_invariants(const Workload& w, const Arrays& arrays) {
  if (arrays.size() != 3) return Violation(2, "size", -1, -1) << arrays.size() << " arrays; the outputs are three";
  const std::size_t rows = w.query_start_loc.size() - 1;
  const std::int64_t M = w.chunk_size;
  // 1. Programs per row: nums[i] = ceil(n_i / block_m).
  if (arrays[nums].size() != rows)
    return Violation(1, "programs per row", -1, -1) << "nums has " << arrays[nums].size() << " entries; the batch has "
                                                    << rows << " rows";
  std::int64_t tot = 0;
  for (std::size_t i = 0; i < rows; ++i) {
    if (arrays[nums][i] != programs_of(w, i))
      return Violation(1, "programs per row", static_cast<std::int64_t>(i), -1)
             << "nums[" << i << "] = " << arrays[nums][i] << "; row " << i << " has " << length_of(w, i)
             << " tokens, ceil(n / " << M << ") = " << programs_of(w, i) << " programs";
    tot += programs_of(w, i);
  }
  // 2. Size: tot = sum(nums) programs in each of the two columns.
  for (const std::size_t a : {std::size_t{batch_ptr}, std::size_t{token_chunk_offset_ptr}}) {
    if (static_cast<std::int64_t>(arrays[a].size()) != tot)
      return Violation(2, "size", -1, -1) << (a == batch_ptr ? "batch_ptr" : "token_chunk_offset_ptr") << " has "
                                          << arrays[a].size() << " entries; tot = sum(nums) = " << tot;
  }
  std::vector<std::int64_t> found(rows, 0);
  for (std::int64_t p = 0; p < tot; ++p) {
    const auto at = static_cast<std::size_t>(p);
    const std::int64_t r = arrays[batch_ptr][at];
    const std::int64_t o = arrays[token_chunk_offset_ptr][at];
    // 3. Order: (row, block) increasing, rows of the batch, blocks from 0.
    if (r < 0 || r >= static_cast<std::int64_t>(rows) || o < 0)
      return Violation(3, "order", r, p) << "program " << p << " is (row " << r << ", block " << o << "): the row must be "
                                         << "in [0, " << rows << ") and the block at least 0";
    if (p > 0) {
      const std::int64_t pr = arrays[batch_ptr][at - 1];
      const std::int64_t po = arrays[token_chunk_offset_ptr][at - 1];
      if (r < pr || (r == pr && o <= po))
        return Violation(3, "order", r, p) << "program " << p << " (row " << r << ", block " << o
                                           << ") does not follow program " << p - 1 << " (row " << pr << ", block "
                                           << po << ")";
    }
    // 4. Tiling: the program's tokens [q[r] + M o, min(q[r] + M (o + 1), q[r + 1])) are not empty.
    const std::int64_t n = length_of(w, static_cast<std::size_t>(r));
    if (o * M >= n)
      return Violation(4, "tiling", r, p) << "program " << p << " handles block " << o << " of row " << r << ", tokens "
                                          << o * M << ".. of a row of " << n << ": it is empty";
    ++found[static_cast<std::size_t>(r)];
  }
  // 4. Tiling: with 3, ceil(n / M) non-empty blocks per row cover it exactly once, in order.
  for (std::size_t i = 0; i < rows; ++i) {
    if (found[i] != programs_of(w, i))
      return Violation(4, "tiling", static_cast<std::int64_t>(i), -1)
             << "row " << i << " (" << length_of(w, i) << " tokens) has " << found[i] << " programs; its tokens need "
             << programs_of(w, i);
  }
  return std::nullopt;
}

template <typename Compute32>
Outcome through_int32(const Workload& w, Compute32&& compute) {
  if (!fits_int32(w)) return *conv1d::validate(conv1d_view(w));
  const std::vector<std::int32_t> q(w.query_start_loc.begin(), w.query_start_loc.end());
  return compute(conv1d::View32{q, w.chunk_size});
}

Outcome as_outcome(Result<ProgramMap>&& result) {
  if (!result.ok()) return result.error();
  return arrays_of(std::move(result).value());
}

// Buffers of the exact sizes filled with -7 (an entry left unwritten shows), written by program_map_into.
template <typename View>
Outcome into_buffers(const View& view) {
  const auto sizes = conv1d::output_sizes(view);
  if (!sizes.ok()) return sizes.error();
  const auto programs = static_cast<std::size_t>(sizes.value().programs);
  ProgramMap out{Int32Array(static_cast<std::size_t>(sizes.value().rows), -7), Int32Array(programs, -7),
                 Int32Array(programs, -7)};
  const auto written = conv1d::program_map_into(view, {out.nums, out.batch_ptr, out.token_chunk_offset_ptr});
  if (!written.ok()) return written.error();
  return arrays_of(std::move(out));
}

// FLA's codec, the dtype int32 (the engine's query_start_loc; byte 0's top bit ignored).
Workload decode_map(std::span<const std::uint8_t> bytes) {
  Workload w = decode_valid_cu_seqlens(bytes);
  w.dtype = Dtype::int32;
  return w;
}

std::optional<std::vector<std::uint8_t>> encode_map(const Workload& w) {
  if (w.dtype != Dtype::int32) return std::nullopt;
  return encode_valid_cu_seqlens(w);
}

class ProgramMapSpec final : public Spec {
 public:
  std::string_view name() const override { return "conv1d.program_map"; }
  std::string_view summary() const override {
    return "the causal conv1d kernel's program map: one program per block_m tokens of a row, as (row, block) "
           "(specs/conv1d_program_map)";
  }
  std::span<const Input> inputs() const override { return kInputs; }
  std::string_view unit() const override { return "row"; }
  std::span<const OutputArray> outputs() const override { return kOutputs; }
  std::optional<Error> validate(const Workload& w, const Limits& limits) const override {
    return conv1d::validate(conv1d_view(w), limits);
  }
  std::optional<std::int64_t> chunks(const Workload& w) const override {
    const auto sizes = conv1d::output_sizes(conv1d_view(w));
    if (!sizes.ok()) return std::nullopt;
    return sizes.value().programs;
  }
  std::optional<std::vector<std::int64_t>> output_entries(const Workload& w) const override {
    const auto sizes = conv1d::output_sizes(conv1d_view(w));
    if (!sizes.ok()) return std::nullopt;
    return std::vector<std::int64_t>{sizes.value().rows, sizes.value().programs, sizes.value().programs};
  }
  Outcome reference(const Workload& w) const override { return as_outcome(conv1d::reference(conv1d_view(w))); }
  std::optional<kernel_view::Fault> kernels_view(const Workload& w, const Arrays& arrays, bool /*with_cache*/) const override {
    if (auto missing = too_few_outputs(*this, arrays, 3)) return missing;
    return kernel_view::conv1d_programs(w.query_start_loc, w.chunk_size, arrays[1], arrays[2]);
  }
  std::string_view kernels_view_covers() const override {
    return "kernel-adequate: the programs (batch_ptr, token_chunk_offset_ptr; padding -1 does nothing) cover every "
           "token once, in row order, in blocks of block_m from each row's start";
  }
  std::optional<InvariantViolation> check_invariants(const Workload& w, const Arrays& arrays) const override {
    return map_invariants(w, arrays);
  }
  Result<std::vector<std::vector<std::int64_t>>> write_into(const Workload& w, std::span<const std::int64_t> sizes,
                                                            std::int64_t fill) const override {
    std::vector<std::int32_t> buffers[3];
    for (std::size_t b = 0; b < 3; ++b) buffers[b].assign(static_cast<std::size_t>(sizes[b]), static_cast<std::int32_t>(fill));
    const auto written = conv1d::program_map_into(conv1d_view(w), {buffers[0], buffers[1], buffers[2]});
    if (!written.ok()) return written.error();
    std::vector<std::vector<std::int64_t>> whole;
    for (const auto& buffer : buffers) whole.emplace_back(buffer.begin(), buffer.end());
    return whole;
  }
  BufferRest rest_of_buffer(std::size_t output) const override {
    return output == nums ? BufferRest::kept : BufferRest::padded;
  }
  std::string_view fuzz_target() const override { return "conv1d_program_map_differential"; }
  Workload decode_fuzz_input(std::span<const std::uint8_t> bytes) const override { return decode_map(bytes); }
  std::optional<std::vector<std::uint8_t>> encode_fuzz_input(const Workload& w) const override { return encode_map(w); }
  const std::vector<Implementation>& builtins() const override {
    static const std::vector<Implementation> all = {
        in_process("reference", "vLLM's procedure, ported step by step", *this,
                   [this](const Workload& w) { return reference(w); }),
        in_process("fast", "production implementation, returning, int64 query_start_loc", *this,
                   [](const Workload& w) { return as_outcome(conv1d::program_map(conv1d_view(w))); }),
        in_process("fast-int32", "production implementation, returning, engine int32 query_start_loc", *this,
                   [](const Workload& w) {
                     return through_int32(w, [](const conv1d::View32& v) { return as_outcome(conv1d::program_map(v)); });
                   }),
        in_process("fast-into", "production implementation, caller buffers, int64 query_start_loc", *this,
                   [](const Workload& w) { return into_buffers(conv1d_view(w)); }),
        in_process("fast-into-int32", "production implementation, caller buffers, engine int32 query_start_loc", *this,
                   [](const Workload& w) {
                     return through_int32(w, [](const conv1d::View32& v) { return into_buffers(v); });
                   }),
    };
    return all;
  }

 private:
  // chunkmeta.causal_conv1d_program_map(query_start_loc, block_m=8).
  static constexpr Input kInputs[] = {{"query_start_loc", Slot::offsets}, {"block_m", Slot::chunk_size}};
  static constexpr OutputArray kOutputs[] = {{"nums"}, {"batch_ptr"}, {"token_chunk_offset_ptr"}};
};

}  // namespace

const Spec& conv1d_program_map_spec() {
  static const ProgramMapSpec spec;
  return spec;
}

std::vector<const Spec*> specs_of_conv1d_program_map() { return {&conv1d_program_map_spec()}; }

Arrays arrays_of(conv1d::ProgramMap&& map) {
  Arrays arrays;
  arrays.reserve(3);
  arrays.push_back(std::move(map.nums));
  arrays.push_back(std::move(map.batch_ptr));
  arrays.push_back(std::move(map.token_chunk_offset_ptr));
  return arrays;
}

}  // namespace chunkmeta::harness
