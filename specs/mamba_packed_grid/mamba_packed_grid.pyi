# The packed-grid formulation's drop-ins (appended to chunkmeta/_chunkmeta.pyi at build).
def compute_varlen_chunk_metadata(
    query_start_loc: Array, chunk_size: int, *, out: Optional[Tuple[Array, Array, Array]] = None
) -> Union[Tuple[ArrayOut, ArrayOut, ArrayOut], Tuple[int, int, int]]: ...
def cu_seqlens_to_chunk_indices_offsets(
    cu_seqlens: Array, chunk_size: int, *, out: Optional[Tuple[Array, Array]] = None
) -> Union[Tuple[ArrayOut, ArrayOut], int]: ...
