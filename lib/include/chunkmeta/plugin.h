/* chunkmeta plugin ABI: how a shared library offers implementations of the
 * family's computations to `chunkmeta check --impl plugin:PATH` and to the
 * differential fuzz targets (CHUNKMETA_FUZZ_PLUGIN=PATH).
 *
 * Version 3 (at the end) serves every spec, including specs added later: a
 * workload is the spec's inputs as `chunkmeta specs --json` describes them
 * (scalars, then arrays, each in the spec's order) and the outputs are that
 * many int32 buffers. Version 2 serves the specs that read a chunk size,
 * offsets and computed tokens, with at most four outputs; version 1 is
 * Mamba's alone. Both stay supported as they are: a library may export any
 * of the entry points (the highest version is read).
 *
 * Plain C, so a plugin can be written in C, C++, Rust or anything with a C FFI.
 * A plugin exports one function, named by CHUNKMETA_PLUGIN_ENTRY_V1, that returns a
 * table of its implementations. Each `compute` writes into buffers the caller
 * sized; it must not allocate memory it does not free, keep pointers to the
 * workload or the buffers after it returns, or write past a buffer's capacity
 * (the harness puts guard words there and reports a write past them).
 */
#ifndef CHUNKMETA_PLUGIN_H
#define CHUNKMETA_PLUGIN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CHUNKMETA_PLUGIN_ABI_VERSION 1
#define CHUNKMETA_PLUGIN_ENTRY_V1 "chunkmeta_get_plugin_v1"

#if defined(_WIN32)
#define CHUNKMETA_PLUGIN_VISIBLE __declspec(dllexport)
#else
#define CHUNKMETA_PLUGIN_VISIBLE __attribute__((visibility("default")))
#endif
#ifdef __cplusplus
#define CHUNKMETA_PLUGIN_EXPORT extern "C" CHUNKMETA_PLUGIN_VISIBLE
#else
#define CHUNKMETA_PLUGIN_EXPORT CHUNKMETA_PLUGIN_VISIBLE
#endif

/* Return values of compute. */
enum chunkmeta_status {
  CHUNKMETA_OK = 0,                /* outputs written; *_size say how many entries */
  CHUNKMETA_REJECTED = 1,          /* the workload is refused; error_* say why */
  CHUNKMETA_BUFFER_TOO_SMALL = 2   /* *_size say the sizes needed; the caller grows the buffers and calls again */
};

/* Implementation flags. */
enum chunkmeta_flags {
  /* compute validates its input like chunkmeta::validate: every invalid workload is
   * refused with the same error code, field and index. Without this flag the
   * harness sends valid workloads only (an engine function's contract). */
  CHUNKMETA_REJECTS_INVALID_INPUT = 1u << 0
};

/* One workload. Values are 64-bit so that invalid input (negative, above 2^31-1)
 * arrives as it is; a valid one fits int32 everywhere. When the workload is
 * valid, query_start_loc_length == num_computed_tokens_length + 1. */
typedef struct chunkmeta_workload_v1 {
  int64_t chunk_size;
  const int64_t* num_computed_tokens;
  int64_t num_computed_tokens_length; /* B, the number of rows */
  const int64_t* query_start_loc;
  int64_t query_start_loc_length;
} chunkmeta_workload_v1;

/* Output buffers (set by the caller) and what compute says about them. */
typedef struct chunkmeta_output_v1 {
  int32_t* cu_chunk_seqlen;
  int64_t cu_chunk_seqlen_capacity;
  int32_t* seq_idx;
  int64_t seq_idx_capacity;
  int32_t* last_chunk_indices;
  int64_t last_chunk_indices_capacity;

  /* CHUNKMETA_OK: entries written; CHUNKMETA_BUFFER_TOO_SMALL: entries needed. */
  int64_t cu_chunk_seqlen_size;
  int64_t seq_idx_size;
  int64_t last_chunk_indices_size;

  /* CHUNKMETA_REJECTED: static strings naming the error code as chunkmeta spells
   * it (e.g. "query_start_loc_decreasing"), the field (e.g. "query_start_loc"),
   * and the index in that field, or -1 for a scalar. */
  const char* error_code;
  const char* error_field;
  int64_t error_index;
} chunkmeta_output_v1;

typedef struct chunkmeta_implementation_v1 {
  const char* name;        /* short, no spaces: "my-fast" */
  const char* description; /* one line for people */
  uint32_t flags;          /* chunkmeta_flags */
  int (*compute)(const chunkmeta_workload_v1* workload, chunkmeta_output_v1* output);
} chunkmeta_implementation_v1;

typedef struct chunkmeta_plugin_v1 {
  uint32_t abi_version; /* CHUNKMETA_PLUGIN_ABI_VERSION */
  uint32_t implementation_count;
  const chunkmeta_implementation_v1* implementations;
} chunkmeta_plugin_v1;

/* The exported entry point: `const chunkmeta_plugin_v1* chunkmeta_get_plugin_v1(void);`
 * Define it with CHUNKMETA_PLUGIN_EXPORT so it stays visible under -fvisibility=hidden:
 *   CHUNKMETA_PLUGIN_EXPORT const chunkmeta_plugin_v1* chunkmeta_get_plugin_v1(void) { return &table; } */
typedef const chunkmeta_plugin_v1* (*chunkmeta_plugin_entry_v1)(void);

/* ---- Version 2: any spec ---- */

