#include "chunkmeta/harness/oracle.hpp"

#include <algorithm>
#include <ostream>
#include <sstream>

namespace chunkmeta::harness {

std::string_view to_string(FindingKind kind) noexcept {
  switch (kind) {
    case FindingKind::mismatch: return "mismatch";
    case FindingKind::invariant_violated: return "invariant_violated";
    case FindingKind::unexpected_error: return "unexpected_error";
    case FindingKind::accepted_invalid: return "accepted_invalid";
    case FindingKind::wrong_error: return "wrong_error";
    case FindingKind::relation_broken: return "relation_broken";
    case FindingKind::crashed: return "crashed";
    case FindingKind::timed_out: return "timed_out";
    case FindingKind::malformed_output: return "malformed_output";
    case FindingKind::missing_output: return "missing_output";
    case FindingKind::raised: return "raised";
  }
  return "unknown";
}

bool is_misbehaviour(FindingKind kind) noexcept {
  switch (kind) {
    case FindingKind::crashed:
    case FindingKind::timed_out:
    case FindingKind::malformed_output:
    case FindingKind::missing_output:
    case FindingKind::raised: return true;
    default: return false;
  }
}

namespace {

struct Violation {
  InvariantViolation value;
  Violation(int number, std::string name, std::int64_t row, std::int64_t chunk)
      : value{number, std::move(name), row, chunk, {}} {}
  template <typename T>
  Violation& operator<<(const T& part) {
    std::ostringstream os;
    os << part;
    value.detail += os.str();
    return *this;
  }
  operator std::optional<InvariantViolation>() const { return value; }  // NOLINT
};

std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b; }  // a >= 0, b > 0

}  // namespace

