"""Kernel tier, kernels/cpu/chunks.py: the rows per task against their rule (about 4 tasks per thread, at least
``MIN_CHUNK_ROWS``), and the chunks of random nodes against a naive enumeration of each node's positions."""

import numpy as np
import pytest

from gpuforest.kernels.cpu import chunks
from gpuforest.kernels.cpu.chunks import MIN_CHUNK_ROWS, chunk_range, node_chunks, rows_per_chunk


def node_ranges(sizes):
    """``(node_start, node_stop)`` of consecutive nodes of ``sizes`` rows, as the partition lays them out."""
    node_stop = np.cumsum(sizes).astype(np.int64)
    return node_stop - np.asarray(sizes, dtype=np.int64), node_stop


@pytest.mark.parametrize("n_threads", [1, 3, 64])
@pytest.mark.parametrize("sizes", [[0], [5, 0, 7], [4 * MIN_CHUNK_ROWS], [3 * MIN_CHUNK_ROWS, 2, 10**6], [10**8]])
def test_rows_per_chunk_gives_about_four_tasks_per_thread(monkeypatch, n_threads, sizes):
    monkeypatch.setattr(chunks, "get_num_threads", lambda: n_threads)
    chunk_rows = rows_per_chunk(*node_ranges(sizes))
    n_rows = sum(sizes)

    def n_tasks(rows_per_task):
        return -(-n_rows // rows_per_task)

    # The fewest rows per task, at least MIN_CHUNK_ROWS, that make no more than 4 tasks per thread.
    assert chunk_rows >= MIN_CHUNK_ROWS and n_tasks(chunk_rows) <= 4 * n_threads
    assert chunk_rows == MIN_CHUNK_ROWS or n_tasks(chunk_rows - 1) > 4 * n_threads

def naive_chunks(node_start, node_stop, chunk_rows):
    """``(node, start, stop)`` of every chunk: each node's positions cut every ``chunk_rows``; an empty node one
    empty chunk."""
    result = []
    for node, (start, stop) in enumerate(zip(node_start, node_stop)):
        cuts = list(range(start, stop, chunk_rows)) or [start]
        result += [(node, cut, min(cut + chunk_rows, stop)) for cut in cuts]
    return result


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("chunk_rows", [1, 3, 8])
def test_chunks_cover_every_position_of_every_node_once_in_order(seed, chunk_rows):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 20, size=rng.integers(1, 12))
    sizes[rng.integers(sizes.shape[0])] = 0  # at least one empty node
    node_start, node_stop = node_ranges(sizes)
    first_chunk, chunk_node = node_chunks(node_start, node_stop, chunk_rows)
    found = [
        (node, *chunk_range(chunk, node, first_chunk, node_start, node_stop, chunk_rows))
        for chunk, node in enumerate(chunk_node)
    ]
    assert found == naive_chunks(node_start, node_stop, chunk_rows)
    assert first_chunk[0] == 0 and first_chunk[-1] == chunk_node.shape[0]
    np.testing.assert_array_equal(np.diff(first_chunk), np.bincount(chunk_node, minlength=sizes.shape[0]))
