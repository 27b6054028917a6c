"""The first-compilation notice and the kernel cache's location."""

import importlib.util
import io
import os
import subprocess
import sys

import numpy as np
import pytest
from numba.core import event

import gpuforest
from gpuforest import prebuilt
from gpuforest.compilation import (
    NOTICE, FirstCompileNotice, compile_in_processes, kernel_cache_directory, kernels_cached, side_by_side_shares,
)

KERNELS = '''
from numba import njit


@njit(cache=True)
def double(x):
    return 2 * x


@njit(cache=True)
def square(x):
    return x * x
'''


def _kernels_module(directory, name):
    """A module of cached njit functions in ``directory``: its numba cache starts empty."""
    path = directory / f"{name}.py"
    path.write_text(KERNELS)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _compile_with_notice(package, calls):
    stream = io.StringIO()
    with event.install_listener("numba:compile", FirstCompileNotice(package, stream)):
        for function, argument in calls:
            function(argument)
    return stream.getvalue()


def test_notice_once_when_kernels_compile_without_a_cache(tmp_path):
    module = _kernels_module(tmp_path, "fresh_kernels")
    printed = _compile_with_notice("fresh_kernels", [(module.double, 1), (module.square, 1), (module.double, 1.5)])
    cache_path = module.double._cache.cache_path
    assert printed == NOTICE.format(cache=cache_path) + "\n"


def test_no_notice_once_the_cache_exists_or_for_other_packages(tmp_path):
    module = _kernels_module(tmp_path, "cached_kernels")
    module.double(1)
    # A new signature of a cached kernel, and another package's fresh kernel: nothing to announce.
    assert _compile_with_notice("cached_kernels", [(module.double, 2.5)]) == ""
    other = _kernels_module(tmp_path, "other_kernels")
    assert _compile_with_notice("cached_kernels", [(other.square, 3)]) == ""


def test_kernel_cache_directory_is_numbas_cache_of_the_cpu_kernels():
    from numba.core.caching import FunctionCache

    from gpuforest.kernels.cpu import histogram

    expected = FunctionCache(histogram._build_histograms.py_func).cache_path
    assert kernel_cache_directory() == expected


def test_importing_gpuforest_watches_its_kernels():
    watching = [listener for listener in event._registered["numba:compile"] if isinstance(listener, FirstCompileNotice)]
    assert [listener.package for listener in watching] == [gpuforest.__name__]


# A child process that compiles ``racing_kernels.double`` for one argument type at the moment its siblings do,
# into the cache they share, with each save slowed between reading the kernel's index and writing it back.
RACING_SAVE = '''
import os
import sys
import time

from numba.core import caching

directory, argument, n_processes, locked = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "locked"
if locked:
    from gpuforest.compilation import install_cache_lock

    install_cache_lock()
write_index = caching.IndexDataCacheFile._save_index


def slow_write_index(self, overloads):
    time.sleep(1.0)
    write_index(self, overloads)


caching.IndexDataCacheFile._save_index = slow_write_index
sys.path.insert(0, directory)
import racing_kernels  # noqa: E402

open(os.path.join(directory, "ready-" + argument), "w").close()
while sum(name.startswith("ready-") for name in os.listdir(directory)) < n_processes:
    time.sleep(0.01)
racing_kernels.double(eval(argument))
print(sum(racing_kernels.double.stats.cache_misses.values()))
'''

# A fresh process: each argument's result, and how many signatures came from the cache.
LOAD_CACHED = '''
import sys

sys.path.insert(0, sys.argv[1])
import racing_kernels  # noqa: E402

results = [racing_kernels.double(eval(argument)) for argument in sys.argv[2:]]
print(repr(results), len(racing_kernels.double.stats.cache_hits))
'''

RACING_ARGUMENTS = ("3", "3.5", "(3+1j)")


