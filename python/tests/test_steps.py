"""chunkmeta.check_steps: requests' whole lives through the engine's functions, each step
run by the kernels' view. chunkmeta's own functions (and their drop-ins) live every life;
each slip at a seam between two functions, each plausible alone, fails with a minimal life."""

import pytest
import torch

import chunkmeta

LIVES = 1000


@pytest.mark.parametrize("mode", ["all", "align"])
def test_chunkmeta_own_functions_live_a_thousand_lives(mode):
    summary = chunkmeta.check_steps(mode=mode, lives=LIVES, seed=1)
    assert summary.passed and summary.lives == LIVES
    assert summary.steps > 2 * LIVES and summary.resumed_reads > LIVES
    assert (summary.writes if mode == "all" else summary.checkpoints) > LIVES // 4


def test_the_drop_ins_with_the_engines_signatures_live_every_life():
    chunkmeta.check_steps(chunks=chunkmeta.compute_chunk_metadata, plan=chunkmeta.mamba_checkpoint_plan,
                          lives=LIVES, seed=2)
    chunkmeta.check_steps(chunks=chunkmeta.compute_chunk_metadata,
                          checkpoints=chunkmeta.compute_mamba_prefill_checkpoints, mode="align", lives=LIVES, seed=2)


def _minimal(most_steps, most_requests, **kwargs):
    with pytest.raises(chunkmeta.CheckFailed) as failed:
        chunkmeta.check_steps(lives=LIVES, seed=3, **kwargs)
    summary = failed.value.summary
    life = summary.minimal
    steps = max(r["first_step"] + len(r["pieces"]) for r in life["requests"])
    assert steps <= most_steps and len(life["requests"]) <= most_requests, str(summary)
    assert "NOT VERIFIED steps" in str(summary) and "reproduce:" in str(summary)
    return summary


def test_a_block_size_accepted_though_not_a_multiple_of_the_chunk_size_is_caught():
    """vLLM #57266: a plan that checks nothing, given C = 4 and M = 6, takes states from chunk ends
    that are not block ends."""
    def plan_any_block_size(chunk_size, block_size, computed, offsets):
        # chunkmeta's plan on a block size it accepts (the chunk size's multiple below), relabelled
        return chunkmeta.mamba_checkpoint_plan(chunk_size, block_size - block_size % chunk_size, computed, offsets)
    summary = _minimal(2, 1, plan=plan_any_block_size, chunk_size=4, block_size=6)
    assert summary.fault["function"] == "plan"


def test_a_state_column_computed_with_the_attention_block_size_is_caught():
    """vLLM #53142: the column computed with another block size than the Mamba one."""
    def plan_with_attention_block_size(chunk_size, block_size, computed, offsets):
        return chunkmeta.mamba_checkpoint_plan(chunk_size, 2 * block_size, computed, offsets)
    _minimal(2, 1, plan=plan_with_attention_block_size)


def test_chunk_ends_looked_up_on_the_requests_grid_over_packed_grid_metadata_are_caught():
    """SGLang #31833: the kernel's chunks laid on the packed batch's grid, the plan's on each request's."""
    def packed_grid_chunks(chunk_size, num_prefills, computed, offsets):
        starts = offsets.to(torch.int64)  # the prefills' offsets, sliced after the decodes': from 0, as vLLM calls it
        cu, last, seq = chunkmeta.compute_varlen_chunk_metadata(starts - starts[0], chunk_size)
        return cu, seq, last
    summary = _minimal(2, 2, chunks=packed_grid_chunks)
    assert summary.fault["rule"] in ("cache-adequate", "read")


def test_a_checkpoint_published_where_the_chunker_did_not_cut_is_caught():
    """The planner's offset counted from the query's start, the chunker's from the sequence's."""
    def chunker_counting_from_the_sequence(chunk_size, num_prefills, computed, offsets, checkpoint_offsets):
        moved = [max(1, min(o + int(c) % (int(b) - int(a)), int(b) - int(a) - 1)) if o > 0 else 0
                 for o, c, a, b in zip(checkpoint_offsets, computed, offsets[:-1], offsets[1:])]
        return chunkmeta.compute_chunk_metadata(chunk_size, num_prefills, computed, offsets, moved)
    summary = _minimal(2, 1, chunks=chunker_counting_from_the_sequence, mode="align")
    assert summary.fault["function"] == "chunks" and summary.fault["rule"] == "checkpoint"


