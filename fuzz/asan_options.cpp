// ASan's defaults for every fuzz target; ASAN_OPTIONS still overrides them
// (the sanitizer test presets set the same quarantine for every test).
// Freed memory waits in a quarantine so that a later use of it is caught.
// ASan's default quarantine (256 MB) sends each allocation of these short
// executions to cold memory, which took about half of a differential
// execution. Any quarantine from 1 to 16 MB ran within noise of each other.
// 4 MB is several times what one execution frees (robustness, the largest,
// under 1 MB at its 16,384-chunk cap), and no target keeps heap state between
// executions, so every use after free within an execution is still caught.
extern "C" const char* __asan_default_options() { return "quarantine_size_mb=4"; }
