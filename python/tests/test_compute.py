"""chunkmeta.compute_chunk_metadata: the engine's call, the engine's types, the library's errors."""

import gc
import threading
import time

import numpy as np
import pytest
import torch

import chunkmeta

SPEC_EXAMPLE = (64, [0, 70, 128, 1], [0, 130, 230, 294, 296])
SPEC_OUTPUT = ([0, 64, 128, 130, 188, 230, 294, 296], [0, 0, 0, 1, 1, 2, 3], [2, 4, 5, 6])


def as_lists(outputs):
    return tuple(t if isinstance(t, list) else t.tolist() for t in outputs)


@pytest.mark.parametrize("make", [
    lambda v: torch.tensor(v, dtype=torch.int32),
    lambda v: np.array(v, dtype=np.int32),
    list,
    tuple,
], ids=["torch", "numpy", "list", "tuple"])
def test_gives_the_spec_example_for_every_input_kind(make):
    chunk_size, computed, starts = SPEC_EXAMPLE
    outputs = chunkmeta.compute_chunk_metadata(chunk_size, len(computed), make(computed), make(starts))
    assert as_lists(outputs) == SPEC_OUTPUT


@pytest.mark.parametrize("make, kind", [
    (lambda v: torch.tensor(v, dtype=torch.int32), torch.Tensor),
    (lambda v: np.array(v, dtype=np.int32), np.ndarray),
    (list, list),
    (tuple, list),
], ids=["torch", "numpy", "list", "tuple"])
def test_results_follow_the_inputs_kind(make, kind):
    chunk_size, computed, starts = SPEC_EXAMPLE
    outputs = chunkmeta.compute_chunk_metadata(chunk_size, len(computed), make(computed), make(starts))
    assert all(type(output) is kind for output in outputs)
    if kind is np.ndarray:
        assert all(output.dtype == np.int32 and output.flags.c_contiguous for output in outputs)


def test_a_tensor_among_the_inputs_gives_tensors_and_an_array_gives_arrays():
    chunk_size, computed, starts = SPEC_EXAMPLE
    mixed = chunkmeta.compute_chunk_metadata(chunk_size, 4, list(computed), torch.tensor(starts, dtype=torch.int32))
    assert all(isinstance(output, torch.Tensor) for output in mixed)
    mixed = chunkmeta.compute_chunk_metadata(chunk_size, 4, np.array(computed, dtype=np.int32), list(starts))
    assert all(isinstance(output, np.ndarray) for output in mixed)
    assert as_lists(mixed) == SPEC_OUTPUT


def test_results_outlive_every_other_reference_to_their_memory(int32):
    # The three tensors share one allocation, freed when the last of them goes.
    chunk_size, computed, starts = SPEC_EXAMPLE
    cu, seq, last = chunkmeta.compute_chunk_metadata(chunk_size, 4, int32(computed), int32(starts))
    del cu, seq
    gc.collect()
    assert last.tolist() == SPEC_OUTPUT[2]
    last += 1  # writable, like any tensor the engine made
    assert last.tolist() == [v + 1 for v in SPEC_OUTPUT[2]]


def test_returns_int32_cpu_tensors_of_exact_length(int32):
    chunk_size, computed, starts = SPEC_EXAMPLE
    outputs = chunkmeta.compute_chunk_metadata(chunk_size, 4, int32(computed), int32(starts))
    assert isinstance(outputs, tuple) and len(outputs) == 3
    for tensor, expected in zip(outputs, SPEC_OUTPUT):
        assert tensor.dtype == torch.int32 and tensor.device.type == "cpu" and tensor.is_contiguous()
        assert tensor.shape == (len(expected),)


def test_takes_the_engines_keyword_arguments(int32):
    chunk_size, computed, starts = SPEC_EXAMPLE
    outputs = chunkmeta.compute_chunk_metadata(chunk_size=chunk_size, num_prefills=4,
                                               num_computed_tokens_p_cpu=int32(computed),
                                               query_start_loc_p_cpu=int32(starts))
    assert as_lists(outputs) == SPEC_OUTPUT


def test_empty_batch_gives_a_single_zero(int32):
    outputs = chunkmeta.compute_chunk_metadata(256, 0, int32([]), int32([0]))
    assert as_lists(outputs) == ([0], [], [])


