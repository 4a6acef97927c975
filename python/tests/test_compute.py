"""chunkmeta.compute_chunk_metadata: the engine's call, the engine's types, the library's errors."""

import gc
import inspect
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


# --- Every drop-in's out= and integer arguments, generated over the package's drop-ins ---

# One valid call of each drop-in that writes into out= buffers (arrays as lists,
# scalars as ints), and of each form that adds an input: the only per-drop-in
# fact the generated tests below need. A drop-in the package gains without a
# call here fails test_every_drop_in_taking_out_has_a_valid_call_here.
VALID_CALLS = {
    "compute_chunk_metadata": [
        dict(chunk_size=8, num_prefills=2, num_computed_tokens_p_cpu=[0, 3], query_start_loc_p_cpu=[0, 9, 20]),
        dict(chunk_size=8, num_prefills=2, num_computed_tokens_p_cpu=[0, 3], query_start_loc_p_cpu=[0, 9, 20],
             checkpoint_offsets_p=[4, 0]),
    ],
    "prepare_chunk_indices": [dict(cu_seqlens=[0, 5, 12], chunk_size=4),
                              dict(cu_seqlens=[0, 5, 12], chunk_size=4, cu_seqlens_cpu=[0, 5, 12])],
    "prepare_chunk_offsets": [dict(cu_seqlens=[0, 5, 12], chunk_size=4),
                              dict(cu_seqlens=[0, 5, 12], chunk_size=4, cu_seqlens_cpu=[0, 5, 12])],
    "mamba_checkpoint_plan": [dict(chunk_size=4, block_size=8, num_computed_tokens_p=[0, 3],
                                   query_start_loc_p=[0, 9, 20])],
    "causal_conv1d_program_map": [dict(query_start_loc=[0, 5, 12], block_m=4)],
    "local_attention_virtual_batches": [
        dict(attn_chunk_size=4, block_size=2, query_start_loc=[0, 3, 8], seq_lens=[5, 9]),
        dict(attn_chunk_size=4, block_size=2, query_start_loc=[0, 3, 8], seq_lens=[5, 9],
             block_table=[[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]),
    ],
    "local_attention_block_table": [dict(block_table=[[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]], virtual_row=[0, 0, 1, 1],
                                         block_start=[0, 2, 2, 4], attn_chunk_size=4, block_size=2)],
    "compute_varlen_chunk_metadata": [dict(query_start_loc=[0, 5, 12], chunk_size=4)],
    "cu_seqlens_to_chunk_indices_offsets": [dict(cu_seqlens=[0, 5, 12], chunk_size=4)],
    "compute_mamba_prefill_checkpoints": [dict(seq_lens=[20, 9], query_lens=[9, 9], hash_block_size=4,
                                               mamba_block_size=8, checkpoint_alignment=4, drop_eagle_block=False)],
}


def drop_ins_taking_out():
    # Each drop-in states its signature ("name(..., *, out=None)\n--" opening its docstring), which
    # CPython moves to __text_signature__ where inspect can read it.
    def signature(fn):
        return (getattr(fn, "__text_signature__", None) or "") + (fn.__doc__ or "").split("\n", 1)[0]
    return sorted(name for name in chunkmeta._DROPINS if "out=" in signature(getattr(chunkmeta, name)))


def valid_calls():
    return [pytest.param(name, call, id=f"{name}-{'-'.join(call)}")
            for name in drop_ins_taking_out() for call in VALID_CALLS.get(name, [])]


def is_array(value):
    return isinstance(value, list)


def int32_array(value):
    import numpy
    return numpy.array(value, dtype=numpy.int32)


def out_templates(fn, arguments):
    """One zeroed numpy array per out= buffer of a call with these arguments, as
    its results without out= are shaped, and whether out= is one buffer or a
    tuple. Results as lists carry no dtype: theirs is the one of int32 and
    int64 the drop-in's out= takes."""
    import numpy
    results = fn(**arguments)
    single = not isinstance(results, tuple)
    results = (results,) if single else results
    if all(isinstance(r, numpy.ndarray) for r in results):
        return [numpy.zeros_like(r) for r in results], single
    for dtype in (numpy.int32, numpy.int64):
        templates = [numpy.zeros(numpy.asarray(r).shape, dtype) for r in results]
        try:
            fn(**arguments, out=out_argument(templates, single))
        except TypeError:
            continue
        return templates, single
    raise AssertionError(f"{fn.__name__} takes out= buffers of neither int32 nor int64")


def out_argument(buffers, single):
    return buffers[0] if single else tuple(buffers)


def out_label(slot, single):
    return "out (" if single else f"out[{slot}]"


def test_every_drop_in_taking_out_has_a_valid_call_here():
    assert drop_ins_taking_out(), "no drop-in's docstring names out="
    assert sorted(VALID_CALLS) == drop_ins_taking_out()


class SharedMemory:
    """One allocation two arguments are carved from, as numpy arrays or torch
    tensors: an input at its start, an out buffer from `shift` bytes on."""

    def __init__(self, kind, nbytes):
        import numpy
        self.kind = kind
        if kind == "torch":
            self.block = torch.zeros(nbytes, dtype=torch.uint8)
        else:
            self.block = numpy.zeros(nbytes, dtype=numpy.uint8)

    def carve(self, start, like):
        import numpy
        stop = start + like.nbytes
        if self.kind == "torch":
            dtype = {numpy.dtype("int32"): torch.int32, numpy.dtype("int64"): torch.int64}[like.dtype]
            carved = self.block[start:stop].view(dtype).reshape(like.shape)
            carved.copy_(torch.from_numpy(like))
        else:
            carved = self.block[start:stop].view(like.dtype).reshape(like.shape)
            carved[...] = like
        return carved


def overlapping_shifts(first, second):
    """Byte offsets of `second` that overlap `first` laid at 0, aligned to
    `second`'s items: the same start, and its first item over `first`'s last."""
    item = second.dtype.itemsize
    return sorted({0, (first.nbytes - 1) // item * item})


@pytest.mark.parametrize("others", ["lists", "arrays"])
@pytest.mark.parametrize("kind", ["numpy", "torch"])
@pytest.mark.parametrize("name, call", valid_calls())
def test_an_out_buffer_over_any_input_is_refused_naming_both_and_the_input_is_left_as_it_was(name, call, kind, others):
    fn = getattr(chunkmeta, name)
    # The other inputs as lists (copied, and the arrays read widened) or as arrays read in place.
    call = {k: int32_array(v) if others == "arrays" and is_array(v) else v for k, v in call.items()}
    for argument in [k for k, v in call.items() if is_array(v) or hasattr(v, "dtype")]:
        given = int32_array(call[argument])
        templates, single = out_templates(fn, {**call, argument: given})
        for slot, template in enumerate(templates):
            for shift in overlapping_shifts(given, template):
                memory = SharedMemory(kind, shift + given.nbytes + template.nbytes)
                laid = memory.carve(0, given)
                buffers = [SharedMemory(kind, t.nbytes).carve(0, t) for t in templates]
                buffers[slot] = memory.carve(shift, template)
                memory.carve(0, given)  # the input's values again, where the out buffer begins over them
                with pytest.raises(ValueError) as refused:
                    fn(**{**call, argument: laid, "out": out_argument(buffers, single)})
                message = str(refused.value)
                assert argument in message and out_label(slot, single) in message, (argument, slot, shift, message)
                assert laid.tolist() == given.tolist(), (argument, slot, shift)


@pytest.mark.parametrize("name, call", valid_calls())
def test_out_buffers_over_each_other_are_refused_naming_both(name, call):
    fn = getattr(chunkmeta, name)
    templates, single = out_templates(fn, {k: int32_array(v) if is_array(v) else v for k, v in call.items()})
    for first in range(len(templates)):
        for second in range(first + 1, len(templates)):
            for shift in overlapping_shifts(templates[first], templates[second]):
                memory = SharedMemory("numpy", shift + templates[first].nbytes + templates[second].nbytes)
                buffers = [SharedMemory("numpy", t.nbytes).carve(0, t) for t in templates]
                buffers[first] = memory.carve(0, templates[first])
                buffers[second] = memory.carve(shift, templates[second])
                with pytest.raises(ValueError) as refused:
                    fn(**{**call, "out": out_argument(buffers, single)})
                message = str(refused.value)
                assert f"out[{first}]" in message and f"out[{second}]" in message, (first, second, shift, message)


# Integers no int64 holds, and the first one past int64's top (2**63 - 1 would be read as itself).
BEYOND_INT64 = [2**63, 2**64, -2**63 - 1, 10**30]


def integer_places(call):
    """Each integer a call passes: (argument, index into its entries or None, entries before it per row)."""
    for argument, value in call.items():
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int):
            yield argument, None, None
        elif value and isinstance(value[0], list):
            yield argument, (len(value) - 1, len(value[-1]) - 1), len(value[-1])
        else:
            yield argument, len(value) - 1, None


def values_unread(fn, call, argument):
    """Whether the drop-in never reads this array's values (it answers with an object() in its place)."""
    try:
        fn(**{**call, argument: object()})
    except TypeError:
        return False
    return True


def with_value(call, argument, at, value):
    if at is None:
        return {**call, argument: value}
    if isinstance(at, tuple):
        rows = [list(row) for row in call[argument]]
        rows[at[0]][at[1]] = value
        return {**call, argument: rows}
    entries = list(call[argument])
    entries[at] = value
    return {**call, argument: entries}


@pytest.mark.parametrize("value", BEYOND_INT64)
@pytest.mark.parametrize("name, call", valid_calls())
def test_an_integer_beyond_int64_is_named_as_given_never_as_a_clamped_value(name, call, value):
    fn = getattr(chunkmeta, name)
    for argument, at, columns in integer_places(call):
        if at is not None and values_unread(fn, call, argument):
            fn(**with_value(call, argument, at, value))  # FLA's cu_seqlens beside cu_seqlens_cpu: never looked at
            continue
        with pytest.raises(chunkmeta.InvalidWorkload) as refused:
            fn(**with_value(call, argument, at, value))
        error = refused.value
        message = str(error)
        where = argument if at is None else (f"{argument}[{at[0]}][{at[1]}]" if isinstance(at, tuple)
                                             else f"{argument}[{at}]")
        assert message.startswith(f"{where} is {value}") and "int64" in message, message
        assert str(2**63 - 1) not in message and str(-2**63) not in message, message
        assert error.field == argument
        assert error.index == (None if at is None else at[0] * columns + at[1] if isinstance(at, tuple) else at)
        assert error.code == ("value_too_large" if value > 0 else "negative_value")


def sizing_helpers():
    """Every helper that sizes out= buffers from an engine's limits, found in the package."""
    return sorted(name for name in dir(chunkmeta) if name.endswith("max_output_sizes"))


@pytest.mark.parametrize("value", BEYOND_INT64)
@pytest.mark.parametrize("name", sizing_helpers())
def test_a_sizing_helper_names_an_integer_beyond_int64_as_given(name, value):
    fn = getattr(chunkmeta, name)
    parameters = list(inspect.signature(fn).parameters)
    fn(**{p: 64 for p in parameters})  # the limits every helper takes
    for parameter in parameters:
        with pytest.raises(chunkmeta.InvalidWorkload) as refused:
            fn(**{p: value if p == parameter else 64 for p in parameters})
        assert str(refused.value).startswith(f"{parameter} is {value}"), str(refused.value)
        assert refused.value.field == parameter


def test_every_function_the_package_exports_has_a_signature_inspect_reads():
    for name in chunkmeta.__all__ if hasattr(chunkmeta, "__all__") else dir(chunkmeta):
        fn = getattr(chunkmeta, name)
        if callable(fn) and not isinstance(fn, type) and not name.startswith("_"):
            inspect.signature(fn)  # raises ValueError on a text signature it cannot parse
