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
#include "chunkmeta/kernel_view/kernel_view.hpp"
#include "registry.hpp"

namespace chunkmeta::harness {

// One input, as the engine's function takes it. `wide`: the engine's tensor
// may be int64 as well as int32 (Workload::dtype says which; it shapes outputs
// of dtype `of_input`). `as_list`: the engine passes this array as a list of
// ints whatever its tensors are (vLLM's checkpoint offsets), so the doors do.
// `index`: which of its kind's more_* fields a Slot::more_* input is (a spec
// names as many scalars, optional scalars, flags and arrays per row as its
// function takes; the named slots first, then more_*, each index once).
struct Input {
  std::string_view name;
  Slot slot;
  bool wide = false;
  bool as_list = false;
  std::uint8_t index = 0;
};

// The integer type of an output in the engine.
enum class OutputDtype : std::uint8_t { int32, int64, of_input };

// One output array: its name, `columns` entries per row (1, or 2 for FLA's
// (i, j) pairs, shown and sent as pairs), and its dtype in the engine.
struct OutputArray {
  std::string_view name;
  int columns = 1;
  OutputDtype dtype = OutputDtype::int32;
};

// What a writer into caller buffers leaves past the entries it returns.
enum class BufferRest : std::uint8_t {
  scratch,  // anything (used as scratch space)
  kept,     // as they were
  padded,   // kPadding, every one
};
// vLLM's PAD_SLOT_ID: what a kernel reads as "no work here".
inline constexpr std::int64_t kPadding = -1;

// A broken invariant of the spec (numbered as in the spec's README), with the row and chunk at fault.
struct InvariantViolation {
  int number = 0;
  std::string name;
  std::int64_t row = -1;    // -1: not specific to a row
  std::int64_t chunk = -1;  // -1: not specific to a chunk
  std::string detail;
};
std::ostream& operator<<(std::ostream& os, const InvariantViolation& violation);

// What the invariants and the kernels' view say of one output (each: none when it holds).
struct OutputVerdict {
  std::optional<InvariantViolation> invariant;
  std::optional<kernel_view::Fault> state_fault{};
};

class Spec {
 public:
  virtual ~Spec() = default;

  // "mamba", "fla.chunk_indices", "fla.chunk_offsets": stable, in reports and on the wire.
  virtual std::string_view name() const = 0;
  virtual std::string_view summary() const = 0;  // one line for people

  // The inputs in the order the engine's function takes them (Python's
  // drop-in and check() call it so); the wire, the C ABI and reports name
  // them so. Slots a spec does not read stay at their defaults.
  virtual std::span<const Input> inputs() const = 0;
  virtual std::string_view unit() const = 0;  // what one offsets interval is: "row", "sequence"
  // The outputs, in order.
  virtual std::span<const OutputArray> outputs() const = 0;

  // The domain: the first broken rule (code, field, index), or nullopt; then
  // the size cap (output_too_large), `limits`' or the library's default.
  virtual std::optional<Error> validate(const Workload& workload, const Limits& limits = {}) const = 0;
  // The chunks of a valid workload's output (what the size cap bounds), else nullopt.
  virtual std::optional<std::int64_t> chunks(const Workload& workload) const = 0;
  // The entries of each output for a valid workload (a buffer's size), else nullopt.
  virtual std::optional<std::vector<std::int64_t>> output_entries(const Workload& workload) const = 0;
  // The most entries any answer to `workload` may hold, all outputs together, before it is a flood
  // (kAnswerEntriesPerUnit per unit of work beyond kAnswerAllowanceEntries, implementation.hpp).
  virtual std::size_t most_answer_entries(const Workload& workload) const;
  // The spec's procedure, ported step by step: the oracle.
  virtual Outcome reference(const Workload& workload) const = 0;
  // The spec's invariants, checked independently of the reference port, on
  // the outputs of a valid workload (any shape: the first check is the shapes).
  virtual std::optional<InvariantViolation> check_invariants(const Workload& workload, const Arrays& arrays) const = 0;
  // The kernels' view (SPEC Part 8) of a valid workload's outputs (any shape):
  // what a kernel or the prefix cache computes from them, on states that name
  // their own position; the first fault, or nullopt. The judge asks it of
  // every answer, as it asks the invariants. A spec whose outputs no kernel
  // reads by themselves keeps the default, and says why in kernels_view_covers.
  // `with_cache`: the cache's claims too (block ends, writes, reads), where the spec makes them.
  virtual std::optional<kernel_view::Fault> kernels_view(const Workload& workload, const Arrays& arrays,
                                                         bool with_cache = true) const;
  // What kernels_view judges, in a sentence for reports and docs.
  virtual std::string_view kernels_view_covers() const { return {}; }
  // Both verdicts on an output of a valid workload: check_invariants and kernels_view. A spec whose two
  // judges need the same computation (another spec's output, say) gives both from one.
  virtual OutputVerdict verdict_on(const Workload& workload, const Arrays& arrays) const;
  bool has_kernels_view() const { return !kernels_view_covers().empty(); }
  // The name of this spec's outputs judged by the kernels' view alone ("kernel.mamba2_chunks"), or "": a
  // formulation of the same inputs and outputs, any way of computing which a kernel runs right passes
  // (kernel_formulations()). `cache_claim`: what with_cache adds, or "" when the spec makes no cache claim.
  virtual std::string_view kernel_formulation() const { return {}; }
  virtual std::string_view cache_claim() const { return {}; }
  // False for such a formulation: its reference() gives the domain's verdict and
  // one right answer (what a door answers with once a run is interrupted), which
  // the judge never compares with.
  virtual bool judged_by_reference() const { return true; }
  // The built-in implementations (the reference and the fast entry points).
  virtual const std::vector<Implementation>& builtins() const = 0;
  // The library's writer into caller buffers (Mamba's fast_into, FLA's *_into
  // for the workload's dtype), one buffer per output of `sizes[i]` entries
  // filled with `fill` first: every buffer whole after the call, or its error.
  virtual Result<std::vector<std::vector<std::int64_t>>> write_into(const Workload& workload,
                                                                    std::span<const std::int64_t> sizes,
                                                                    std::int64_t fill) const = 0;
  // Its differential fuzz target (fuzz/<name>.cpp, corpus/fuzz/<name>), and
  // the byte codec of the valid workloads that target decodes (fuzz_input.hpp).
  virtual std::string_view fuzz_target() const = 0;
  virtual Workload decode_fuzz_input(std::span<const std::uint8_t> bytes) const = 0;
  // The bytes that decode to `workload`, or nullopt when it is beyond the codec's budget.
  virtual std::optional<std::vector<std::uint8_t>> encode_fuzz_input(const Workload& workload) const = 0;
  // What that writer promises for the entries of output `output`'s buffer
  // past the needed prefix (Mamba's fast_into may use them as scratch, FLA's
  // writers keep them, the conv1d program map pads them as its kernel expects).
  virtual BufferRest rest_of_buffer(std::size_t output) const = 0;

