// The seam every computation of the family plugs into: its domain and
// validation, its reference, its invariants, its output shapes and its
// built-in implementations. The oracle, the run loop, reports, the corpus, the
// protocol, the plugin ABI and Python's check() are written once, over a Spec.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chunkmeta/harness/implementation.hpp"

namespace chunkmeta::harness {

// One output array: its name, and `columns` entries per row (1, or 2 for
// FLA's (i, j) pairs, shown and sent as pairs).
struct OutputArray {
  std::string_view name;
  int columns = 1;
};

// A broken SPEC invariant (numbered as in SPEC.md), with the row and chunk at fault.
struct InvariantViolation {
  int number = 0;
  std::string name;
  std::int64_t row = -1;    // -1: not specific to a row
  std::int64_t chunk = -1;  // -1: not specific to a chunk
  std::string detail;
};
std::ostream& operator<<(std::ostream& os, const InvariantViolation& violation);

class Spec {
 public:
  virtual ~Spec() = default;

  // "mamba", "fla.chunk_indices", "fla.chunk_offsets": stable, in reports and on the wire.
  virtual std::string_view name() const = 0;
  virtual std::string_view summary() const = 0;  // one line for people

  // Inputs: how a workload is spelled for this spec.
  virtual bool reads_computed_tokens() const = 0;  // else they are zeros and not shown
  virtual std::string_view offsets_field() const = 0;  // "query_start_loc", "cu_seqlens"
  virtual std::string_view unit() const = 0;           // what one offsets interval is: "row", "sequence"
  virtual bool reads_dtype() const = 0;            // the offsets' dtype shapes the outputs
  // The outputs, in order.
  virtual std::span<const OutputArray> outputs() const = 0;

  // The domain: the first broken rule (code, field, index), or nullopt; then
  // the size cap (output_too_large), `limits`' or the library's default.
  virtual std::optional<Error> validate(const Workload& workload, const Limits& limits = {}) const = 0;
  // The chunks of a valid workload's output (what the size cap bounds), else nullopt.
  virtual std::optional<std::int64_t> chunks(const Workload& workload) const = 0;
  // The entries of each output for a valid workload (a buffer's size), else nullopt.
  virtual std::optional<std::vector<std::int64_t>> output_entries(const Workload& workload) const = 0;
  // The SPEC's procedure, ported step by step: the oracle.
  virtual Outcome reference(const Workload& workload) const = 0;
  // The SPEC's invariants, checked independently of the reference port, on
  // the outputs of a valid workload (any shape: the first check is the shapes).
  virtual std::optional<InvariantViolation> check_invariants(const Workload& workload, const Arrays& arrays) const = 0;
  // The built-in implementations (the reference and the fast entry points).
  virtual const std::vector<Implementation>& builtins() const = 0;
  // The library's writer into caller buffers (Mamba's fast_into, FLA's *_into
  // for the workload's dtype), one buffer per output of `sizes[i]` entries
  // filled with `fill` first: every buffer whole after the call, or its error.
  virtual Result<std::vector<std::vector<std::int64_t>>> write_into(const Workload& workload,
                                                                    std::span<const std::int64_t> sizes,
                                                                    std::int64_t fill) const = 0;
  // Whether that writer promises to leave every entry past the needed prefix
  // as it was (Mamba's fast_into may use the rest as scratch; FLA's do not).
  virtual bool writer_keeps_the_rest() const = 0;

  // Shared helpers.
  std::optional<Implementation> find_builtin(std::string_view name) const;
  std::string builtin_names() const;  // "reference, fast, ...", for messages
  std::string units(const Workload& workload) const;  // "1 row", "3 sequences"
  std::size_t entries(const Arrays& arrays) const;
};

// Every spec, Mamba first; by name, or nullptr.
const std::vector<const Spec*>& all_specs();
const Spec* find_spec(std::string_view name);
std::string spec_names();  // "mamba, fla.chunk_indices, fla.chunk_offsets"

const Spec& mamba_spec();
const Spec& fla_chunk_indices_spec();
const Spec& fla_chunk_offsets_spec();

// Mamba's outputs as arrays, and back (moved, never copied).
Arrays arrays_of(ChunkMetadata&& result);
ChunkMetadata chunk_metadata_of(Arrays&& arrays);

}  // namespace chunkmeta::harness