std::optional<InvariantViolation> check_invariants(const Workload& workload, const ChunkMetadata& result) {
  const auto& computed = workload.num_computed_tokens;
  const auto& q = workload.query_start_loc;
  const std::int64_t chunk_size = workload.chunk_size;
  const auto rows = static_cast<std::int64_t>(computed.size());
  const auto& cu = result.cu_chunk_seqlen;
  const auto& seq = result.seq_idx;
  const auto& last = result.last_chunk_indices;
  const auto start_of = [&](std::int64_t row) { return q[static_cast<std::size_t>(row)] - q[0]; };
  const auto end_of = [&](std::int64_t row) { return q[static_cast<std::size_t>(row) + 1] - q[0]; };

  // 1. Shapes.
  if (cu.empty()) return Violation(1, "shapes", -1, -1) << "cu_chunk_seqlen is empty; it must have K+1 entries";
  const auto chunks = static_cast<std::int64_t>(cu.size()) - 1;
  if (static_cast<std::int64_t>(seq.size()) != chunks)
    return Violation(1, "shapes", -1, -1) << "seq_idx has " << seq.size() << " entries, cu_chunk_seqlen has "
                                          << cu.size() << " (K+1 = " << cu.size() << " needs K = " << chunks << ")";
  if (static_cast<std::int64_t>(last.size()) != rows)
    return Violation(1, "shapes", -1, -1) << "last_chunk_indices has " << last.size() << " entries; the batch has "
                                          << rows << " rows";
  if (cu[0] != 0) return Violation(1, "shapes", -1, 0) << "cu_chunk_seqlen[0] is " << cu[0] << ", not 0";
  const std::int64_t total = q.back() - q.front();
  if (cu.back() != total)
    return Violation(1, "shapes", -1, chunks) << "cu_chunk_seqlen[K] is " << cu.back() << ", not q[B]-q[0] = "
                                              << total;

  // 2. Order.
  for (std::int64_t k = 0; k < chunks; ++k) {
    if (cu[k + 1] < cu[k])
      return Violation(2, "order", -1, k) << "cu_chunk_seqlen decreases: [" << k << "] = " << cu[k] << ", ["
                                          << k + 1 << "] = " << cu[k + 1];
    if (seq[k] < 0 || seq[k] >= rows)
      return Violation(2, "order", -1, k) << "seq_idx[" << k << "] = " << seq[k] << " is outside [0, " << rows << ")";
    if (k > 0 && seq[k] < seq[k - 1])
      return Violation(2, "order", seq[k], k) << "seq_idx decreases: [" << k - 1 << "] = " << seq[k - 1] << ", ["
                                              << k << "] = " << seq[k];
  }

  // 3. One row per chunk.
  for (std::int64_t k = 0; k < chunks; ++k) {
    const std::int64_t row = seq[k];
    if (cu[k] < start_of(row) || cu[k + 1] > end_of(row))
      return Violation(3, "one row per chunk", row, k) << "chunk " << k << " = [" << cu[k] << ", " << cu[k + 1]
                                                       << ") leaves row " << row << "'s span [" << start_of(row)
                                                       << ", " << end_of(row) << ")";
  }

  // Chunks of each row: seq_idx is non-decreasing, so they form one run [first, end).
  std::vector<std::int64_t> first_chunk(static_cast<std::size_t>(rows), -1);
  std::vector<std::int64_t> chunk_count(static_cast<std::size_t>(rows), 0);
  for (std::int64_t k = 0; k < chunks; ++k) {
    const auto row = static_cast<std::size_t>(seq[k]);
    if (first_chunk[row] < 0) first_chunk[row] = k;
    ++chunk_count[row];
  }

  // 4. Tiling.
  for (std::int64_t row = 0; row < rows; ++row) {
    const auto r = static_cast<std::size_t>(row);
    if (chunk_count[r] == 0) {
      if (end_of(row) != start_of(row))
        return Violation(4, "tiling", row, -1) << "row " << row << " has " << end_of(row) - start_of(row)
                                               << " new tokens but no chunk";
      continue;
    }
    const std::int64_t first = first_chunk[r];
    const std::int64_t past = first + chunk_count[r];
    if (cu[first] != start_of(row) || cu[past] != end_of(row))
      return Violation(4, "tiling", row, first) << "row " << row << "'s chunks cover [" << cu[first] << ", "
                                                << cu[past] << "), its span is [" << start_of(row) << ", "
                                                << end_of(row) << ")";
  }

  // 5. Alignment: no chunk crosses a multiple of C in the row's absolute positions.
  for (std::int64_t k = 0; k < chunks; ++k) {
    if (cu[k + 1] == cu[k]) continue;
    const std::int64_t row = seq[k];
    const std::int64_t begin = computed[static_cast<std::size_t>(row)] + (cu[k] - start_of(row));
    const std::int64_t end = computed[static_cast<std::size_t>(row)] + (cu[k + 1] - start_of(row));
    if (floor_div(begin, chunk_size) != floor_div(end - 1, chunk_size))
      return Violation(5, "alignment", row, k) << "chunk " << k << " covers absolute positions [" << begin << ", "
                                               << end << ") of row " << row << ", crossing a multiple of "
                                               << chunk_size;
  }

  // 6. Minimality: exactly the chunks forced by 3-5; empty only for a zero-token
  // unaligned row, where the reference emits its realigning chunk.
  for (std::int64_t row = 0; row < rows; ++row) {
    const auto r = static_cast<std::size_t>(row);
    const std::int64_t c = computed[r];
    const std::int64_t n = end_of(row) - start_of(row);
    const bool unaligned = c % chunk_size != 0;
    const std::int64_t forced =
        n == 0 ? (unaligned ? 1 : 0) : floor_div(c + n - 1, chunk_size) - floor_div(c, chunk_size) + 1;
    if (chunk_count[r] != forced)
      return Violation(6, "minimality", row, first_chunk[r]) << "row " << row << " (computed " << c << ", new "
                                                             << n << ", C " << chunk_size << ") has "
                                                             << chunk_count[r] << " chunks; " << forced
                                                             << " are forced";
    if (n == 0) continue;
    for (std::int64_t k = first_chunk[r]; k < first_chunk[r] + chunk_count[r]; ++k) {
      if (cu[k + 1] == cu[k])
        return Violation(6, "minimality", row, k) << "chunk " << k << " of row " << row
                                                  << " is empty although the row has " << n << " new tokens";
    }
  }

  // 7. Last chunks: the index of the row's final chunk; for a row without
  // chunks, the reference appends (entries so far) - 1, the previous chunk.
  std::int64_t seen = 0;
  for (std::int64_t row = 0; row < rows; ++row) {
    seen += chunk_count[static_cast<std::size_t>(row)];
    if (last[static_cast<std::size_t>(row)] != seen - 1)
      return Violation(7, "last chunks", row, seen - 1) << "last_chunk_indices[" << row << "] is "
                                                        << last[static_cast<std::size_t>(row)] << ", expected "
                                                        << seen - 1;
  }
  return std::nullopt;
}