  // One row without tokens, valid for the spec: what a door sends first, so
  // a function's lazy set-up is paid before any workload is timed.
  virtual Workload warm_up_workload() const { return Workload{1, {0}, {0, 0}}; }

  // Shared helpers.
  const Input* input(Slot slot) const;  // the (first) input kept in `slot`, or nullptr
  bool reads(Slot slot) const { return input(slot) != nullptr; }
  std::string_view field(Slot slot) const;  // its name, or ""
  bool reads_dtype() const;  // an input may be int64 (Workload::dtype is sent)
  // A workload read from outside (the wire, the C ABI, Python's arguments, fuzz
  // bytes) gets zeros per row when the spec reads no per-row values, and
  // offsets of no tokens (one per row and one more) when it reads no offsets:
  // every workload has one value per row and rows + 1 offsets (the shrinker and
  // printing rely on it). Other slots the spec does not read are at their
  // defaults (no second value per row, no optional scalar, no flag, block size
  // 0), and its more_* fields exactly those it reads (a more_per_row array it
  // names but was not given: zeros per row).
  void fill_unread_rows(Workload& workload) const;
  // The dtype an output has for `workload`: "int32" or "int64".
  std::string_view dtype_of(const OutputArray& output, const Workload& workload) const;
  std::optional<Implementation> find_builtin(std::string_view name) const;
  std::string builtin_names() const;  // "reference, fast, ...", for messages
  std::string units(const Workload& workload) const;  // "1 row", "3 sequences"
  std::size_t entries(const Arrays& arrays) const;
};

// Every spec, in the registry's order (specs/registry.hpp); by name, or nullptr.
const std::vector<const Spec*>& all_specs();
const Spec* find_spec(std::string_view name);
std::string spec_names();  // "mamba, fla.chunk_indices, ...", for messages
// The spec a workload that names none means (the registry says which).
const Spec& default_spec();

// The formulations judged by the kernels' view alone, one per registered spec
// that names one (Spec::kernel_formulation), and one more named "<name>+cache"
// where the spec makes a cache claim; found by find_spec, not in all_specs()
// (they have no reference, corpus or fuzz target of their own).
const std::vector<const Spec*>& kernel_formulations();
// The registered spec a formulation takes its inputs, domain and values from; nullptr for any other spec.
const Spec* formulation_base(const Spec& spec);

// `spec` beside the registry's while this lives (found by name, listed last):
// for tests of the seam itself, with a spec of shapes no computation of the
// family has yet. Not thread-safe; production code never registers a spec so.
class TemporarySpec {
 public:
  explicit TemporarySpec(const Spec& spec);
  ~TemporarySpec();
  TemporarySpec(const TemporarySpec&) = delete;
  TemporarySpec& operator=(const TemporarySpec&) = delete;

 private:
  const Spec* spec_;
};

// The hooks each spec folder defines for this layer (specs/registry.hpp).
#define CHUNKMETA_DECLARE_SPECS_OF(folder) std::vector<const Spec*> specs_of_##folder();
CHUNKMETA_SPEC_FOLDERS(CHUNKMETA_DECLARE_SPECS_OF)
#undef CHUNKMETA_DECLARE_SPECS_OF

}  // namespace chunkmeta::harness
