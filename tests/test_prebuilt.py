"""The prebuilt CPU kernels: fingerprints, the lookup, and fresh processes that load instead of compiling."""

import importlib
import json
import os
import subprocess
import sys

import pytest
from numba.core import caching
from numba.core.dispatcher import Dispatcher

from gpuforest import prebuilt
from gpuforest.level import histogram_plan

UNUSED = prebuilt.unused_reason()
needs_prebuilt = pytest.mark.skipif(UNUSED is not None, reason=f"prebuilt kernels {UNUSED}")

FINGERPRINTS = """
import json, sys
from numba.core.dispatcher import Dispatcher
from gpuforest import prebuilt
print(json.dumps({f"{name}.{attribute}": prebuilt.fingerprint(value.py_func)
                  for name, module in sorted(sys.modules.items()) if name.startswith("gpuforest")
                  for attribute, value in sorted(vars(module).items())
                  if isinstance(value, Dispatcher) and value.py_func.__module__ == name}))
"""

# A fresh process: counts gpuforest's kernel compilations while it runs the command line's ``sys.argv[1:]``.
COUNTING = """
import json, sys
from numba.core import event
compiled = []
class Count(event.Listener):
    def on_start(self, ev):
        function = ev.data["dispatcher"].py_func
        if function.__module__.startswith("gpuforest"):
            compiled.append(function.__qualname__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Count())
from gpuforest import cli
cli.main(sys.argv[1:])
print(json.dumps(sorted(set(compiled))))
"""

FIT = """
import hashlib, sys
import numpy as np
from sklearn.datasets import load_digits
import gpuforest
X, y = load_digits(return_X_y=True)
X, y = X[:600], y[:600]
for model in (gpuforest.GradientBoostingClassifier(n_estimators=5, max_depth=4, random_state=0),
              gpuforest.RandomForestClassifier(n_estimators=4, random_state=0),
              gpuforest.DecisionTreeRegressor(random_state=0)):
    output = model.fit(X, y).predict(X)
    print(type(model).__name__, hashlib.sha256(np.ascontiguousarray(output).tobytes()).hexdigest())
"""


def _run(script, *args, **environment):
    completed = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, env={**os.environ, **environment},
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def test_fingerprints_are_the_same_in_every_process():
    ours = json.loads(_run(FINGERPRINTS, PYTHONHASHSEED="1"))
    theirs = json.loads(_run(FINGERPRINTS, PYTHONHASHSEED="2"))
    assert len(ours) > 50
    assert ours == theirs


TOY_CALLEE = """
from numba import njit

OFFSET = {offset}


@njit
def inner(x):
    return x + OFFSET
"""

TOY_CALLER = """
from numba import njit

from .callee import inner
from .constants import SCALE


@njit
def outer(x):
    return inner(x) * SCALE
"""


def _toy_fingerprint(tmp_path, name, offset=1, scale=2, unread=0, unrelated=""):
    """The fingerprint of ``outer`` in a fresh package ``name``: it calls ``inner`` from another file and reads
    ``SCALE`` from a third, beside ``UNREAD``; ``unrelated.py`` is imported by nothing."""
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "callee.py").write_text(TOY_CALLEE.format(offset=offset))
    (package / "caller.py").write_text(TOY_CALLER)
    (package / "constants.py").write_text(f"SCALE = {scale}\nUNREAD = {unread}\n")
    (package / "unrelated.py").write_text(unrelated)
    sys.path.insert(0, str(tmp_path))
    try:
        caller = importlib.import_module(f"{name}.caller")
    finally:
        sys.path.remove(str(tmp_path))
    assert caller.outer(3) == (3 + offset) * scale
    return prebuilt.fingerprint(caller.outer.py_func)


def test_fingerprint_follows_callees_and_constants_in_other_files_only(tmp_path):
    reference = _toy_fingerprint(tmp_path, "toy_reference")
    # What numba compiles into ``outer``: the callee's file, the constants read.
    assert _toy_fingerprint(tmp_path, "toy_callee", offset=5) != reference
    assert _toy_fingerprint(tmp_path, "toy_scale", scale=3) != reference
    # What it does not: a constant nobody reads, a file nobody imports.
    assert _toy_fingerprint(tmp_path, "toy_unread", unread=7) == reference
    assert _toy_fingerprint(tmp_path, "toy_unrelated", unrelated="VALUE = 1\n") == reference


def _prebuilt_signature(dispatcher):
    lookup = prebuilt.PrebuiltLookup(prebuilt.PREBUILT_DIRECTORY)
    _, overloads = prebuilt._read_index(lookup.index_file(dispatcher._cache)._index_path)
    return lookup, next(iter(overloads))[0]


@needs_prebuilt
def test_lookup_loads_an_entry_with_the_kernels_fingerprint_only(monkeypatch):
    lookup, signature = _prebuilt_signature(histogram_plan)
    loaded = lookup.load_overload(histogram_plan._cache, signature, histogram_plan.targetctx)
    assert loaded is not None and loaded.signature.args == signature
    # The same call, had the kernel or a callee changed since the build: numba compiles it.
    monkeypatch.setattr(prebuilt, "fingerprint", lambda function: "0" * 64)
    assert lookup.load_overload(histogram_plan._cache, signature, histogram_plan.targetctx) is None


def test_lookup_leaves_other_packages_kernels_alone(tmp_path):
    (tmp_path / "toy_other.py").write_text("from numba import njit\n\n\n@njit(cache=True)\ndef one():\n    return 1\n")
    sys.path.insert(0, str(tmp_path))
    try:
        module = importlib.import_module("toy_other")
    finally:
        sys.path.remove(str(tmp_path))
    assert isinstance(module.one, Dispatcher)
    assert prebuilt.PrebuiltLookup(prebuilt.PREBUILT_DIRECTORY).index_file(module.one._cache) is None


