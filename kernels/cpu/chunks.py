"""Tasks of at most ``chunk_rows`` rows of one node: how the histogram kernel shares nodes among threads.

A few large nodes (near the root, or a best-first step's one) would keep all but one thread idle if a node
were one task: cutting the rows into chunks gives every thread an equal share of them, or up to four tasks a
thread when they are large (which keeps the threads busy whatever the sizes of a level's nodes).
"""

import numpy as np
from numba import get_num_threads, njit

# Tasks have at least this many rows: a task's fixed cost (a partial histogram to zero and add) stays small next
# to its rows.
MIN_TASK_ROWS = 1024
# Threads take several tasks each only of this many rows.
MIN_CHUNK_ROWS = 16384


def rows_per_chunk(node_start, node_stop):
    """Rows per task for these nodes (``chunk_rows_for``).

    On the host: numba's thread count is not a constant a cached kernel may hold.
    """
    n_rows = int((node_stop - node_start).sum())
    # Fewer than 2 * MIN_TASK_ROWS rows are one task whatever the thread count, which costs microseconds to read.
    return chunk_rows_for(n_rows, 1 if n_rows < 2 * MIN_TASK_ROWS else get_num_threads())


@njit(cache=True)
def chunk_rows_for(n_rows, n_threads):
    """Rows per task of ``n_rows`` rows in all for ``n_threads`` threads: one task per thread, up to four of at
    least ``MIN_CHUNK_ROWS`` rows each, and fewer tasks where they would have under ``MIN_TASK_ROWS`` (numba gives
    each thread an equal share of a loop's tasks: a single node's, then, of its rows). One task on one thread.
    """
    if n_threads == 1:
        return max(1, n_rows)
    tasks_per_thread = min(4, max(1, n_rows // (n_threads * MIN_CHUNK_ROWS)))
    n_tasks = max(1, min(n_threads * tasks_per_thread, n_rows // MIN_TASK_ROWS))
    return max(1, -(-n_rows // n_tasks))


@njit(cache=True)
def node_chunks(node_start, node_stop, chunk_rows):
    """``(first_chunk, chunk_node)``: node ``k``'s rows are chunks ``first_chunk[k] .. first_chunk[k + 1] - 1``.

    Each chunk holds ``chunk_rows`` consecutive positions of its node but the
    last (``chunk_range``); an empty node has one empty chunk.
    """
    n_nodes = node_start.shape[0]
    first_chunk = np.empty(n_nodes + 1, dtype=np.int64)
    first_chunk[0] = 0
    for node in range(n_nodes):
        first_chunk[node + 1] = first_chunk[node] + max(1, -(-(node_stop[node] - node_start[node]) // chunk_rows))
    chunk_node = np.empty(first_chunk[n_nodes], dtype=np.int64)
    for node in range(n_nodes):
        chunk_node[first_chunk[node]:first_chunk[node + 1]] = node
    return first_chunk, chunk_node


@njit(cache=True, inline="always")
def chunk_range(chunk, node, first_chunk, node_start, node_stop, chunk_rows):
    """Positions ``(start, stop)`` of ``chunk`` of ``node`` (see ``node_chunks``)."""
    start = node_start[node] + (chunk - first_chunk[node]) * chunk_rows
    return start, min(start + chunk_rows, node_stop[node])