std::optional<Divergence> first_divergence(const ChunkMetadata& expected, const ChunkMetadata& actual) {
  const auto compare = [](std::string_view name, const Int32Array& want,
                          const Int32Array& got) -> std::optional<Divergence> {
    // Equal arrays are the common case: one memcmp, checked by ASan as a range.
    if (std::equal(want.begin(), want.end(), got.begin(), got.end())) return std::nullopt;
    const std::size_t common = std::min(want.size(), got.size());
    for (std::size_t i = 0; i < common; ++i) {
      if (want[i] != got[i]) return Divergence{std::string(name), static_cast<std::int64_t>(i), want[i], got[i]};
    }
    if (want.size() == got.size()) return std::nullopt;
    Divergence d{std::string(name), static_cast<std::int64_t>(common), std::nullopt, std::nullopt};
    if (common < want.size()) d.expected = want[common];
    if (common < got.size()) d.actual = got[common];
    return d;
  };
  if (auto d = compare("cu_chunk_seqlen", expected.cu_chunk_seqlen, actual.cu_chunk_seqlen)) return d;
  if (auto d = compare("seq_idx", expected.seq_idx, actual.seq_idx)) return d;
  return compare("last_chunk_indices", expected.last_chunk_indices, actual.last_chunk_indices);
}

std::optional<Finding> compare_outcomes(const Outcome& expected, const Outcome& actual) {
  const auto finding = [&](FindingKind kind, std::string summary) {
    return Finding{kind, std::move(summary), expected, actual, std::nullopt, std::nullopt, {}};
  };
  if (!expected.ok()) {
    if (actual.ok()) return finding(FindingKind::accepted_invalid, "computed a result for input that must be rejected");
    if (!actual.error().same_rule(expected.error())) return finding(FindingKind::wrong_error, "rejected with the wrong error");
    return std::nullopt;
  }
  if (!actual.ok()) return finding(FindingKind::unexpected_error, "refused a valid workload");
  if (auto divergence = first_divergence(expected.value(), actual.value())) {
    Finding f = finding(FindingKind::mismatch, "output differs from the expected output");
    f.divergence = std::move(divergence);
    return f;
  }
  return std::nullopt;
}

std::vector<Answer> answer_all(const Implementation& implementation, std::span<const Workload> workloads) {
  std::vector<Answer> answers;
  answers.reserve(workloads.size());
  while (answers.size() < workloads.size()) {
    const auto rest = workloads.subspan(answers.size());
    if (!implementation.compute_batch) {
      answers.push_back(implementation.compute(rest.front()));
      continue;
    }
    auto batch = implementation.compute_batch(rest);
    if (batch.empty()) batch.push_back(implementation.compute(rest.front()));  // never loop without progress
    for (auto& answer : batch) answers.push_back(std::move(answer));
  }
  return answers;
}

Implementation in_process(std::string name, std::string description,
                          std::function<Answer(const Workload&)> compute) {
  return Implementation{std::move(name), std::move(description), std::move(compute), nullptr, true};
}

Finding finding_of(const Misbehaviour& misbehaviour, std::optional<Outcome> expected) {
  Finding f{misbehaviour.kind,  misbehaviour.summary, std::move(expected), std::nullopt,
            std::nullopt,        std::nullopt,         misbehaviour.detail};
  return f;
}

std::optional<Finding> judge(const Workload& workload, const Answer& actual) {
  return judge(workload, actual, reference(workload));
}

