// Robustness target: bytes -> an arbitrary, mostly invalid workload, put to
// every spec of the registry, read as its inputs (FLA's query_start_loc as
// cu_seqlens; a block size of one chunk size where a spec reads one). Invalid input must be rejected with the reference's error by
// every implementation, never computed, never crash; valid input must be
// computed correctly. A plugin (CHUNKMETA_FUZZ_PLUGIN) is sent invalid input
// only if its flags say it validates.
// Errors are also printed (message() and operator<<, for people), which must
// name their code for any values (extreme ones included), under the
// sanitizers; on small batches the Mamba workload, its sizes and its result
// are printed too, and must name each field and show every value in order.
// On valid input, each spec's writer into caller buffers is checked too
// (harness::check_caller_buffers): each buffer one entry short (its error
// printed like the others), then all roomy.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "chunkmeta/chunkmeta.hpp"
#include "chunkmeta/harness/fuzz_input.hpp"
#include "chunkmeta/harness/report.hpp"
#include "chunkmeta/harness/spec.hpp"
#include "fuzz_implementations.hpp"

namespace {

void check_printed(const chunkmeta::Error& error) {
  std::ostringstream printed;
  printed << error;
  const std::string expected = "error " + std::string(chunkmeta::to_string(error.code)) + " at ";
  if (printed.str().rfind(expected, 0) != 0 || error.message().empty()) {
    std::fprintf(stderr, "an error printed as \"%s\", not starting \"%s\" with a message\n", printed.str().c_str(),
                 expected.c_str());
    std::abort();
  }
}

// People read workloads and results as operator<< prints them (test failures,
// counterexample reports) and copy them into tests: the printed text must
// name each field and show every value, in order. Checked on batches of up to
// kPrintedRows rows, so printing stays a small part of an execution.
constexpr std::size_t kPrintedRows = 16;

// Every integer in `text` in order (a '-' right before digits is its sign).
std::vector<std::int64_t> integers_in(const std::string& text) {
  std::vector<std::int64_t> found;
  for (std::size_t i = 0; i < text.size();) {
    const bool negative = text[i] == '-' && i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1]));
    if (!negative && !std::isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    std::size_t end = i + (negative ? 1 : 0);
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    found.push_back(std::stoll(text.substr(i, end - i)));
    i = end;
  }
  return found;
}

template <typename T>
void check_prints_values(const T& value, std::initializer_list<std::string_view> fields,
                         const std::vector<std::int64_t>& values) {
  std::ostringstream printed;
  printed << value;
  const std::string text = printed.str();
  std::size_t from = 0;
  for (std::string_view field : fields) {
    from = text.find(field, from);
    if (from == std::string::npos) {
      std::fprintf(stderr, "\"%s\" does not name %.*s (in order)\n", text.c_str(), static_cast<int>(field.size()),
                   field.data());
      std::abort();
    }
  }
  if (integers_in(text) != values) {
    std::fprintf(stderr, "\"%s\" does not show the %zu values printed from, in order\n", text.c_str(), values.size());
    std::abort();
  }
}

template <typename Int, typename Allocator>
void append(std::vector<std::int64_t>& to, const std::vector<Int, Allocator>& values) {
  to.insert(to.end(), values.begin(), values.end());
}

