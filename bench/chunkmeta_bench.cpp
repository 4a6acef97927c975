// Benchmarks the SPEC's anchor workloads (fixed seeds) at chunk sizes 64, 256
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

// Row lengths uniform in [mean/2, 3*mean/2] with a fixed seed, as the SPEC defines.
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

// The floor for any implementation: write K+1 + K + B int32 values, nothing else.
void bench_write_bound(benchmark::State& state, const EngineWorkload& w) {
  const OutputSizes sizes = output_sizes(w.view()).value();
  std::vector<std::int32_t> cu(sizes.cu_chunk_seqlen), seq(sizes.seq_idx), last(sizes.last_chunk_indices);
  for (auto _ : state) {
    std::int32_t v = static_cast<std::int32_t>(state.iterations());
    for (auto& x : cu) x = v++;
    for (auto& x : seq) x = v;
    for (auto& x : last) x = v--;
    benchmark::DoNotOptimize(cu.data());
    benchmark::DoNotOptimize(seq.data());
    benchmark::DoNotOptimize(last.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, sizes);
}

// Collects each run's time per iteration so the ratios can be printed.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> ns_per_call;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs) {
      if (run.run_type == Run::RT_Iteration && run.iterations > 0)
        ns_per_call[run.benchmark_name()] = run.GetAdjustedRealTime();
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::int64_t> chunk_sizes = {256, 64, 2048};
  std::vector<EngineWorkload> workloads;  // kept alive for the registered lambdas
  workloads.reserve(kAnchors.size() * chunk_sizes.size());
  std::vector<std::string> cases;
  for (auto chunk : chunk_sizes) {
    for (const auto& anchor : kAnchors) {
      workloads.push_back(make(anchor, chunk));
      const EngineWorkload* w = &workloads.back();
      const std::string name = anchor.name + "/C" + std::to_string(chunk);
      cases.push_back(name);
      benchmark::RegisterBenchmark(("reference/" + name).c_str(), [w](benchmark::State& s) { bench_reference(s, *w); });
      benchmark::RegisterBenchmark(("fast/" + name).c_str(), [w](benchmark::State& s) { bench_fast(s, *w); });
      benchmark::RegisterBenchmark(("fast_into/" + name).c_str(), [w](benchmark::State& s) { bench_fast_into(s, *w); });
      benchmark::RegisterBenchmark(("write_bound/" + name).c_str(), [w](benchmark::State& s) { bench_write_bound(s, *w); });
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  std::printf("\n%-42s %9s %9s %9s %9s %10s %10s %10s\n", "workload", "ref ns", "fast ns", "into ns", "bound ns",
              "ref/fast", "fast/bound", "into/bound");
  for (const auto& name : cases) {
    const auto get = [&](const std::string& impl) {
      auto it = reporter.ns_per_call.find(impl + "/" + name);
      return it == reporter.ns_per_call.end() ? 0.0 : it->second;
    };
    const double ref = get("reference"), fst = get("fast"), into = get("fast_into"), bound = get("write_bound");
    if (ref == 0 || fst == 0 || into == 0 || bound == 0) continue;  // filtered out
    std::printf("%-42s %9.0f %9.0f %9.0f %9.0f %9.1fx %9.2fx %9.2fx\n", name.c_str(), ref, fst, into, bound, ref / fst,
                fst / bound, into / bound);
  }
  return 0;
}