def test_reads_the_input_tensors_in_place_and_leaves_them_unchanged(int32):
    computed, starts = int32([5, 0]), int32([0, 9, 9])
    before = (computed.clone(), starts.clone())
    chunkmeta.compute_chunk_metadata(8, 2, computed, starts)
    assert torch.equal(computed, before[0]) and torch.equal(starts, before[1])


@pytest.mark.parametrize("arrays", ["torch", "numpy", "lists"])
def test_is_bit_identical_to_the_reference_over_the_generators(arrays):
    # The property suite against the module itself: every valid workload must match
    # the reference and every invalid one must raise the reference's error.
    summary = chunkmeta.check(chunkmeta.compute_chunk_metadata, valid_only=False, arrays=arrays, cases=300,
                              min_cases=300, seed=7)
    assert summary.passed and summary.cases >= 300 * 6


# Each code of the library's validation, through Python, with its field and index.
ERROR_CASES = [
    ("chunk_size_not_positive", (0, [1], [0, 4]), "chunk_size", None),
    ("value_too_large", (2**31, [1], [0, 4]), "chunk_size", None),
    ("length_mismatch", (8, [1], [0, 4, 5]), "query_start_loc", 2),
    ("negative_value", (8, [1, -3], [0, 4, 5]), "num_computed_tokens", 1),
    ("value_too_large", (8, [1, 0], [0, 4, 2**40]), "query_start_loc", 2),
    ("query_start_loc_decreasing", (8, [3, 0], [0, 9, 4]), "query_start_loc", 2),
    ("sequence_too_long", (8, [0, 2**31 - 3], [0, 1, 5]), "num_computed_tokens", 1),
    ("output_too_large", (1, [0], [0, 2**27]), "cu_chunk_seqlen", None),
]


@pytest.mark.parametrize("code, workload, field, index", ERROR_CASES, ids=[c[0] + "-" + c[2] for c in ERROR_CASES])
def test_raises_invalid_workload_with_the_libraries_code_field_and_index(code, workload, field, index):
    chunk_size, computed, starts = workload
    with pytest.raises(chunkmeta.InvalidWorkload) as raised:
        chunkmeta.compute_chunk_metadata(chunk_size, len(computed), computed, starts)
    error = raised.value
    assert isinstance(error, ValueError)
    assert (error.code, error.field, error.index) == (code, field, index)
    assert error.kind == ("resource_limit" if code == "output_too_large" else "invalid_input")
    assert str(error)


def test_output_too_large_is_checked_on_int32_tensors_too(int32):
    with pytest.raises(chunkmeta.InvalidWorkload) as raised:
        chunkmeta.compute_chunk_metadata(1, 1, int32([0]), int32([0, 2**27]))
    assert raised.value.code == "output_too_large"


def test_a_num_prefills_that_disagrees_with_the_tensors_is_an_error(int32):
    with pytest.raises(chunkmeta.InvalidWorkload) as raised:
        chunkmeta.compute_chunk_metadata(64, 3, int32([0, 1]), int32([0, 5, 9]))
    assert (raised.value.code, raised.value.field, raised.value.index) == ("length_mismatch", "num_prefills", None)


REJECTED = {
    "int64 tensor": lambda: torch.tensor([1], dtype=torch.int64),
    "float tensor": lambda: torch.tensor([1.0]),
    "meta-device tensor": lambda: torch.empty(1, dtype=torch.int32, device="meta"),
    "strided view": lambda: torch.tensor([1, 2, 3, 4], dtype=torch.int32)[::2],
    "2-D tensor": lambda: torch.tensor([[1]], dtype=torch.int32),
    "sparse tensor": lambda: torch.tensor([1], dtype=torch.int32).to_sparse(),
    "int64 numpy array": lambda: np.array([1], dtype=np.int64),
    "strided numpy view": lambda: np.array([1, 2, 3, 4], dtype=np.int32)[::2],
    "list with a float": lambda: [1.5],
    "list with a bool": lambda: [True],
    "string": lambda: "1",
    "None": lambda: None,
    "dict": lambda: {0: 1},
    "generator": lambda: (v for v in [1]),
    "range": lambda: range(1),
    "set": lambda: {1},
}


