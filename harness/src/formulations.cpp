// Formulations judged by the kernels' view alone (SPEC Part 8): a registered
// spec's inputs, domain, outputs and values, and no reference. The field
// computes the same metadata in other ways (Megatron's per-sequence chunks,
// the packed grid, mamba_ssm's chunk indices): any of them that a kernel runs
// right passes, and with the cache's claims, any the cache can be written from.
#include <algorithm>
#include <memory>

#include "chunkmeta/harness/spec.hpp"

namespace chunkmeta::harness {
namespace {

class KernelFormulation final : public Spec {
 public:
  KernelFormulation(const Spec& base, bool with_cache)
      : base_(base),
        with_cache_(with_cache),
        name_(std::string(base.kernel_formulation()) + (with_cache ? "+cache" : "")),
        covers_(with_cache ? std::string(base.kernels_view_covers()) : "kernel-adequate: every token run once, in order, "
                                                                        "from the state after the tokens before it"),
        summary_(name_ + ": " + std::string(base.name()) + "'s outputs judged by the kernels' view alone, no reference (" +
                 covers_ + ")") {
    builtins_ = base.builtins();
    for (auto& implementation : builtins_) implementation.spec = this;
  }

  std::string_view name() const override { return name_; }
  std::string_view summary() const override { return summary_; }
  std::span<const Input> inputs() const override { return base_.inputs(); }
  std::string_view unit() const override { return base_.unit(); }
  std::span<const OutputArray> outputs() const override { return base_.outputs(); }
  std::optional<Error> validate(const Workload& workload, const Limits& limits) const override {
    return base_.validate(workload, limits);
  }
  std::optional<std::int64_t> chunks(const Workload& workload) const override { return base_.chunks(workload); }
  std::optional<std::vector<std::int64_t>> output_entries(const Workload& workload) const override {
    return base_.output_entries(workload);  // a guess for a plugin's buffers: it may ask for more
  }
  // A formulation may cut a row's tokens into any number of chunks that each run one or more of them: its
  // answer is bounded by the tokens (the offsets' span), not by the base's chunks.
  std::size_t most_answer_entries(const Workload& workload) const override {
    const auto& offsets = workload.query_start_loc;
    const std::int64_t tokens = offsets.empty() ? 0 : std::max<std::int64_t>(0, offsets.back() - offsets.front());
    return std::max(base_.most_answer_entries(workload),
                    kAnswerAllowanceEntries + kAnswerEntriesPerUnit * (1 + workload.rows() + static_cast<std::size_t>(tokens)));
  }
  // The domain's verdict, and for a valid workload the base's outputs: one answer a kernel runs right (what a
  // door answers with once a run is interrupted), never compared with (judged_by_reference).
  Outcome reference(const Workload& workload) const override { return base_.reference(workload); }
  bool judged_by_reference() const override { return false; }
  std::optional<InvariantViolation> check_invariants(const Workload&, const Arrays&) const override { return std::nullopt; }
  std::optional<kernel_view::Fault> kernels_view(const Workload& workload, const Arrays& arrays, bool) const override {
    return base_.kernels_view(workload, arrays, with_cache_);
  }
  std::string_view kernels_view_covers() const override { return covers_; }
  const std::vector<Implementation>& builtins() const override { return builtins_; }
  Result<std::vector<std::vector<std::int64_t>>> write_into(const Workload& workload, std::span<const std::int64_t> sizes,
                                                            std::int64_t fill) const override {
    return base_.write_into(workload, sizes, fill);
  }
  std::string_view fuzz_target() const override { return base_.fuzz_target(); }
  Workload decode_fuzz_input(std::span<const std::uint8_t> bytes) const override { return base_.decode_fuzz_input(bytes); }
  std::optional<std::vector<std::uint8_t>> encode_fuzz_input(const Workload& workload) const override {
    return base_.encode_fuzz_input(workload);
  }
  BufferRest rest_of_buffer(std::size_t output) const override { return base_.rest_of_buffer(output); }
  Workload warm_up_workload() const override { return base_.warm_up_workload(); }

  const Spec& base() const { return base_; }

 private:
  const Spec& base_;
  bool with_cache_;
  std::string name_, covers_, summary_;  // covers_ first: summary_ is made from it
  std::vector<Implementation> builtins_;
};

const std::vector<std::unique_ptr<KernelFormulation>>& formulations() {
  static const std::vector<std::unique_ptr<KernelFormulation>> all = [] {
    std::vector<std::unique_ptr<KernelFormulation>> made;
    for (const Spec* spec : all_specs()) {
      if (spec->kernel_formulation().empty()) continue;
      made.push_back(std::make_unique<KernelFormulation>(*spec, false));
      if (!spec->cache_claim().empty()) made.push_back(std::make_unique<KernelFormulation>(*spec, true));
    }
    return made;
  }();
  return all;
}

}  // namespace

const std::vector<const Spec*>& kernel_formulations() {
  static const std::vector<const Spec*> all = [] {
    std::vector<const Spec*> specs;
    for (const auto& formulation : formulations()) specs.push_back(formulation.get());
    return specs;
  }();
  return all;
}

const Spec* formulation_base(const Spec& spec) {
  for (const auto& formulation : formulations()) {
    if (formulation.get() == &spec) return &formulation->base();
  }
  return nullptr;
}

}  // namespace chunkmeta::harness
