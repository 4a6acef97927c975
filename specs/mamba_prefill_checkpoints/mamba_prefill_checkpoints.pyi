# The prefill checkpoint planner's drop-in (appended to chunkmeta/_chunkmeta.pyi at build).
def compute_mamba_prefill_checkpoints(
    seq_lens: Array,
    query_lens: Array,
    hash_block_size: int,
    mamba_block_size: int,
    checkpoint_alignment: Optional[int],
    drop_eagle_block: bool,
    *,
    out: Optional[Tuple[Array, Array]] = None,
) -> Union[Tuple[ArrayOut, ArrayOut], int]: ...
