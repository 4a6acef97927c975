# The virtual batches' drop-ins (appended to chunkmeta/_chunkmeta.pyi at build).
def local_attention_virtual_batches(
    attn_chunk_size: int,
    block_size: int,
    query_start_loc: Array,
    seq_lens: Array,
    *,
    block_table: Optional[Array] = None,
    out: Optional[Tuple[Array, ...]] = None,
) -> Union[Tuple[ArrayOut, ...], Tuple[int, ...]]: ...
def local_attention_virtual_batches_max_output_sizes(
    max_tokens: int, max_rows: int, attn_chunk_size: int, block_size: int
) -> Tuple[int, int, int, int, int]: ...
def local_attention_block_table(
    block_table: Array, virtual_row: Array, block_start: Array, attn_chunk_size: int, block_size: int, *,
    out: Optional[Array] = None
) -> Union[ArrayOut, int]: ...
