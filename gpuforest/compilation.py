"""numba's compilation of the CPU kernels, seen from the user's side: where the compiled kernels are
cached, and a one-line notice when a process compiles them for the first time.

numba compiles a kernel on its first call for each type signature (about a minute for the kernels of one
estimator family on a 2-core machine) and caches the machine code on disk; later processes load it in a
fraction of a second. Without a word, a first fit looks hung, so the first compilation of a kernel that
has no cache entry yet prints one line to standard error, once per process.
"""

import os
import sys

from numba.core import event

NOTICE = (
    "gpuforest: compiling the CPU kernels for first use (a minute or two, once: they are cached in {cache}; "
    "`gpuforest warmup` compiles them all ahead)"
)


def kernel_cache_directory():
    """Where numba keeps the compiled CPU kernels: the cache path of one of them (``NUMBA_CACHE_DIR`` moves it)."""
    from .kernels.cpu import histogram

    return histogram._build_histograms._cache.cache_path


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
        self.announced = True
        print(NOTICE.format(cache=cache.cache_path), file=self.stream or sys.stderr, flush=True)

    def on_end(self, ev):
        pass


def install_first_compile_notice():
    """Watch gpuforest's kernels (called once, when gpuforest is imported)."""
    event.register("numba:compile", FirstCompileNotice(__name__.rpartition(".")[0]))

