"""Prebuilt CPU kernels: machine code compiled ahead and shipped with the package, so that a fresh clone's or
install's first fit loads its kernels in a second instead of compiling them for a minute.

numba keys its kernel cache on the source files' modification times and on this machine's CPU model, so a
fresh clone or install starts without one. ``kernels/prebuilt`` holds the specialisations that
``gpuforest warmup``'s fits compile, built for the x86-64 psABI's level 3 (``x86-64-v3``: AVX2, FMA, BMI2;
Intel's CPUs since Haswell, AMD's since Excavator; LLVM fuses no multiply-add that numba does not ask for,
so the results are the JIT's, bit for bit). When numba finds no entry for a kernel in its own cache, it
looks there before it compiles: an entry serves if its signature, bytecode and ``fingerprint`` are the
kernel's, the versions and numba settings of ``build_settings`` those of the build, and the CPU at that level.

A kernel's ``fingerprint`` hashes the source files of the kernel and of every gpuforest function it calls,
directly or not, and the values of the other globals it reads (numba compiles them in as constants): a change
that could change its machine code makes its entry miss, while changes elsewhere in the package leave it in use.

Code built for this CPU is a few percent faster than the portable level on boosting (3-5% on an AMD Zen 5)
but no faster on small trees, whose row searches it ran 7-25% slower there: ``gpuforest warmup --native``
compiles it into numba's own cache, which is looked up first. ``GPUFOREST_PREBUILT_KERNELS=0`` turns the
prebuilt kernels off. ``make prebuilt-kernels`` (``build``) rebuilds them after a change to the kernels
(``tests/test_prebuilt.py`` fails until then).
"""

import functools
import hashlib
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import llvmlite
import llvmlite.binding as llvm
import numba
import numpy as np
from numba.core import caching, config
from numba.core.dispatcher import Dispatcher
from numba.core.extending import _Intrinsic

from . import kernels

PACKAGE = __name__.rpartition(".")[0]
KERNELS_DIRECTORY = Path(kernels.__file__).parent
PREBUILT_DIRECTORY = KERNELS_DIRECTORY / "prebuilt"
MANIFEST = "manifest.json"
ENVIRONMENT_SWITCH = "GPUFOREST_PREBUILT_KERNELS"
# Set in the processes of ``build``: their cache keys carry the fingerprints.
BUILDING = "GPUFOREST_BUILDING_PREBUILT_KERNELS"

CPU_NAME = "x86-64-v3"
# LLVM's features of x86-64-v2 and -v3 (X86.td: X86_64V2Features, X86_64V3Features), by the names of
# llvmlite's host feature map.
CPU_FEATURES = frozenset({
    "cx16", "sahf", "crc32", "popcnt", "sse3", "ssse3", "sse4.1", "sse4.2",
    "avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave",
})


def build_settings():
    """What, besides the sources, changes the machine code numba emits: versions and numba's code settings."""
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    numpy = ".".join(np.__version__.split(".")[:2])  # numba types by numpy's feature release
    return {
        "numba": numba.__version__, "python": python, "numpy": numpy, "llvmlite": llvmlite.__version__,
        "boundscheck": config.BOUNDSCHECK, "opt": int(config.OPT), "debuginfo": config.DEBUGINFO_DEFAULT,
    }


def index_stamp():
    """The source stamp of a prebuilt cache's index files: ``build_settings``, in place of numba's file times."""
    return json.dumps(build_settings(), sort_keys=True)


@functools.cache
def _file_digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _is_ours(value):
    return (getattr(value, "__module__", None) or "").partition(".")[0] == PACKAGE


