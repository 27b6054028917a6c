"""Device listing through NVML, with NVML replaced by a fake where there is no GPU."""

import io
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pynvml
import pytest

from gpuforest import devices, show_devices
from gpuforest.devices import list_devices


class FakeNVML:
    """Two GPUs as pynvml would report them."""

    def __init__(self, monkeypatch):
        names = [b"NVIDIA H100 80GB HBM3", "NVIDIA H200"]
        for name, function in {
            "nvmlInit": lambda: None,
            "nvmlShutdown": lambda: None,
            "nvmlSystemGetDriverVersion": lambda: "560.35.03",
            "nvmlDeviceGetCount": lambda: 2,
            "nvmlDeviceGetHandleByIndex": lambda index: index,
            "nvmlDeviceGetName": lambda handle: names[handle],
            "nvmlDeviceGetMemoryInfo": lambda handle: SimpleNamespace(total=80 * 2**30, free=(60 + handle) * 2**30),
            "nvmlDeviceGetCudaComputeCapability": lambda handle: (9, 0),
        }.items():
            monkeypatch.setattr(pynvml, name, function)


def test_devices_are_listed_with_name_memory_and_driver(monkeypatch):
    FakeNVML(monkeypatch)
    out = io.StringIO()
    devices = show_devices(file=out)
    assert [device.name for device in devices] == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]
    assert devices[1].memory_free_bytes == 61 * 2**30 and devices[0].compute_capability == (9, 0)
    lines = out.getvalue().splitlines()
    assert lines[0] == (
        "GPU 0: NVIDIA H100 80GB HBM3, compute capability 9.0, 60.0 of 80.0 GiB free, driver 560.35.03"
    )
    assert lines[1].startswith("GPU 1: NVIDIA H200,")


def test_no_driver_means_no_devices(monkeypatch):
    def no_driver():
        raise pynvml.NVMLError(pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)

    monkeypatch.setattr(pynvml, "nvmlInit", no_driver)
    out = io.StringIO()
    assert show_devices(file=out) == [] and list_devices() == []
    assert "No NVIDIA GPU found" in out.getvalue()


def _resident_mib():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS")) / 1024


@pytest.mark.skipif(not Path("/proc/self/status").exists() or devices._MALLOC_TRIM is None, reason="glibc on Linux")
def test_release_free_host_memory_returns_the_heap_pages_freed_below_live_blocks():
    # A freed 32 MiB block raises glibc's mmap threshold: the next blocks come from the heap, as a fit's do.
    np.ones(32 << 20, dtype=np.uint8)
    blocks = [np.ones(256 << 10, dtype=np.uint8) for _ in range(256)]  # 64 MiB, on the heap
    pins = [np.ones(256 << 10, dtype=np.uint8)]  # allocated last: the heap cannot shrink below it
    del blocks
    before = _resident_mib()
    devices.release_free_host_memory()
    assert before - _resident_mib() > 32
    assert pins[0].sum() == 256 << 10