#define CHUNKMETA_PLUGIN_ABI_VERSION_2 2
#define CHUNKMETA_PLUGIN_ENTRY_V2 "chunkmeta_get_plugin_v2"
#define CHUNKMETA_MAX_OUTPUTS 4

/* One workload in the family's one input domain, values 64-bit so that invalid
 * input arrives as it is. A spec that does not read computed tokens gets none
 * (num_computed_tokens NULL, length 0). */
typedef struct chunkmeta_workload_v2 {
  const char* spec;                   /* the spec's name, e.g. "fla.chunk_indices" */
  int64_t chunk_size;
  const int64_t* num_computed_tokens; /* mamba: one per row */
  int64_t num_computed_tokens_length;
  const int64_t* offsets;             /* query_start_loc (mamba) or cu_seqlens (fla) */
  int64_t offsets_length;
  uint32_t dtype_bits;                /* 32 or 64: the integer type of the engine's offsets tensor */
} chunkmeta_workload_v2;

/* The spec's outputs in its order (mamba: cu_chunk_seqlen, seq_idx,
 * last_chunk_indices; fla.chunk_indices: chunk_indices, its N rows (i, j) as
 * 2N entries; fla.chunk_offsets: chunk_offsets), as int32 entries. Sizes and
 * capacities count entries; status and errors as in version 1. */
typedef struct chunkmeta_output_v2 {
  int32_t* arrays[CHUNKMETA_MAX_OUTPUTS];
  int64_t capacities[CHUNKMETA_MAX_OUTPUTS];
  int64_t sizes[CHUNKMETA_MAX_OUTPUTS];
  const char* error_code;
  const char* error_field;
  int64_t error_index;
} chunkmeta_output_v2;

typedef struct chunkmeta_implementation_v2 {
  const char* name;        /* short, no spaces: "my-fast" */
  const char* description; /* one line for people */
  const char* spec;        /* the spec it computes: "mamba", "fla.chunk_indices", ... */
  uint32_t flags;          /* chunkmeta_flags */
  int (*compute)(const chunkmeta_workload_v2* workload, chunkmeta_output_v2* output);
} chunkmeta_implementation_v2;

typedef struct chunkmeta_plugin_v2 {
  uint32_t abi_version; /* CHUNKMETA_PLUGIN_ABI_VERSION_2 */
  uint32_t implementation_count;
  const chunkmeta_implementation_v2* implementations;
} chunkmeta_plugin_v2;

/* `const chunkmeta_plugin_v2* chunkmeta_get_plugin_v2(void);`, defined with CHUNKMETA_PLUGIN_EXPORT. */
typedef const chunkmeta_plugin_v2* (*chunkmeta_plugin_entry_v2)(void);

/* ---- Version 3: every spec, described by `chunkmeta specs --json` ---- */

#define CHUNKMETA_PLUGIN_ABI_VERSION_3 3
#define CHUNKMETA_PLUGIN_ENTRY_V3 "chunkmeta_get_plugin_v3"

/* One workload of the spec named: its inputs in the spec's order, scalars
 * ("kind": "scalar") in `scalars` and arrays ("kind": "array" or "list") in `arrays` with
 * their lengths; a "rows" input is not passed (the offsets' length tells it).
 * An "optional" input (an integer or none) is two scalars: 1 and its value,
 * or 0 and 0 when none is given; a "flag" input is one scalar, 1 or 0.
 * Values are 64-bit so that invalid input arrives as it is. dtype_bits: 32 or
 * 64, the integer type of the engine's tensor for an input that may be int64. */
typedef struct chunkmeta_workload_v3 {
  const char* spec;
  uint32_t scalar_count;
  const int64_t* scalars;
  uint32_t array_count;
  const int64_t* const* arrays;
  const int64_t* array_lengths;
  uint32_t dtype_bits;
} chunkmeta_workload_v3;

/* The spec's outputs in its order, as int32 entries (a 2-column output as
 * 2N entries), set by the caller: `count` buffers with their capacities;
 * compute sets sizes[i] (entries written, or needed with
 * CHUNKMETA_BUFFER_TOO_SMALL) and, when it refuses the workload, the error as
 * in version 1. */
typedef struct chunkmeta_output_v3 {
  uint32_t count;
  int32_t* const* arrays;
  const int64_t* capacities;
  int64_t* sizes;
  const char* error_code;
  const char* error_field;
  int64_t error_index;
} chunkmeta_output_v3;

typedef struct chunkmeta_implementation_v3 {
  const char* name;        /* short, no spaces: "my-fast" */
  const char* description; /* one line for people */
  const char* spec;        /* the spec it computes, as `chunkmeta specs` names it */
  uint32_t flags;          /* chunkmeta_flags */
  int (*compute)(const chunkmeta_workload_v3* workload, chunkmeta_output_v3* output);
} chunkmeta_implementation_v3;

typedef struct chunkmeta_plugin_v3 {
  uint32_t abi_version; /* CHUNKMETA_PLUGIN_ABI_VERSION_3 */
  uint32_t implementation_count;
  const chunkmeta_implementation_v3* implementations;
} chunkmeta_plugin_v3;

/* `const chunkmeta_plugin_v3* chunkmeta_get_plugin_v3(void);`, defined with CHUNKMETA_PLUGIN_EXPORT. */
typedef const chunkmeta_plugin_v3* (*chunkmeta_plugin_entry_v3)(void);

#ifdef __cplusplus
}
#endif

#endif /* CHUNKMETA_PLUGIN_H */