@pytest.mark.parametrize("kind", list(REJECTED))
def test_rejects_a_wrong_array_with_a_type_error_instead_of_converting_it(kind, int32):
    with pytest.raises(TypeError, match="num_computed_tokens_p_cpu"):
        chunkmeta.compute_chunk_metadata(8, 1, REJECTED[kind](), int32([0, 1]))


def test_rejects_a_chunk_size_that_is_not_an_int(int32):
    for chunk_size in (8.0, True, "8", None):
        with pytest.raises(TypeError, match="chunk_size"):
            chunkmeta.compute_chunk_metadata(chunk_size, 1, int32([0]), int32([0, 1]))


def test_releases_the_gil_while_computing_a_large_workload():
    # 2^25 one-token chunks: tens of milliseconds in C++, during which another
    # Python thread must run.
    computed = torch.tensor([0], dtype=torch.int32)
    starts = torch.tensor([0, 2**25], dtype=torch.int32)
    progress = 0
    running = threading.Event()
    stop = threading.Event()

    def spin():
        nonlocal progress
        running.set()
        while not stop.is_set():
            progress += 1

    thread = threading.Thread(target=spin)
    thread.start()
    running.wait()
    seen = []
    try:
        # On a loaded machine the other thread may not be scheduled during one
        # call: any of five calls shows whether the GIL was released.
        for _ in range(5):
            before = progress
            started = time.perf_counter()
            outputs = chunkmeta.compute_chunk_metadata(1, 1, computed, starts)
            seen.append((progress - before, time.perf_counter() - started))
            if seen[-1][0] > 1000:
                break
    finally:
        stop.set()
        thread.join()
    assert outputs[1].numel() == 2**25
    assert seen[-1][0] > 1000, "the other thread advanced " + ", ".join(
        f"{during} times in {elapsed * 1e3:.1f} ms" for during, elapsed in seen)


def resident_bytes():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


def test_a_million_calls_do_not_grow_memory(int32):
    computed, starts = int32([0, 70, 128, 1]), int32([0, 130, 230, 294, 296])
    bad = int32([0, 9, 4])

    def calls(n):
        for i in range(n):
            chunkmeta.compute_chunk_metadata(64, 4, computed, starts)
            if i % 10 == 0:
                try:
                    chunkmeta.compute_chunk_metadata(8, 2, computed[:2], bad)
                except chunkmeta.InvalidWorkload:
                    pass

    calls(100_000)
    gc.collect()
    before = resident_bytes()
    calls(1_000_000)
    gc.collect()
    growth = resident_bytes() - before
    assert growth < 2 * 2**20, f"resident memory grew by {growth} bytes over a million calls"


# --- out=: results written into the engine's own buffers ---

@pytest.mark.parametrize("make_buffer", [
    lambda n: np.full(n, -7, dtype=np.int32),
    lambda n: torch.full((n,), -7, dtype=torch.int32),
], ids=["numpy", "torch"])
def test_out_writes_into_the_callers_buffers_and_returns_the_lengths(make_buffer, int32):
    chunk_size, computed, starts = SPEC_EXAMPLE
    buffers = tuple(make_buffer(20) for _ in range(3))
    lengths = chunkmeta.compute_chunk_metadata(chunk_size, 4, int32(computed), int32(starts), out=buffers)
    assert lengths == tuple(len(expected) for expected in SPEC_OUTPUT)
    for buffer, expected in zip(buffers, SPEC_OUTPUT):
        assert list(buffer[:len(expected)].tolist()) == expected


def test_out_writes_into_views_of_a_persistent_buffer_and_nothing_past_them(int32):
    # The engine's CpuGpuBuffer keeps one array and hands out views of it.
    chunk_size, computed, starts = SPEC_EXAMPLE
    persistent = np.full(64, -7, dtype=np.int32)
    views = (persistent[0:8], persistent[16:23], persistent[32:36])
    assert chunkmeta.compute_chunk_metadata(chunk_size, 4, int32(computed), int32(starts), out=views) == (8, 7, 4)
    assert [v.tolist() for v in views] == list(SPEC_OUTPUT)
    untouched = np.r_[persistent[8:16], persistent[23:32], persistent[36:]]
    assert (untouched == -7).all()


