"""What devices there are: NVIDIA GPUs through NVML (pynvml), and free memory per backend."""

import ctypes
import ctypes.util
from dataclasses import dataclass

import psutil


@dataclass
class DeviceInfo:
    """One NVIDIA GPU as NVML reports it."""

    index: int
    name: str
    memory_total_bytes: int
    memory_free_bytes: int
    driver_version: str
    compute_capability: tuple


def list_devices():
    """Every NVIDIA GPU NVML sees; an empty list without a driver or a GPU."""
    import pynvml

    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return []
    try:
        driver = pynvml.nvmlSystemGetDriverVersion()
        devices = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            memory = pynvml.nvmlDeviceGetMemoryInfo(handle)
            devices.append(
                DeviceInfo(
                    index=index,
                    name=_text(pynvml.nvmlDeviceGetName(handle)),
                    memory_total_bytes=int(memory.total),
                    memory_free_bytes=int(memory.free),
                    driver_version=_text(driver),
                    compute_capability=tuple(pynvml.nvmlDeviceGetCudaComputeCapability(handle)),
                )
            )
        return devices
    finally:
        pynvml.nvmlShutdown()


def show_devices(file=None):
    """Print the NVIDIA GPUs (name, memory, driver) and return them as ``DeviceInfo`` list."""
    devices = list_devices()
    if not devices:
        print("No NVIDIA GPU found (NVML unavailable or no device); gpuforest runs on the CPU.", file=file)
    for device in devices:
        print(
            f"GPU {device.index}: {device.name}, compute capability {device.compute_capability[0]}."
            f"{device.compute_capability[1]}, {device.memory_free_bytes / 2**30:.1f} of "
            f"{device.memory_total_bytes / 2**30:.1f} GiB free, driver {device.driver_version}",
            file=file,
        )
    return devices


def host_free_memory_bytes():
    """Memory the CPU backend may use (available RAM)."""
    return int(psutil.virtual_memory().available)


def _malloc_trim():
    """glibc's ``malloc_trim``, or None on another C library."""
    try:
        return ctypes.CDLL(ctypes.util.find_library("c")).malloc_trim
    except (OSError, AttributeError, TypeError):
        return None


_MALLOC_TRIM = _malloc_trim()


def release_free_host_memory():
    """Give the C heap's free pages back to the system (glibc's ``malloc_trim``; nothing elsewhere).

    A forest's trees, allocated batch after batch among the batches' temporaries,
    pin the heap: memory freed below them stays resident, and a fit's resident
    memory grows by every batch's temporaries, not by one's.
    """
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def _text(value):
    return value.decode() if isinstance(value, bytes) else str(value)
