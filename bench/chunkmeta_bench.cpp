// Benchmarks the spec's anchor workloads (fixed seeds) at chunk sizes 64, 256
// and 2048: reference, fast (returning), fast_into (caller buffers), and a
// write bound that only writes as many int32 outputs. Prints ratios at the end.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "chunkmeta/chunkmeta.hpp"
#include "chunkmeta/harness/keep_freed_memory.hpp"

namespace {

using namespace chunkmeta;

// Engine-shaped input: int32 arrays, read in place.
struct EngineWorkload {
  std::int64_t chunk_size;
  std::vector<std::int32_t> computed;
  std::vector<std::int32_t> starts;
  WorkloadView32 view() const { return {chunk_size, computed, starts}; }
};

struct Anchor {
  std::string name;
  int rows;
  int mean_tokens;
  bool unaligned;  // computed uniform in [1, 8191], never a multiple of the chunk size
};

const std::vector<Anchor> kAnchors = {
    {"prefill_heavy_bs256x1536", 256, 1536, false},
    {"long_prompts_bs64x8k", 64, 8192, false},
    {"chunked_prefill_bs256_unaligned", 256, 1536, true},
    {"small_batch_bs8x2k", 8, 2048, false},
};

// The same row shapes at the batch sizes engines reach (B rows each).
std::vector<Anchor> batched(int rows) {
  const std::string b = std::to_string(rows);
  return {{"prefill_heavy_bs" + b + "x1536", rows, 1536, false},
          {"long_prompts_bs" + b + "x8k", rows, 8192, false},
          {"chunked_prefill_bs" + b + "_unaligned", rows, 1536, true},
          {"short_rows_bs" + b + "x2k", rows, 2048, false}};
}

// Row lengths uniform in [mean/2, 3*mean/2] with a fixed seed, as specs/mamba defines.
EngineWorkload make(const Anchor& anchor, std::int64_t chunk) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<int> length(anchor.mean_tokens / 2, 3 * anchor.mean_tokens / 2);
  std::uniform_int_distribution<int> computed(1, 8191);
  EngineWorkload w{chunk, {}, {0}};
  for (int i = 0; i < anchor.rows; ++i) {
    int c = 0;
    if (anchor.unaligned) {
      do c = computed(rng); while (c % chunk == 0);
    }
    w.computed.push_back(c);
    w.starts.push_back(w.starts.back() + length(rng));
  }
  return w;
}

void set_counters(benchmark::State& state, const OutputSizes& sizes) {
  state.counters["chunks"] = static_cast<double>(sizes.num_chunks());
  state.counters["chunks_per_s"] =
      benchmark::Counter(static_cast<double>(sizes.num_chunks()), benchmark::Counter::kIsIterationInvariantRate);
}

void bench_reference(benchmark::State& state, const EngineWorkload& w) {
  for (auto _ : state) benchmark::DoNotOptimize(reference(w.view()));
  set_counters(state, output_sizes(w.view()).value());
}

void bench_fast(benchmark::State& state, const EngineWorkload& w) {
  for (auto _ : state) benchmark::DoNotOptimize(fast(w.view()));
  set_counters(state, output_sizes(w.view()).value());
}

void bench_fast_into(benchmark::State& state, const EngineWorkload& w) {
  const OutputSizes sizes = output_sizes(w.view()).value();
  std::vector<std::int32_t> cu(sizes.cu_chunk_seqlen), seq(sizes.seq_idx), last(sizes.last_chunk_indices);
  const OutputBuffers out{cu, seq, last};
  for (auto _ : state) {
    benchmark::DoNotOptimize(fast_into(w.view(), out));
    benchmark::ClobberMemory();
  }
  set_counters(state, sizes);
}

// The floor for any implementation: write K+1 + K + B int32 values, nothing
// else. Built for AVX2 too where the CPU has it, as the library's row pass is,
// so the ratio compares like with like.
// The bound's loops, inlined into each caller and compiled for its target.
[[gnu::always_inline]] inline void fill_outputs(std::vector<std::int32_t>& cu, std::vector<std::int32_t>& seq,
                                                std::vector<std::int32_t>& last, std::int32_t v) {
  for (auto& x : cu) x = v++;
  for (auto& x : seq) x = v;
  for (auto& x : last) x = v--;
}
void write_outputs(std::vector<std::int32_t>& cu, std::vector<std::int32_t>& seq, std::vector<std::int32_t>& last,
                   std::int32_t v) {
  fill_outputs(cu, seq, last, v);
}
#if defined(__x86_64__)
__attribute__((target("avx2"))) void write_outputs_avx2(std::vector<std::int32_t>& cu,
                                                        std::vector<std::int32_t>& seq,
                                                        std::vector<std::int32_t>& last, std::int32_t v) {
  fill_outputs(cu, seq, last, v);
}
const bool kHaveAvx2 = __builtin_cpu_supports("avx2") != 0;
#else
const bool kHaveAvx2 = false;
constexpr auto write_outputs_avx2 = write_outputs;
#endif