def _race_to_save(directory, locked, arguments=RACING_ARGUMENTS):
    """Call ``double`` with each of ``arguments`` in as many processes at once; returns the fresh process's
    ``(results, signatures loaded from the cache)`` and how many compilations the racing processes made."""
    directory.mkdir(exist_ok=True)
    (directory / "racing_kernels.py").write_text(KERNELS)
    environment = {**os.environ, "NUMBA_CACHE_DIR": str(directory / "cache")}
    children = [
        subprocess.Popen(
            [sys.executable, "-c", RACING_SAVE, str(directory), argument, str(len(arguments)),
             "locked" if locked else "unlocked"],
            env=environment, stdout=subprocess.PIPE, text=True,
        )
        for argument in arguments
    ]
    n_compiled = [int(child.communicate(timeout=300)[0]) for child in children]
    assert [child.returncode for child in children] == [0] * len(children)
    loaded = subprocess.run(
        [sys.executable, "-c", LOAD_CACHED, str(directory), *arguments], env=environment,
        capture_output=True, text=True, check=True, timeout=300,
    )
    results, n_cached = loaded.stdout.rsplit(" ", 1)
    return results, int(n_cached), sum(n_compiled)


def test_processes_compiling_one_kernel_at_once_each_save_their_signature(tmp_path):
    results, n_cached, _ = _race_to_save(tmp_path, locked=True)
    assert results == repr([2 * eval(argument) for argument in RACING_ARGUMENTS])
    assert n_cached == len(RACING_ARGUMENTS)


def test_without_the_lock_the_race_loses_signatures(tmp_path):
    """numba's own saves, unlocked, under the same race: entries are lost (what the lock prevents)."""
    _, n_cached, _ = _race_to_save(tmp_path, locked=False)
    assert n_cached < len(RACING_ARGUMENTS)


def test_processes_needing_one_signature_at_once_compile_it_once(tmp_path):
    """Two processes call ``double`` on ints at once: with the lock one compiles it and the other loads its
    machine code from the cache; without it, each compiles it."""
    same_signature = ("3", "4")
    results, n_cached, n_compiled = _race_to_save(tmp_path / "locked", locked=True, arguments=same_signature)
    assert (results, n_cached, n_compiled) == ("[6, 8]", 1, 1)
    _, _, n_compiled_unlocked = _race_to_save(tmp_path / "unlocked", locked=False, arguments=same_signature)
    assert n_compiled_unlocked == 2


def test_compile_in_processes_runs_every_call_in_other_processes():
    import operator

    calls = [(1, 2), (3, 4), (5, 6)]
    assert sorted(compile_in_processes(operator.add, calls)) == [3, 7, 11]
    pids = list(compile_in_processes(os.getpid, [(), ()]))
    assert len(pids) == 2 and os.getpid() not in pids
    # One call: it runs here.
    assert list(compile_in_processes(os.getpid, [()])) == [os.getpid()]


def test_kernels_cached_once_the_histogram_kernel_has_an_index_or_the_prebuilt_kernels_serve(tmp_path, monkeypatch):
    from gpuforest.kernels.cpu import histogram

    index_path = tmp_path / "histogram._build_histograms.nbi"
    monkeypatch.setattr(histogram._build_histograms._cache._cache_file, "_index_path", str(index_path))
    monkeypatch.setattr(prebuilt, "unused_reason", lambda: "off")
    assert not kernels_cached()
    index_path.write_bytes(b"")
    assert kernels_cached()
    index_path.unlink()
    monkeypatch.setattr(prebuilt, "unused_reason", lambda: None)
    assert kernels_cached()


@pytest.mark.parametrize("n_processes, shares", [
    (1, [("a", "b", "c", "d", "e")]),
    (2, [("a", "b", "c"), ("d", "e")]),
    (3, [("a", "b"), ("c", "d"), ("e",)]),
    (9, [("a",), ("b",), ("c",), ("d",), ("e",)]),
])
def test_side_by_side_shares_are_consecutive_and_cover_every_item_once(n_processes, shares):
    assert side_by_side_shares(list("abcde"), n_processes) == shares


def test_side_by_side_shares_default_to_one_per_core():
    assert len(side_by_side_shares(list(range(64)))) == min(64, os.cpu_count())
