"""How many columns of a matrix of differences the resampling loops take at once: the
compiled loops' cache blocks (:data:`BLOCK_BYTES`) and a family's chunks of resampled sums
(:data:`CHUNK_BYTES`). Neither changes a value: each (resample, column) sum depends on
its column alone."""

from __future__ import annotations

#: Bytes of the values the loops resample at once: the columns of a matrix are taken in
#: blocks of at most this much (at least one column), each copied to a contiguous array,
#: so every resample reads a block that stays in cache instead of streaming the whole
#: matrix from memory once per resample (1,050 columns of 10,000 values are 84 MB).
#: Narrower blocks draw the random numbers again for each block: at n = 10,000 and 400
#: columns, blocks of 8 MiB took 0.6-0.7 of one block's time, blocks of 2 MiB 0.75-0.8.
#: Each (resample, column) sum is accumulated in the same order whatever the blocks, so
#: the block size never changes a value.
BLOCK_BYTES = 8 << 20


def column_blocks(n: int, m: int) -> list[tuple[int, int]]:
    """``[(first, stop), ...]``: the column ranges of an ``(n, m)`` matrix resampled
    together (:data:`BLOCK_BYTES`)."""
    width = max(1, min(m, BLOCK_BYTES // (8 * max(n, 1))))
    return [(j, min(m, j + width)) for j in range(0, m, width)]


#: Bytes of resampled sums (``B`` x columns, and as much again of differences) a family
#: of tests holds at once: :func:`evalkit.stats.grouped.analyse_family` analyses its
#: columns in chunks of :func:`chunk_width` columns, so that 1,050 comparisons at
#: n = 10,000 and B = 10,000 hold 8 MiB of sign-flip sums at a time (one block of the
#: compiled loops, which then add into those sums themselves) instead of 84 MB; a
#: chunk of the bootstrap-t holds several such arrays (sums, squares, statistics).
CHUNK_BYTES = 8 << 20


def chunk_width(n: int, n_resamples: int) -> int:
    """The columns of an ``(n, m)`` matrix a family analyses together: a whole number of
    the compiled loops' blocks (:func:`column_blocks`) whose ``B`` x columns sums and
    ``n`` x columns values each fit in :data:`CHUNK_BYTES`, at least one block."""
    block = max(1, BLOCK_BYTES // (8 * max(n, 1)))
    fit = CHUNK_BYTES // (8 * max(n, n_resamples, 1))
    return max(block, fit // block * block)
