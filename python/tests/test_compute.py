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
    return tuple(t.tolist() for t in outputs)


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
    summary = chunkmeta.check(chunkmeta.compute_chunk_metadata, valid_only=False, arrays=arrays, cases=300, seed=7)
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
    try:
        before = progress
        started = time.perf_counter()
        outputs = chunkmeta.compute_chunk_metadata(1, 1, computed, starts)
        elapsed = time.perf_counter() - started
        during = progress - before
    finally:
        stop.set()
        thread.join()
    assert outputs[1].numel() == 2**25
    assert during > 1000, f"the other thread advanced {during} times in {elapsed * 1e3:.1f} ms"


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