@needs_prebuilt
def test_a_fresh_process_warms_up_every_estimator_without_compiling(tmp_path):
    """Fails when a kernel changed without ``make prebuilt-kernels``: the kernels it lists compiled."""
    compiled = json.loads(_run(COUNTING, "warmup", "--device", "cpu", "--jobs", "1",
                               NUMBA_CACHE_DIR=str(tmp_path)).splitlines()[-1])
    assert compiled == []


@pytest.mark.quality
@needs_prebuilt
def test_prebuilt_and_natively_compiled_kernels_fit_the_same_models(tmp_path):
    loaded = _run(FIT, NUMBA_CACHE_DIR=str(tmp_path / "loaded"))
    compiled = _run(FIT, NUMBA_CACHE_DIR=str(tmp_path / "compiled"), **{prebuilt.ENVIRONMENT_SWITCH: "0"})
    assert loaded == compiled
    assert len(loaded.splitlines()) == 3


def _manifest(directory, **settings):
    directory.mkdir()
    manifest = {"settings": {**prebuilt.build_settings(), **settings}, "cpu_name": prebuilt.CPU_NAME,
                "specialisations": 3}
    (directory / prebuilt.MANIFEST).write_text(json.dumps(manifest))
    return directory


def test_status_says_whether_the_prebuilt_kernels_are_used_and_why_not(tmp_path, monkeypatch):
    assert prebuilt.status(tmp_path) == "none shipped"
    older = _manifest(tmp_path / "older", numba="0.59.0", python="3.9")
    assert prebuilt.status(older) == "3 specialisations for x86-64-v3, not used: built with numba 0.59.0, python 3.9"
    current = _manifest(tmp_path / "current")
    expected = "in use" if prebuilt.host_supports_prebuilt() else "not used: this CPU is not x86-64-v3"
    assert prebuilt.status(current) == f"3 specialisations for x86-64-v3, {expected}"
    monkeypatch.setenv(prebuilt.ENVIRONMENT_SWITCH, "0")
    assert prebuilt.status(current) == "3 specialisations for x86-64-v3, off (GPUFOREST_PREBUILT_KERNELS=0)"


def test_host_support_needs_every_feature_of_the_level(monkeypatch, request):
    request.addfinalizer(prebuilt.host_supports_prebuilt.cache_clear)
    features = dict.fromkeys(prebuilt.CPU_FEATURES, True)
    monkeypatch.setattr(prebuilt.llvm, "get_process_triple", lambda: "x86_64-unknown-linux-gnu")
    for missing, expected in ((None, True), ("avx2", False), ("fma", False)):
        host = {**features, **({missing: False} if missing else {})}
        monkeypatch.setattr(prebuilt.llvm, "get_host_cpu_features", lambda: host)
        prebuilt.host_supports_prebuilt.cache_clear()
        assert prebuilt.host_supports_prebuilt() is expected
    monkeypatch.setattr(prebuilt.llvm, "get_process_triple", lambda: "aarch64-unknown-linux-gnu")
    prebuilt.host_supports_prebuilt.cache_clear()
    assert prebuilt.host_supports_prebuilt() is False


def _cache_files(directory, package, filename_base, entries, stamp="settings"):
    """A numba index in ``directory/package`` of ``entries`` ({key: data bytes}), as ``convert`` writes them."""
    index_file = caching.IndexDataCacheFile(str(directory / package), filename_base, stamp)
    (directory / package).mkdir(parents=True, exist_ok=True)
    for key, data in entries.items():
        index_file.save(key, data)
    return index_file


def test_a_rebuild_keeps_the_files_of_kernels_whose_entries_did_not_change(tmp_path):
    previous, built = tmp_path / "previous", tmp_path / "built"
    same = {("sig-a", "fingerprint-1"): b"old code a"}
    _cache_files(previous, "gpuforest.kernels.cpu", "histogram.same-1.py311", same)
    _cache_files(built, "gpuforest.kernels.cpu", "histogram.same-1.py311", {("sig-a", "fingerprint-1"): b"new code a"})
    _cache_files(previous, "gpuforest.kernels.cpu", "histogram.changed-9.py311", {("sig-b", "fingerprint-1"): b"old b"})
    changed = _cache_files(built, "gpuforest.kernels.cpu", "histogram.changed-9.py311",
                           {("sig-b", "fingerprint-2"): b"new b"})
    restamped = _cache_files(built, "gpuforest", "level.restamped-3.py311", {("sig-c", "f"): b"new c"}, stamp="new")
    _cache_files(previous, "gpuforest", "level.restamped-3.py311", {("sig-c", "f"): b"old c"})
    kept = caching.IndexDataCacheFile(str(built / "gpuforest.kernels.cpu"), "histogram.same-1.py311", "settings")
    prebuilt.keep_unchanged_kernels(previous, built)
    assert kept.load(("sig-a", "fingerprint-1")) == b"old code a"
    assert (previous / "gpuforest.kernels.cpu" / "histogram.same-1.py311.1.nbc").read_bytes() == (
        built / "gpuforest.kernels.cpu" / "histogram.same-1.py311.1.nbc").read_bytes()
    # A changed fingerprint, or other build settings: the new files.
    assert changed.load(("sig-b", "fingerprint-2")) == b"new b"
    assert restamped.load(("sig-c", "f")) == b"new c"