void bench_write_bound(benchmark::State& state, const EngineWorkload& w) {
  const OutputSizes sizes = output_sizes(w.view()).value();
  std::vector<std::int32_t> cu(sizes.cu_chunk_seqlen), seq(sizes.seq_idx), last(sizes.last_chunk_indices);
  const auto write = kHaveAvx2 ? write_outputs_avx2 : write_outputs;
  for (auto _ : state) {
    write(cu, seq, last, static_cast<std::int32_t>(state.iterations()));
    benchmark::DoNotOptimize(cu.data());
    benchmark::DoNotOptimize(seq.data());
    benchmark::DoNotOptimize(last.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, sizes);
}

// Collects each run's time per iteration so the ratios can be printed: the
// fastest of the repetitions (--benchmark_repetitions=N), because on a shared
// machine noise only ever adds time.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> ns_per_call;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.iterations == 0) continue;
      const double ns = run.GetAdjustedRealTime();
      const auto [slot, added] = ns_per_call.emplace(run.benchmark_name(), ns);
      if (!added && ns < slot->second) slot->second = ns;
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

}  // namespace

struct Case {
  std::string name;
  int rows;
};

int main(int argc, char** argv) {
  // fast() and reference() allocate their outputs: count their own work, not
  // the kernel's page faults for memory glibc would otherwise hand back.
  const bool kept = chunkmeta::harness::keep_freed_memory();
  const std::vector<std::int64_t> chunk_sizes = {256, 64, 2048};
  std::vector<std::vector<Anchor>> tables = {kAnchors, batched(1024), batched(4096)};
  std::vector<EngineWorkload> workloads;  // kept alive for the registered lambdas
  workloads.reserve(tables.size() * kAnchors.size() * chunk_sizes.size());
  std::vector<std::vector<Case>> cases(tables.size());
  for (std::size_t t = 0; t < tables.size(); ++t) {
    for (auto chunk : chunk_sizes) {
      for (const auto& anchor : tables[t]) {
        workloads.push_back(make(anchor, chunk));
        const EngineWorkload* w = &workloads.back();
        const std::string name = anchor.name + "/C" + std::to_string(chunk);
        cases[t].push_back({name, anchor.rows});
        benchmark::RegisterBenchmark(("reference/" + name).c_str(), [w](benchmark::State& s) { bench_reference(s, *w); });
        benchmark::RegisterBenchmark(("fast/" + name).c_str(), [w](benchmark::State& s) { bench_fast(s, *w); });
        benchmark::RegisterBenchmark(("fast_into/" + name).c_str(), [w](benchmark::State& s) { bench_fast_into(s, *w); });
        benchmark::RegisterBenchmark(("write_bound/" + name).c_str(), [w](benchmark::State& s) { bench_write_bound(s, *w); });
      }
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  std::printf("\nwrite bound built for %s; freed memory %s\n", kHaveAvx2 ? "AVX2" : "the default target",
              kept ? "kept in the heap (mallopt)" : "handled by the C library's defaults");
  for (const auto& table : cases) {
    const bool measured = std::any_of(table.begin(), table.end(), [&reporter](const Case& row) {
      return reporter.ns_per_call.count("fast_into/" + row.name) != 0;
    });
    if (!measured) continue;  // every row filtered out
    std::printf("\n%-38s %9s %9s %9s %9s %8s %9s %10s %10s %12s\n", "workload", "ref ns", "fast ns", "into ns",
                "bound ns", "ref/fast", "fast/into", "into/bound", "into ns/row", "bound ns/row");
    for (const Case& row : table) {
      const std::string& name = row.name;  // not a structured binding: Clang 14 cannot capture one
      const int rows = row.rows;
      const auto get = [&](const std::string& impl) {
        auto it = reporter.ns_per_call.find(impl + "/" + name);
        return it == reporter.ns_per_call.end() ? 0.0 : it->second;
      };
      const double ref = get("reference"), fst = get("fast"), into = get("fast_into"), bound = get("write_bound");
      if (ref == 0 || fst == 0 || into == 0 || bound == 0) continue;  // filtered out
      std::printf("%-38s %9.0f %9.0f %9.0f %9.0f %7.1fx %8.2fx %9.2fx %11.2f %12.2f\n", name.c_str(), ref, fst, into,
                  bound, ref / fst, fst / into, into / bound, into / rows, bound / rows);
    }
  }
  return 0;
}