@pytest.mark.parametrize("short, field, needed", [(0, "cu_chunk_seqlen", 8), (1, "seq_idx", 7),
                                                   (2, "last_chunk_indices", 4)])
def test_out_too_small_names_the_buffer_and_the_size_needed(short, field, needed, int32):
    chunk_size, computed, starts = SPEC_EXAMPLE
    buffers = [np.zeros(8, dtype=np.int32) for _ in range(3)]
    buffers[short] = np.zeros(needed - 1, dtype=np.int32)
    with pytest.raises(chunkmeta.InvalidWorkload) as raised:
        chunkmeta.compute_chunk_metadata(chunk_size, 4, int32(computed), int32(starts), out=tuple(buffers))
    error = raised.value
    assert (error.code, error.field, error.kind) == ("output_buffer_too_small", field, "resource_limit")
    assert f"{needed} are needed" in str(error)


OUT_REJECTED = {
    "read-only array": lambda: np.frombuffer(bytes(80), dtype=np.int32),
    "int64 array": lambda: np.zeros(20, dtype=np.int64),
    "strided view": lambda: np.zeros(40, dtype=np.int32)[::2],
    "int64 tensor": lambda: torch.zeros(20, dtype=torch.int64),
    "list": lambda: [0] * 20,
}


@pytest.mark.parametrize("kind", list(OUT_REJECTED))
def test_out_refuses_a_buffer_it_cannot_write_in_place(kind, int32):
    chunk_size, computed, starts = SPEC_EXAMPLE
    buffers = [np.zeros(20, dtype=np.int32) for _ in range(3)]
    buffers[1] = OUT_REJECTED[kind]()
    with pytest.raises(TypeError, match=r"out\[1\] \(seq_idx\)"):
        chunkmeta.compute_chunk_metadata(chunk_size, 4, int32(computed), int32(starts), out=tuple(buffers))


def test_out_must_be_three_buffers(int32):
    chunk_size, computed, starts = SPEC_EXAMPLE
    with pytest.raises(TypeError, match="out must be a tuple of three"):
        chunkmeta.compute_chunk_metadata(chunk_size, 4, int32(computed), int32(starts), out=np.zeros(20, np.int32))


def test_max_output_sizes_holds_every_workload_within_the_engines_limits():
    # Random workloads of at most T tokens and B rows, computed tokens anywhere.
    rng = np.random.default_rng(20261205)
    for _ in range(2000):
        chunk_size = int(rng.choice([1, 2, 3, 7, 64, 256, 1056]))
        max_tokens, max_rows = int(rng.integers(0, 5000)), int(rng.integers(0, 40))
        rows = int(rng.integers(0, max_rows + 1))
        cuts = np.sort(rng.integers(0, max_tokens + 1, size=max(rows - 1, 0)))
        starts = np.concatenate([[0], cuts, [max_tokens]])[: rows + 1] if rows else np.array([0])
        computed = rng.integers(0, 10**6, size=rows)
        sizes = chunkmeta.max_output_sizes(max_tokens, max_rows, chunk_size)
        buffers = tuple(np.zeros(n, dtype=np.int32) for n in sizes)
        lengths = chunkmeta.compute_chunk_metadata(chunk_size, rows, computed.astype(np.int32),
                                                   starts.astype(np.int32), out=buffers)
        assert all(length <= size for length, size in zip(lengths, sizes))


@pytest.mark.parametrize("chunk_size", [2, 3, 64, 256])
def test_max_output_sizes_is_reached(chunk_size):
    # One row that starts one token before a boundary and ends one past the next: three chunks.
    sizes = chunkmeta.max_output_sizes(chunk_size + 2, 1, chunk_size)
    out = tuple(np.zeros(n, dtype=np.int32) for n in sizes)
    assert chunkmeta.compute_chunk_metadata(chunk_size, 1, [chunk_size - 1], [0, chunk_size + 2], out=out) == sizes
    # Rows without new tokens, each unaligned: one empty chunk each.
    sizes = chunkmeta.max_output_sizes(0, 5, chunk_size)
    out = tuple(np.zeros(n, dtype=np.int32) for n in sizes)
    assert chunkmeta.compute_chunk_metadata(chunk_size, 5, [1] * 5, [0] * 6, out=out) == sizes


