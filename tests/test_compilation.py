"""The first-compilation notice and the kernel cache's location."""

import importlib.util
import io

from numba.core import event

import gpuforest
from gpuforest.compilation import NOTICE, FirstCompileNotice, kernel_cache_directory

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