def test_a_write_plan_one_chunk_late_on_rows_resumed_off_the_grid_is_caught():
    def late(chunk_size, block_size, computed, offsets):
        out = [a.clone() for a in chunkmeta.mamba_checkpoint_plan(chunk_size, block_size, computed, offsets)]
        rows, chunks = out[3], out[5]
        for w in range(len(rows) - 1):
            if rows[w] == rows[w + 1] and int(computed[rows[w]]) % chunk_size:
                chunks[w] += 1
        return out
    summary = _minimal(2, 1, plan=late)
    assert summary.fault["rule"] == "cache-adequate"


def test_a_function_that_raises_is_its_own_finding_never_the_harnesss():
    def broken(chunk_size, num_prefills, computed, offsets):
        raise RuntimeError("no chunks today")
    summary = _minimal(1, 1, chunks=broken)
    assert summary.fault["rule"] == "answered" and "no chunks today" in summary.fault["what"]


def test_the_functions_get_the_engines_int32_cpu_tensors():
    seen = []

    def chunks(chunk_size, num_prefills, computed, offsets):
        seen.append((computed.dtype, offsets.dtype, num_prefills == len(computed)))
        return chunkmeta.compute_chunk_metadata(chunk_size, num_prefills, computed, offsets)
    chunkmeta.check_steps(chunks=chunks, lives=10, seed=4)
    assert seen and set(seen) == {(torch.int32, torch.int32, True)}


def test_settings_outside_their_domain_are_refused_before_anything_runs():
    with pytest.raises(ValueError, match="mode"):
        chunkmeta.check_steps(mode="sometimes")
    with pytest.raises(ValueError, match="block_size"):
        chunkmeta.check_steps(block_size=0)
    with pytest.raises(TypeError, match="plan"):
        chunkmeta.check_steps(plan=3)
    for timeout in (float("nan"), -1, "10"):
        with pytest.raises(ValueError, match="timeout"):
            chunkmeta.check_steps(timeout=timeout)


def test_a_function_the_mode_never_calls_is_refused_not_named_in_a_verdict():
    with pytest.raises(ValueError, match="align mode's planner"):
        chunkmeta.check_steps(checkpoints=chunkmeta.compute_mamba_prefill_checkpoints)
    with pytest.raises(ValueError, match="all mode's write plan"):
        chunkmeta.check_steps(plan=chunkmeta.mamba_checkpoint_plan, mode="align")


def test_a_callable_that_is_falsy_is_still_the_function_called():
    class Empty:
        def __len__(self):
            return 0

        def __call__(self, *arguments):
            raise RuntimeError("called")
    summary = _minimal(1, 1, plan=Empty())
    assert "called" in summary.fault["what"]


def _own_plan_but(change):
    def plan(chunk_size, block_size, computed, offsets):
        out = [a.clone() for a in chunkmeta.mamba_checkpoint_plan(chunk_size, block_size, computed, offsets)]
        change(out)
        return out
    return plan


def test_the_plans_scheduled_blocks_are_judged_too():
    summary = _minimal(1, 1, plan=_own_plan_but(lambda out: out[2].fill_(12345)))
    assert summary.fault["rule"] == "position" and "block_idx_last_scheduled_token" in summary.fault["what"]


def test_outputs_that_are_not_integer_arrays_and_inputs_changed_in_place_are_the_functions_faults():
    def float_chunks(chunk_size, num_prefills, computed, offsets):
        return [a.to(torch.float32) for a in chunkmeta.compute_chunk_metadata(chunk_size, num_prefills, computed,
                                                                             offsets)]
    what = _minimal(1, 1, chunks=float_chunks).fault["what"]
    assert "malformed_output" in what and "cu_chunk_seqlen" in what and "not a 1-D integer" in what

    def zeroing_chunks(chunk_size, num_prefills, computed, offsets):
        result = chunkmeta.compute_chunk_metadata(chunk_size, num_prefills, computed, offsets)
        computed.zero_()
        return result
    assert "changed its input num_computed_tokens: entry 0" in _minimal(2, 1, chunks=zeroing_chunks).fault["what"]