std::optional<Finding> judge(const Workload& workload, const Answer& answer, const Outcome& expected,
                             const std::optional<InvariantViolation>* expected_violation) {
  if (const auto* misbehaviour = std::get_if<Misbehaviour>(&answer)) return finding_of(*misbehaviour, expected);
  const Outcome& actual = std::get<Outcome>(answer);
  auto finding = compare_outcomes(expected, actual);
  if (actual.ok() && expected.ok()) {
    // The invariants name the broken rule even when the reference port itself is wrong.
    // An output equal to the reference has the reference's verdict: reuse it when given.
    auto violation = !finding && expected_violation != nullptr ? *expected_violation
                                                               : check_invariants(workload, actual.value());
    if (violation && !finding) {
      finding = Finding{FindingKind::invariant_violated, "output equals the reference but breaks a SPEC invariant",
                        expected, actual, std::nullopt, std::nullopt, {}};
    }
    if (finding) finding->invariant = std::move(violation);
  }
  if (finding && finding->kind == FindingKind::mismatch) finding->summary = "output differs from the reference";
  return finding;
}

std::optional<Finding> check_implementation(const Implementation& implementation, const Workload& workload) {
  return judge(workload, implementation.compute(workload));
}

std::optional<Finding> check_fast_into_buffers(const Workload& workload, const std::array<std::int64_t, 3>& slack,
                                               Error* refusal) {
  const auto need = output_sizes(view_of(workload)).value();
  const std::int64_t needed[3] = {need.cu_chunk_seqlen, need.seq_idx, need.last_chunk_indices};
  const char* names[3] = {"cu_chunk_seqlen", "seq_idx", "last_chunk_indices"};
  constexpr std::int32_t kUntouched = -7;  // what a buffer holds before the call
  std::vector<std::int32_t> buffers[3];
  int first_short = -1;
  for (int b = 0; b < 3; ++b) {
    buffers[b].assign(static_cast<std::size_t>(std::max<std::int64_t>(0, needed[b] + slack[b])), kUntouched);
    if (first_short < 0 && static_cast<std::int64_t>(buffers[b].size()) < needed[b]) first_short = b;
  }
  const auto written = fast_into(view_of(workload), {buffers[0], buffers[1], buffers[2]});
  const auto prefix = [&](int b) {
    return Int32Array(buffers[b].begin(), buffers[b].begin() + std::min<std::int64_t>(needed[b], static_cast<std::int64_t>(buffers[b].size())));
  };
  Outcome actual = written.ok() ? Outcome(ChunkMetadata{prefix(0), prefix(1), prefix(2)}) : Outcome(written.error());
  if (first_short >= 0) {
    const bool named = !written.ok() && written.error().code == ErrorCode::output_buffer_too_small &&
                       written.error().field == names[first_short] && written.error().bound == needed[first_short];
    if (named) {
      if (refusal != nullptr) *refusal = written.error();
      return std::nullopt;
    }
    return Finding{FindingKind::wrong_error, std::string("fast_into did not name the short buffer ") + names[first_short],
                   Outcome(Error{ErrorCode::output_buffer_too_small, names[first_short], Error::kNoIndex, 0,
                                 needed[first_short]}),
                   std::move(actual), std::nullopt, std::nullopt, {}};
  }
  auto finding = compare_outcomes(reference(workload), actual);
  if (finding) finding->summary = "fast_into with buffers of the needed sizes or larger differs from the reference";
  return finding;
}

std::ostream& operator<<(std::ostream& os, const Divergence& d) {
  os << d.array << '[' << d.index << "]: expected ";
  if (d.expected) os << *d.expected; else os << "(end of array)";
  os << ", actual ";
  if (d.actual) os << *d.actual; else os << "(end of array)";
  return os;
}

std::ostream& operator<<(std::ostream& os, const InvariantViolation& v) {
  os << "invariant " << v.number << " (" << v.name << ")";
  if (v.row >= 0) os << ", row " << v.row;
  if (v.chunk >= 0) os << ", chunk " << v.chunk;
  return os << ": " << v.detail;
}

std::ostream& operator<<(std::ostream& os, const Finding& f) {
  os << to_string(f.kind) << ": " << f.summary;
  if (f.expected) os << "\n  expected: " << *f.expected;
  if (f.actual) os << "\n  actual:   " << *f.actual;
  if (f.divergence) os << "\n  first divergence: " << *f.divergence;
  if (f.invariant) os << "\n  " << *f.invariant;
  if (!f.detail.empty()) os << "\n  detail:   " << f.detail;
  return os;
}

}  // namespace chunkmeta::harness
