# Mamba's drop-ins (appended to chunkmeta/_chunkmeta.pyi at build).
@overload
def compute_chunk_metadata(
    chunk_size: int,
    num_prefills: int,
    num_computed_tokens_p_cpu: Array,
    query_start_loc_p_cpu: Array,
    *,
    out: Optional[Tuple[Array, Array, Array]] = None,
) -> Union[Tuple[ArrayOut, ArrayOut, ArrayOut], Tuple[int, int, int]]: ...
@overload
def compute_chunk_metadata(
    chunk_size: int,
    num_prefills: int,
    num_computed_tokens_p_cpu: Array,
    query_start_loc_p_cpu: Array,
    checkpoint_offsets_p: Optional[Array],
    *,
    out: Optional[Tuple[Array, Array, Array, Array]] = None,
) -> Union[Tuple[ArrayOut, ArrayOut, ArrayOut, ArrayOut], Tuple[int, int, int, int]]: ...
def max_output_sizes(max_tokens: int, max_rows: int, chunk_size: int) -> Tuple[int, int, int]: ...