def test_a_chunker_flooding_its_answer_is_a_malformed_output_refused_unread():
    flood = torch.zeros(10_000_000, dtype=torch.int32)

    def flooding_chunks(chunk_size, num_prefills, computed, offsets):
        cu, seq, last = chunkmeta.compute_chunk_metadata(chunk_size, num_prefills, computed, offsets)
        return cu, flood, last
    what = _minimal(1, 1, chunks=flooding_chunks).fault["what"]
    assert "malformed_output" in what and "seq_idx of 10000000 entries, more than an answer" in what, what


def test_a_chunker_is_judged_even_where_the_plan_rightly_refuses_the_block_size():
    def one_token_too_many(chunk_size, num_prefills, computed, offsets):
        cu, seq, last = (a.clone() for a in chunkmeta.compute_chunk_metadata(chunk_size, num_prefills, computed,
                                                                            offsets))
        cu[-1] += 1
        return cu, seq, last
    summary = _minimal(1, 1, chunks=one_token_too_many, chunk_size=4, block_size=6)
    assert summary.fault["function"] == "chunks"


@pytest.mark.parametrize("slip", ["column past the row's end", "checkpoint off the hash grid"])
def test_a_planner_publishing_where_no_prefix_ends_is_caught(slip):
    def planner(seq_lens, query_lens, hash_block_size, mamba_block_size, alignment, drop_eagle_block):
        # The engine's planner takes and gives lists (vLLM's builder passes Python lists).
        assert isinstance(seq_lens, list) and isinstance(query_lens, list)
        offsets, cols = chunkmeta.compute_mamba_prefill_checkpoints(
            seq_lens, query_lens, hash_block_size, mamba_block_size, alignment, drop_eagle_block)
        if slip == "column past the row's end":
            cols = [c + 10**6 if o > 0 else c for o, c in zip(offsets, cols)]
        else:
            offsets = [o - 1 if o > 1 else o for o in offsets]
        return offsets, cols
    summary = _minimal(2, 1, checkpoints=planner, mode="align")
    assert summary.fault["rule"] == "checkpoint"


def test_a_function_that_spins_off_the_main_thread_is_cut_short_at_the_timeout_too():
    import threading

    def spins_on_a_resumed_row(chunk_size, num_prefills, computed, offsets):
        while any(int(c) > 0 for c in computed):
            pass
        return chunkmeta.compute_chunk_metadata(chunk_size, num_prefills, computed, offsets)
    raised = []

    def body():
        try:
            chunkmeta.check_steps(lives=LIVES, seed=3, chunks=spins_on_a_resumed_row, timeout=0.2)
        except BaseException as error:  # noqa: B036 (handed to the test's thread)
            raised.append(error)
    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    thread.join(120)
    assert not thread.is_alive(), "its calls were never cut short off the main thread"
    assert raised and isinstance(raised[0], chunkmeta.CheckFailed), raised
    assert "timed_out" in raised[0].summary.fault["what"]


def test_a_function_that_hangs_is_cut_short_at_the_timeout_and_is_its_fault():
    import time

    def hangs_on_a_resumed_row(chunk_size, num_prefills, computed, offsets):
        if any(int(c) > 0 for c in computed):
            time.sleep(60)
        return chunkmeta.compute_chunk_metadata(chunk_size, num_prefills, computed, offsets)
    started = time.monotonic()
    summary = _minimal(2, 1, chunks=hangs_on_a_resumed_row, timeout=0.2)
    assert summary.fault["function"] == "chunks" and "timed_out" in summary.fault["what"]
    assert time.monotonic() - started < 30
    assert "timeout=0.2" in str(summary), "the reproduce line carries the setting"