def test_max_output_sizes_names_a_limit_it_cannot_take():
    with pytest.raises(chunkmeta.InvalidWorkload) as raised:
        chunkmeta.max_output_sizes(100, 4, 0)
    assert (raised.value.code, raised.value.field) == ("chunk_size_not_positive", "chunk_size")
    with pytest.raises(chunkmeta.InvalidWorkload) as raised:
        chunkmeta.max_output_sizes(-1, 4, 64)
    assert (raised.value.code, raised.value.field) == ("negative_value", "max_tokens")


# --- what the extension needs: no torch, no numpy ---

def run_python(code):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


def test_the_extension_links_no_libtorch():
    import subprocess
    from chunkmeta import _chunkmeta
    linked = subprocess.run(["ldd", _chunkmeta.__file__], capture_output=True, text=True, check=True).stdout
    for library in ("libtorch", "libc10", "libtorch_python", "libpython"):
        assert library not in linked, linked


def test_importing_chunkmeta_imports_neither_torch_nor_numpy():
    done = run_python("import sys, chunkmeta; print(sorted(m for m in ('torch', 'numpy') if m in sys.modules))")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_numpy_and_lists_work_where_torch_cannot_be_imported():
    done = run_python("""
import sys
sys.modules['torch'] = None  # `import torch` now raises ImportError, as where torch is not installed
import numpy as np, chunkmeta
out = chunkmeta.compute_chunk_metadata(64, 4, np.array([0, 70, 128, 1], np.int32), np.array([0, 130, 230, 294, 296], np.int32))
assert [a.tolist() for a in out] == [[0, 64, 128, 130, 188, 230, 294, 296], [0, 0, 0, 1, 1, 2, 3], [2, 4, 5, 6]], out
assert chunkmeta.compute_chunk_metadata(8, 1, [0], [0, 9]) == ([0, 8, 9], [0, 0], [1])
buffers = tuple(np.zeros(8, np.int32) for _ in range(3))
assert chunkmeta.compute_chunk_metadata(8, 1, [0], [0, 9], out=buffers) == (3, 2, 1)
print("ok")
""")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_an_index_that_empties_the_input_list_is_read_as_the_list_was():
    values = [0]

    class EmptiesTheList:
        def __index__(self):
            values.clear()
            values.extend(range(1000))
            return 5

    query_start_loc = [0, EmptiesTheList()]
    assert chunkmeta.compute_chunk_metadata(4, 1, values, query_start_loc) == ([0, 4, 5], [0, 0], [1])


def test_out_buffers_that_overlap_each_other_or_an_input_are_refused():
    import numpy
    block = numpy.zeros(64, dtype=numpy.int32)
    computed = numpy.array([0], dtype=numpy.int32)
    starts = numpy.array([0, 5], dtype=numpy.int32)
    with pytest.raises(ValueError, match=r"out\[1\] \(seq_idx\) overlaps out\[0\] \(cu_chunk_seqlen\)"):
        chunkmeta.compute_chunk_metadata(4, 1, computed, starts, out=(block[0:10], block[5:15], block[20:30]))
    with pytest.raises(ValueError, match="overlaps the input query_start_loc_p_cpu"):
        chunkmeta.compute_chunk_metadata(4, 1, computed, starts, out=(starts, block[0:10], block[20:30]))
    cu = numpy.array([0, 5], dtype=numpy.int32)
    with pytest.raises(ValueError, match="overlaps the input cu_seqlens"):
        chunkmeta.prepare_chunk_indices(cu, 4, out=cu.reshape(1, 2))
    # Distinct memory is fine.
    assert chunkmeta.compute_chunk_metadata(4, 1, computed, starts, out=(block[0:10], block[10:20], block[20:30])) \
        == (3, 2, 1)


def test_a_read_only_numpy_out_buffer_is_refused():
    import numpy
    read_only = numpy.zeros(10, dtype=numpy.int32)
    read_only.flags.writeable = False
    with pytest.raises(TypeError, match="read-only"):
        chunkmeta.compute_chunk_metadata(4, 1, [0], [0, 5], out=(read_only, numpy.zeros(10, numpy.int32),
                                                                 numpy.zeros(10, numpy.int32)))