// `sizes` is output_sizes() of the workload, which the entry point has already asked.
void check_printing(const chunkmeta::harness::Workload& decoded,
                    const chunkmeta::Result<chunkmeta::OutputSizes>& sizes) {
  const chunkmeta::Workload workload{decoded.chunk_size, decoded.num_computed_tokens, decoded.query_start_loc};
  if (workload.num_computed_tokens.size() > kPrintedRows || workload.query_start_loc.size() > kPrintedRows + 1) return;
  std::vector<std::int64_t> values{workload.chunk_size};
  append(values, workload.num_computed_tokens);
  append(values, workload.query_start_loc);
  check_prints_values(workload, {"chunk_size", "num_computed_tokens", "query_start_loc"}, values);
  if (!sizes.ok()) return;  // the error's printing is check_printed's
  const chunkmeta::OutputSizes& need = sizes.value();
  check_prints_values(sizes, {"cu_chunk_seqlen", "seq_idx", "last_chunk_indices"},
                      {need.cu_chunk_seqlen, need.seq_idx, need.last_chunk_indices});
  if (need.num_chunks() > static_cast<std::int64_t>(4 * kPrintedRows)) return;
  const auto computed = chunkmeta::reference(chunkmeta::view_of(workload));
  if (!computed.ok()) return;
  values.clear();
  append(values, computed.value().cu_chunk_seqlen);
  append(values, computed.value().seq_idx);
  append(values, computed.value().last_chunk_indices);
  check_prints_values(computed, {"cu_chunk_seqlen", "seq_idx", "last_chunk_indices"}, values);
}

// Each buffer one entry short in turn, then all roomy.
void check_caller_buffers(const chunkmeta::harness::Spec& spec, const chunkmeta::harness::Workload& workload,
                          std::span<const std::uint8_t> input) {
  using chunkmeta::harness::Counterexample;
  const std::size_t outputs = spec.outputs().size();
  for (std::size_t shortened = 0; shortened <= outputs; ++shortened) {
    std::vector<std::int64_t> slack(outputs, shortened == outputs ? 3 : 0);
    if (shortened < outputs) slack[shortened] = -1;
    chunkmeta::Error refusal{};
    auto finding = chunkmeta::harness::check_caller_buffers(spec, workload, slack, &refusal);
    if (!finding && refusal.code == chunkmeta::ErrorCode::output_buffer_too_small) check_printed(refusal);
    if (finding) {
      Counterexample cx;
      cx.implementation = "the library's writer into caller buffers";
      cx.spec = &spec;
      std::ostringstream property;
      property << "fuzz robustness: buffers of the needed sizes plus";
      for (std::int64_t s : slack) property << ' ' << s;
      cx.property = property.str();
      cx.workload = workload;
      cx.finding = std::move(*finding);
      chunkmeta::harness::abort_on_failure({cx}, input, "robustness");
    }
  }
}

// Every spec on the decoded workload, read as its inputs (FLA's offsets as
// cu_seqlens, without computed tokens; a block size of one chunk size where a
// spec reads one), with both dtypes' writers where a spec reads the dtype.
void check_every_spec(const chunkmeta::harness::Workload& decoded, std::span<const std::uint8_t> input) {
  using namespace chunkmeta::harness;
  for (const Spec* spec : all_specs()) {
    Workload workload = decoded;
    spec->fill_unread_rows(workload);
    workload.block_size = spec->reads(Slot::block_size) ? decoded.chunk_size : 0;
    const auto error = spec->validate(workload);
    if (error) check_printed(*error);
    // Valid but too large to compute within one iteration: validation has been exercised.
    if (!error && spec->chunks(workload).value_or(0) > kFuzzMaxChunks) continue;
    abort_on_failure(check_all(workload, fuzz_implementations(*spec), "fuzz robustness"), input, "robustness");
    if (error) continue;
    for (const Dtype dtype : {Dtype::int32, Dtype::int64}) {
      if (dtype == Dtype::int64 && !spec->reads_dtype()) continue;
      workload.dtype = dtype;
      check_caller_buffers(*spec, workload, input);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace chunkmeta::harness;
  const std::span<const std::uint8_t> input(data, size);
  const Workload workload = decode_any_workload(input);
  // The library's printing of workloads, sizes and results (Mamba's value types).
  const auto sizes = chunkmeta::output_sizes(view_of(workload));
  if (!sizes.ok()) check_printed(sizes.error());
  check_printing(workload, sizes);
  check_every_spec(workload, input);
  return 0;
}
