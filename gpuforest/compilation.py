"""numba's compilation of the CPU kernels, seen from the user's side: where the compiled kernels are
cached, a one-line notice when a process compiles them for the first time, and a lock that lets
processes compile into one cache at once.

numba compiles a kernel on its first call for each type signature (about a minute for the kernels of one
estimator family on a 2-core machine) and caches the machine code on disk; later processes load it in a
fraction of a second. Without a word, a first fit looks hung, so the first compilation of a kernel that
has no cache entry yet prints one line to standard error, once per process.

numba saves a kernel's new signature by reading the kernel's cache index, naming the new data file by
the first number free in it, and writing both back, without a lock: two processes saving two signatures
of one kernel at once (Dask workers, pytest-xdist workers, parallel warm-ups) can write one name for both,
and a later process then loads one signature's machine code for the other. ``install_cache_lock`` makes
each save hold an inter-process file lock on its index, and each compilation of a kernel hold one on the
kernel: processes that need a kernel at once (they mostly start with the same fits) then compile it once,
the others waiting and loading its machine code from the cache, instead of each compiling it.
"""

import functools
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np
from filelock import FileLock
from numba.core import caching, event, sigutils
from numba.core.compiler_lock import global_compiler_lock
from numba.core.dispatcher import Dispatcher

NOTICE = (
    "gpuforest: compiling the CPU kernels for first use (a minute or two, once: they are cached in {cache}; "
    "`gpuforest warmup` compiles them all ahead)"
)


def kernel_cache_directory():
    """Where numba keeps the compiled CPU kernels: the cache path of one of them (``NUMBA_CACHE_DIR`` moves it)."""
    from .kernels.cpu import histogram

    return histogram._build_histograms._cache.cache_path


def kernels_cached():
    """Whether the CPU kernels have a cache on disk (the index of one of them exists, or the prebuilt kernels are
    in use): then a fit loads them, or compiles few, and ``FirstCompileNotice`` stays silent."""
    from . import prebuilt
    from .kernels.cpu import histogram

    index_path = histogram._build_histograms._cache._cache_file._index_path
    return os.path.exists(index_path) or prebuilt.unused_reason() is None


def compile_in_processes(function, calls):
    """``function(*arguments)`` for each ``arguments`` of ``calls``, in as many spawned processes (a process
    free again takes the next call), compiling into the kernel cache side by side (numba compiles on one core;
    ``install_cache_lock`` keeps their saves apart); a single call runs in this process. Yields the results as they finish. The
    processes keep quiet about compiling: this one says it (``NOTICE``) for them.

    Parameters
    ----------
    function : callable
        A module-level function (its processes import it).
    calls : list of tuple
        One per process: ``side_by_side_shares`` cuts the work into as many as there are cores.
    """
    if len(calls) <= 1:
        for arguments in calls:
            yield function(*arguments)
        return
    if not kernels_cached():
        FIRST_COMPILE_NOTICE.announce(kernel_cache_directory())
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(len(calls), mp_context=context, initializer=_silence_first_compile_notice) as pool:
        for future in as_completed([pool.submit(function, *arguments) for arguments in calls]):
            yield future.result()


def side_by_side_shares(items, n_processes=None):
    """``items`` (families of fits, in order) cut into ``n_processes`` consecutive shares (None: one per core; at
    most one per item), one per process of ``compile_in_processes``: processes that fit different families
    compile fewer kernels twice (two processes starting on the same family compile the same kernels at once).

    Returns
    -------
    list of tuple
    """
    n_processes = min(n_processes or os.cpu_count() or 1, len(items))
    return [tuple(items[i] for i in share) for share in np.array_split(np.arange(len(items)), n_processes)]


class FirstCompileNotice(event.Listener):
    """Print ``NOTICE`` once when a kernel of ``package`` compiles without a cache index on disk.

    A kernel whose index exists is loaded from the cache or compiled for one more signature: quick, or
    already announced in an earlier process, so it says nothing.

    Parameters
    ----------
    package : str
        Module name prefix of the kernels watched.
    stream : file, default sys.stderr
    """

    def __init__(self, package, stream=None):
        self.package = package
        self.stream = stream
        self.announced = False

    def on_start(self, ev):
        if self.announced:
            return
        dispatcher = ev.data["dispatcher"]
        if not getattr(dispatcher.py_func, "__module__", "").startswith(self.package):
            return
        cache = getattr(dispatcher, "_cache", None)
        index_path = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
        if index_path is None or os.path.exists(index_path):
            return
        self.announce(cache.cache_path)

    def announce(self, cache_path):
        """Print ``NOTICE`` (once)."""
        if not self.announced:
            self.announced = True
            print(NOTICE.format(cache=cache_path), file=self.stream or sys.stderr, flush=True)

    def on_end(self, ev):
        pass


def install_cache_lock():
    """Make numba's cache saves (``IndexDataCacheFile.save``, every numba cache of the process) hold a file lock
    on the index they update (``<index>.lock`` beside it), so that concurrent saves from several processes
    each add their own entry. Loads need none: numba replaces the index and data files atomically.

    And make the compilation of a cached kernel for a signature it does not hold yet (``Dispatcher.compile``:
    load from the cache, else compile and save) hold a file lock on the kernel (``<index>.compile.lock``):
    a second process that needs the kernel meanwhile waits, then loads what the first saved. The file lock
    is taken inside numba's compiler lock (reentrant, one per process), so that a process's threads never wait
    for each other's file locks; a kernel's compilation takes its callees' locks, never its callers' (calls
    between kernels have no cycles), so two processes never wait for each other.
    """
    save = caching.IndexDataCacheFile.save
    if getattr(save, "holds_index_lock", False):
        return

    @functools.wraps(save)
    def locked_save(self, key, data):
        with FileLock(self._index_path + ".lock"):
            save(self, key, data)

    compile_signature = Dispatcher.compile

    @functools.wraps(compile_signature)
    def locked_compile(self, sig):
        cache_file = getattr(self._cache, "_cache_file", None)
        args, _ = sigutils.normalize_signature(sig)
        if cache_file is None or tuple(args) in self.overloads:
            return compile_signature(self, sig)
        with global_compiler_lock, FileLock(cache_file._index_path + ".compile.lock"):
            return compile_signature(self, sig)

    locked_save.holds_index_lock = True
    caching.IndexDataCacheFile.save = locked_save
    Dispatcher.compile = locked_compile


# The notice watching gpuforest's kernels in this process (install_first_compile_notice).
FIRST_COMPILE_NOTICE = FirstCompileNotice(__name__.rpartition(".")[0])


def install_first_compile_notice():
    """Watch gpuforest's kernels (called once, when gpuforest is imported)."""
    event.register("numba:compile", FIRST_COMPILE_NOTICE)


def _silence_first_compile_notice():
    """A ``compile_in_processes`` worker's start: the parent says it once for all of them."""
    FIRST_COMPILE_NOTICE.announced = True

