"""Kernel tier, kernels/cpu/chunks.py: the rows per task against their rule (an equal share of the rows per
thread, up to four tasks a thread of at least ``MIN_CHUNK_ROWS``, none under ``MIN_TASK_ROWS``), and the chunks
of random nodes against a naive enumeration of each node's positions."""

import numpy as np
import pytest

from gpuforest.kernels.cpu import chunks
from gpuforest.kernels.cpu.chunks import MIN_CHUNK_ROWS, MIN_TASK_ROWS, chunk_range, node_chunks, rows_per_chunk


def node_ranges(sizes):
    """``(node_start, node_stop)`` of consecutive nodes of ``sizes`` rows, as the partition lays them out."""
    node_stop = np.cumsum(sizes).astype(np.int64)
    return node_stop - np.asarray(sizes, dtype=np.int64), node_stop


@pytest.mark.parametrize(
    ("n_threads", "n_rows", "expected"),
    [
        (1, 10**8, 10**8),  # one thread: one task
        (2, 2 * MIN_TASK_ROWS - 1, 2 * MIN_TASK_ROWS - 1),  # two tasks would be under MIN_TASK_ROWS
        (2, 2 * MIN_TASK_ROWS, MIN_TASK_ROWS),
        (2, 20_000, 10_000),  # a best-first step's node: one half per thread
        (2, 4 * MIN_CHUNK_ROWS, MIN_CHUNK_ROWS),  # two tasks per thread of MIN_CHUNK_ROWS
        (2, 150_000, 18_750),  # four per thread
        (2, 10**8, 12_500_000),
        (64, 5 * MIN_TASK_ROWS, MIN_TASK_ROWS),  # 5 tasks, not 64 of 80 rows
        (64, 10**6, 15_625),
    ],
)
def test_rows_per_chunk_against_hand_counted_tasks(monkeypatch, n_threads, n_rows, expected):
    monkeypatch.setattr(chunks, "get_num_threads", lambda: n_threads)
    assert rows_per_chunk(*node_ranges([n_rows])) == expected


@pytest.mark.parametrize("n_threads", [1, 2, 3, 64])
@pytest.mark.parametrize("sizes", [[0], [5, 0, 7], [4 * MIN_CHUNK_ROWS], [3 * MIN_CHUNK_ROWS, 2, 10**6], [10**8],
                                   [2 * MIN_TASK_ROWS + 1], [3 * MIN_TASK_ROWS, 7]])
def test_rows_per_chunk_shares_the_rows_among_the_threads(monkeypatch, n_threads, sizes):
    monkeypatch.setattr(chunks, "get_num_threads", lambda: n_threads)
    chunk_rows = rows_per_chunk(*node_ranges(sizes))
    n_rows = sum(sizes)
    n_tasks = -(-n_rows // chunk_rows)
    if n_threads == 1 or n_rows < 2 * MIN_TASK_ROWS:
        assert chunk_rows == max(1, n_rows)
        return
    # No task under MIN_TASK_ROWS (but a node's last), at most four per thread, several only of MIN_CHUNK_ROWS.
    assert chunk_rows >= MIN_TASK_ROWS and n_tasks <= 4 * n_threads
    assert n_tasks <= n_threads or chunk_rows >= MIN_CHUNK_ROWS
    # Every thread busy when the rows allow it: a task per thread, or as many as MIN_TASK_ROWS allows.
    assert n_tasks >= min(n_threads, n_rows // MIN_TASK_ROWS)


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
