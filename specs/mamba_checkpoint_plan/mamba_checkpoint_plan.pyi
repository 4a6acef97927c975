# The checkpoint plan's drop-in (appended to chunkmeta/_chunkmeta.pyi at build).
def mamba_checkpoint_plan(
    chunk_size: int,
    block_size: int,
    num_computed_tokens_p: Array,
    query_start_loc_p: Array,
    *,
    out: Optional[Tuple[Array, Array, Array, Array, Array, Array]] = None,
) -> Union[Tuple[ArrayOut, ArrayOut, ArrayOut, ArrayOut, ArrayOut, ArrayOut], Tuple[int, int, int, int, int, int]]: ...
def mamba_checkpoint_plan_max_output_sizes(
    max_tokens: int, max_rows: int, chunk_size: int, block_size: int
) -> Tuple[int, int, int, int, int, int]: ...
