# The conv1d program map's drop-in (appended to chunkmeta/_chunkmeta.pyi at build).
def causal_conv1d_program_map(
    query_start_loc: Array, block_m: int = 8, *, out: Optional[Tuple[Array, Array, Array]] = None
) -> Union[Tuple[ArrayOut, ArrayOut, ArrayOut], Tuple[int, int]]: ...
def causal_conv1d_program_map_max_output_sizes(
    max_tokens: int, max_rows: int, block_m: int = 8
) -> Tuple[int, int, int]: ...