def _code_names(code):
    """The global and attribute names ``code`` and its nested code objects read."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _code_names(constant)
    return names


@functools.cache
def fingerprint(function):
    """A hash of what numba compiles into ``function``'s machine code from gpuforest: the source files of the
    function and of every gpuforest function it reaches through its globals and closure (numba inlines callees
    and the implementations they register, such as ``overload``'s), and the values of the other globals it
    reads, which numba freezes as constants.

    Parameters
    ----------
    function : function
        A kernel's Python function (``dispatcher.py_func``).

    Returns
    -------
    str
    """
    digest = hashlib.sha256()
    _add_function(function, digest, set())
    return digest.hexdigest()


def _add_function(function, digest, seen):
    if function in seen:
        return
    seen.add(function)
    digest.update(_file_digest(function.__code__.co_filename).encode())
    names = _code_names(function.__code__)
    for name in sorted(names & function.__globals__.keys()):
        value = function.__globals__[name]
        _add_value(name, value, digest, seen)
        if isinstance(value, types.ModuleType):
            # Attribute reads (``common.candidate_gain``): the module's attributes among the names read.
            for attribute in sorted(names):
                if attribute in vars(value):
                    _add_value(f"{name}.{attribute}", vars(value)[attribute], digest, seen)
    for cell in function.__closure__ or ():
        _add_value("<cell>", cell.cell_contents, digest, seen)


def _add_value(name, value, digest, seen):
    digest.update(name.encode() + b"=")
    if isinstance(value, Dispatcher):
        _add_function(value.py_func, digest, seen)
    elif isinstance(value, _Intrinsic):
        _add_function(value._defn, digest, seen)
    elif isinstance(value, (types.FunctionType, type)) and _is_ours(value):
        # Its module's source: an ``overload`` of it, or a class's methods, live beside it.
        digest.update(_file_digest(sys.modules[value.__module__].__file__).encode())
    elif isinstance(value, types.ModuleType):
        digest.update(value.__name__.encode())
    elif callable(value) and hasattr(value, "__qualname__"):
        # Another library's function or class (numpy's, numba's): their versions are in ``build_settings``.
        digest.update(f"{getattr(value, '__module__', '')}.{value.__qualname__}".encode())
    elif isinstance(value, np.ndarray):
        digest.update(f"{value.dtype.str}{value.shape}".encode() + value.tobytes())
    elif isinstance(value, tuple):
        for position, item in enumerate(value):
            _add_value(f"[{position}]", item, digest, seen)
    else:
        # Numbers, strings, numpy scalars and dtypes, numba types: their repr is their value.
        digest.update(f"{type(value).__qualname__}:{value!r}".encode())


def read_manifest(directory=PREBUILT_DIRECTORY):
    """The prebuilt cache's description (``build_settings`` and ``cpu_name``, ``specialisations``), or None."""
    try:
        manifest = json.loads((Path(directory) / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return manifest if {"settings", "cpu_name", "specialisations"} <= manifest.keys() else None


@functools.cache
def host_supports_prebuilt():
    """Whether this process can run the prebuilt code: an x86-64 CPU with every feature of ``CPU_NAME``."""
    if not llvm.get_process_triple().startswith("x86_64"):
        return False
    features = llvm.get_host_cpu_features()
    return all(features.get(feature, False) for feature in CPU_FEATURES)


def unused_reason(directory=PREBUILT_DIRECTORY):
    """Why this process does not load the prebuilt kernels, or None if it does."""
    manifest = read_manifest(directory)
    if manifest is None:
        return "none shipped"
    if os.environ.get(ENVIRONMENT_SWITCH) == "0":
        return f"off ({ENVIRONMENT_SWITCH}=0)"
    if not host_supports_prebuilt():
        return f"not used: this CPU is not {manifest['cpu_name']}"
    settings = build_settings()
    differences = [f"{name} {built}" for name, built in manifest["settings"].items() if settings[name] != built]
    if differences:
        return "not used: built with " + ", ".join(differences)
    return None


def status(directory=PREBUILT_DIRECTORY):
    """One line on the prebuilt kernels (``gpuforest info``): what they are, and whether this process loads them."""
    manifest = read_manifest(directory)
    reason = unused_reason(directory)
    if manifest is None:
        return reason
    return f"{manifest['specialisations']} specialisations for {manifest['cpu_name']}, {reason or 'in use'}"


def prebuilt_key(cache, sig, codegen, cpu_name=CPU_NAME):
    """The key of ``sig``'s entry in a prebuilt cache: numba's (signature, code generator, bytecode hashes),
    the code generator that of ``cpu_name``, and the function's ``fingerprint``."""
    signature, magic, bytecode = caching.Cache._index_key(cache, sig, codegen)
    return signature, (magic[0], cpu_name, ""), (*bytecode, fingerprint(cache._py_func))


def package_folders():
    """The folders of gpuforest's packages of CPU kernels, by package name: a prebuilt cache has one folder per
    package, named by it (the same in a checkout and an installed package)."""
    return {PACKAGE: Path(sys.modules[PACKAGE].__file__).parent, kernels.__name__: KERNELS_DIRECTORY,
            f"{kernels.__name__}.cpu": KERNELS_DIRECTORY / "cpu"}


class PrebuiltLookup:
    """numba's cache lookup extended to a prebuilt cache of gpuforest's kernels: on a miss of numba's own cache,
    the entry of ``prebuilt_key`` in ``directory``.

    Parameters
    ----------
    directory : path
        The prebuilt cache: one folder per package, numba's index and data files (``convert``).
    """

    def __init__(self, directory):
        self.directory = Path(directory)
        self.stamp = index_stamp()

    def index_file(self, cache):
        """The prebuilt index of ``cache``'s function (numba's ``IndexDataCacheFile``), or None if there is none."""
        package = cache._py_func.__module__.rpartition(".")[0]
        if package.partition(".")[0] != PACKAGE:
            return None
        index_file = caching.IndexDataCacheFile(
            cache_path=str(self.directory / package), filename_base=cache._impl.filename_base, source_stamp=self.stamp,
        )
        return index_file if os.path.exists(index_file._index_path) else None

    def load_overload(self, cache, sig, target_context):
        """The compiled kernel for ``sig`` rebuilt from the prebuilt cache, or None."""
        index_file = self.index_file(cache)
        if index_file is None:
            return None
        data = index_file.load(prebuilt_key(cache, sig, target_context.codegen()))
        return None if data is None else cache._impl.rebuild(target_context, data)


def install():
    """Make numba's function caches (``FunctionCache``, every cached njit function of the process) fall back to
    the shipped prebuilt kernels, if this process can use them (``unused_reason``), until ``ENVIRONMENT_SWITCH``
    is set to 0 (``gpuforest warmup --native``); in ``build``'s processes, key the cache by ``prebuilt_key``.
    Called when gpuforest is imported."""
    if getattr(caching.FunctionCache.load_overload, "prebuilt", None) is not None:
        return
    if os.environ.get(BUILDING) == "1":
        caching.FunctionCache._index_key = _building_index_key
        return
    if unused_reason() is not None:
        return
    load = caching.FunctionCache.load_overload
    lookup = PrebuiltLookup(PREBUILT_DIRECTORY)

    @functools.wraps(load)
    def load_or_prebuilt(self, sig, target_context):
        data = load(self, sig, target_context)
        if data is None and self._enabled and os.environ.get(ENVIRONMENT_SWITCH) != "0":
            data = lookup.load_overload(self, sig, target_context)
        return data

    load_or_prebuilt.prebuilt = lookup
    caching.FunctionCache.load_overload = load_or_prebuilt


def _building_index_key(self, sig, codegen):
    return prebuilt_key(self, sig, codegen, codegen.magic_tuple()[1])


def convert(cache_directory, directory):
    """Copy the kernels of ``package_folders`` from a numba cache (``NUMBA_CACHE_DIR``, built with
    ``prebuilt_key``) into a prebuilt cache, one folder per package, their index files stamped with
    ``build_settings`` instead of file times.

    Returns
    -------
    int
        The number of specialisations copied.
    """
    stamp = index_stamp()
    count = 0
    for package, folder in package_folders().items():
        subpath = caching.UserProvidedCacheLocator.get_suitable_cache_subpath(str(folder / "any.py"))
        built = Path(cache_directory, subpath)
        target = Path(directory, package)
        for index_path in sorted(built.glob("*.nbi")):
            _, overloads = _read_index(index_path)
            target.mkdir(parents=True, exist_ok=True)
            caching.IndexDataCacheFile(str(target), index_path.stem, stamp)._save_index(overloads)
            for data_name in overloads.values():
                shutil.copyfile(built / data_name, target / data_name)
            count += len(overloads)
    return count


def build(directory=PREBUILT_DIRECTORY, jobs=None):
    """Rebuild the prebuilt cache: ``gpuforest warmup`` compiles every estimator's kernels for ``CPU_NAME`` into
    an empty numba cache, keyed by ``prebuilt_key``; ``convert`` then copies them to ``directory``. A kernel
    whose entries have the same keys as before keeps its files (numba's are not byte-identical from one build
    to the next), so that a rebuild changes the files of the changed kernels only.

    Returns
    -------
    dict
        The manifest written beside them.
    """
    directory = Path(directory)
    with tempfile.TemporaryDirectory() as work_directory:
        cache_directory, built = Path(work_directory, "cache"), Path(work_directory, "prebuilt")
        environment = dict(
            os.environ, NUMBA_CPU_NAME=CPU_NAME, NUMBA_CPU_FEATURES="", NUMBA_CACHE_DIR=str(cache_directory),
            **{BUILDING: "1"},
        )
        command = [sys.executable, "-m", "gpuforest.cli", "warmup", "--device", "cpu"]
        subprocess.run(command + ([] if jobs is None else ["--jobs", str(jobs)]), env=environment, check=True)
        count = convert(cache_directory, built)
        keep_unchanged_kernels(directory, built)
        shutil.rmtree(directory, ignore_errors=True)
        shutil.copytree(built, directory)
    manifest = {"settings": build_settings(), "cpu_name": CPU_NAME, "specialisations": count}
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def keep_unchanged_kernels(previous, built):
    """Copy into the prebuilt cache ``built`` the files of ``previous`` of every kernel whose index has the same
    stamp and keys in both (numba's files of a kernel differ from one build to the next, its entries do not)."""
    for index_path in Path(built).glob("*/*.nbi"):
        previous_index = Path(previous) / index_path.relative_to(built)
        if previous_index.exists() and _index_keys(previous_index) == _index_keys(index_path):
            for name in [index_path.name, *_read_index(previous_index)[1].values()]:
                shutil.copyfile(previous_index.parent / name, index_path.parent / name)


def _read_index(path):
    """A numba index file's ``(stamp, {key: data file name})``."""
    with open(path, "rb") as f:
        pickle.load(f)  # numba's version
        return pickle.loads(f.read())


def _index_keys(path):
    stamp, overloads = _read_index(path)
    return stamp, set(overloads)
