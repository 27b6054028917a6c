"""PTX resources of every CUDA kernel: registers, spills and shared memory, and H100 occupancy.

Needs no GPU. Every module of ``gpuforest.kernels.cuda`` that offers ``ptx_specializations()``
(a list of ``(name, python_function, argument_types[, block_size[, max_registers]])``) has each specialisation
compiled with numba-cuda (``compile_ptx``'s steps, lowered once) for compute capability 8.0 and 9.0; the PTX is
assembled with ``ptxas -v`` (from the ``nvidia-cuda-nvcc`` wheel that numba-cuda[cu12] brings,
else the one on ``PATH``), whose report gives registers, spill stores/loads, stack frame and
static shared memory per kernel. Theoretical occupancy is then computed for an H100 (SM 9.0
limits, the rules of CUDA's occupancy calculator) at the specialisation's block size (256
when none is given). Kernels use static ``cuda.shared.array`` only, so ptxas sees all of
their shared memory.

Rules (``--check`` exits non-zero when one fails, or when a kernel does not compile):
no spill stores or loads in the kernels of the histogram, splitting, partitioning, multiway and growth modules
(but the capped ones named in ``SPILL_ALLOWED_SUFFIXES``);
theoretical occupancy of at least 50% for every kernel.

Writes JSON and a markdown table to ``benchmarks/results/ptx_resources.{json,md}``.

    python benchmarks/ptx_resources.py [--check] [--json PATH] [--markdown PATH]
                                       [--modules histogram splitting ...] [--ptxas PATH]
"""

import argparse
import importlib
import importlib.util
import json
import os
import pkgutil
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import types as pytypes
from datetime import datetime, timezone
from pathlib import Path

from gpuforest.backend import KERNEL_STAGES

RESULTS = Path(__file__).resolve().parent / "results"
PACKAGE = "gpuforest.kernels.cuda"
# One module per data-flow stage, the names of kernels/cpu (docs/ARCHITECTURE.md).
EXPECTED_MODULES = KERNEL_STAGES
NO_SPILL_MODULES = ("histogram", "splitting", "partitioning", "multiway", "growth")
# Kernels of those modules whose names end so may spill: the split scans compiled for monotonic constraints
# or several outputs (kernels/cuda/splitting.py, CONSTRAINED_MAX_REGISTERS), capped at half occupancy's
# registers; the other scans, the ones every other fit runs, spill nothing. And the one block of a level's
# bookkeeping (kernels/cuda/growth.py, split_and_plan_capped: PLAN_MAX_REGISTERS), a few hundred bytes a
# thread that stay in L1 beside a level's data.
SPILL_ALLOWED_SUFFIXES = ("_constrained", "_multi_output", "_capped")
MIN_OCCUPANCY = 0.5
ARCHS = ((8, 0), (9, 0))
DEFAULT_BLOCK_SIZE = 256

# H100 (SM 9.0) limits, as in CUDA's occupancy calculator (cuda_occupancy.h) and the
# CUDA C++ Programming Guide's table of compute capabilities.
H100 = {
    "name": "NVIDIA H100 (SM 9.0)",
    "multiprocessors": 132,
    "warp_size": 32,
    "registers_per_sm": 65536,
    "registers_per_block": 65536,
    "register_allocation_unit": 256,  # registers, allocated per warp
    "max_registers_per_thread": 255,
    "register_sub_partitions": 4,  # each SM partition holds a quarter of the register file
    "max_threads_per_sm": 2048,
    "max_threads_per_block": 1024,
    "max_blocks_per_sm": 32,
    "shared_memory_per_sm": 228 * 1024,
    "max_shared_memory_per_block": 227 * 1024,  # opt-in maximum for one block
    "reserved_shared_memory_per_block": 1024,  # taken by the system for every resident block
    "shared_memory_allocation_unit": 128,
}


class PtxResourcesError(RuntimeError):
    """A set-up problem (no ptxas, no numba-cuda, no compiler) explained for a person."""


# --- ptxas -v output ----------------------------------------------------------

_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(sm_\w+)'")
_PROPERTIES = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")
_CMEM = re.compile(r"(\d+) bytes cmem\[0\]")


def parse_ptxas_output(text):
    """Parse ``ptxas -v`` output into ``{"entries": [...], "functions": {...}}``.

    ``entries``: one dict per kernel in order, with ``name``, ``arch``, ``registers``,
    ``barriers``, ``smem`` and ``cmem`` (bytes). ``functions``: every function ptxas reports
    properties for (kernels and non-inlined device functions) -> ``stack_frame``,
    ``spill_stores``, ``spill_loads`` (bytes).
    """
    entries = []
    functions = {}
    current = None
    pending = None
    for line in text.splitlines():
        match = _ENTRY.search(line)
        if match:
            current = {"name": match.group(1), "arch": match.group(2), "registers": None, "barriers": 0, "smem": 0,
                       "cmem": 0}
            entries.append(current)
            pending = None
            continue
        match = _PROPERTIES.search(line)
        if match:
            pending = match.group(1)
            # Older ptxas versions print the numbers on the same line.
        match = _FRAME.search(line)
        if match and pending is not None:
            functions[pending] = {
                "stack_frame": int(match.group(1)),
                "spill_stores": int(match.group(2)),
                "spill_loads": int(match.group(3)),
            }
            pending = None
            continue
        match = _USED.search(line)
        if match and current is not None:
            current["registers"] = int(match.group(1))
            for key, pattern in (("barriers", _BARRIERS), ("smem", _SMEM), ("cmem", _CMEM)):
                found = pattern.search(line)
                if found:
                    current[key] = int(found.group(1))
    return {"entries": entries, "functions": functions}


def kernel_resources(text):
    """Resources of the one kernel in a ``ptxas -v`` report of a single-kernel PTX file.

    Spills count the kernel and every non-inlined device function in the file (all of
    them are the kernel's); the stack frame is the kernel's own.
    """
    parsed = parse_ptxas_output(text)
    if len(parsed["entries"]) != 1:
        raise ValueError(f"expected one entry function in the ptxas report, found {len(parsed['entries'])}:\n{text}")
    entry = parsed["entries"][0]
    if entry["registers"] is None:
        raise ValueError(f"no 'Used N registers' line for {entry['name']} in the ptxas report:\n{text}")
    own = parsed["functions"].get(entry["name"], {"stack_frame": 0, "spill_stores": 0, "spill_loads": 0})
    return {
        "symbol": entry["name"],
        "arch": entry["arch"],
        "registers": entry["registers"],
        "barriers": entry["barriers"],
        "smem": entry["smem"],
        "cmem": entry["cmem"],
        "stack_frame": own["stack_frame"],
        "spill_stores": sum(f["spill_stores"] for f in parsed["functions"].values()),
        "spill_loads": sum(f["spill_loads"] for f in parsed["functions"].values()),
    }


# --- occupancy ------------------------------------------------------------------

def _round_up(value, unit):
    return -(-value // unit) * unit


def occupancy(registers, shared_memory, block_size, gpu=H100):
    """Theoretical occupancy of a kernel on ``gpu`` (the CUDA occupancy calculator's rules).

    ``registers`` per thread, ``shared_memory`` bytes per block (static + dynamic),
    ``block_size`` threads per block. Returns ``blocks_per_sm``, ``active_warps``,
    ``occupancy`` (active warps / maximum warps per SM) and ``limiter`` (the resource that
    bounds the resident blocks: ``warps``, ``blocks``, ``registers`` or ``shared_memory``;
    for a block that cannot run at all, the reason).
    """
    warp_size = gpu["warp_size"]
    max_warps = gpu["max_threads_per_sm"] // warp_size
    if block_size < 1 or block_size > gpu["max_threads_per_block"]:
        return {"blocks_per_sm": 0, "active_warps": 0, "occupancy": 0.0, "limiter": "block_size"}
    warps_per_block = -(-block_size // warp_size)
    limits = {"warps": max_warps // warps_per_block, "blocks": gpu["max_blocks_per_sm"]}

    if registers > 0:
        if registers > gpu["max_registers_per_thread"]:
            return {"blocks_per_sm": 0, "active_warps": 0, "occupancy": 0.0, "limiter": "registers"}
        registers_per_warp = _round_up(registers * warp_size, gpu["register_allocation_unit"])
        partitions = gpu["register_sub_partitions"]
        # The hardware checks the block limit as if the warps filled every partition.
        assumed_per_block = registers_per_warp * _round_up(warps_per_block, partitions)
        if registers_per_warp * warps_per_block > gpu["registers_per_block"] or assumed_per_block > gpu[
            "registers_per_block"
        ]:
            return {"blocks_per_sm": 0, "active_warps": 0, "occupancy": 0.0, "limiter": "registers"}
        warps_per_partition = (gpu["registers_per_sm"] // partitions) // registers_per_warp
        limits["registers"] = warps_per_partition * partitions // warps_per_block

    if shared_memory > gpu["max_shared_memory_per_block"]:
        return {"blocks_per_sm": 0, "active_warps": 0, "occupancy": 0.0, "limiter": "shared_memory"}
    per_block = _round_up(shared_memory + gpu["reserved_shared_memory_per_block"], gpu["shared_memory_allocation_unit"])
    limits["shared_memory"] = gpu["shared_memory_per_sm"] // per_block

    # The first of the tightest limits in the order warps, blocks, registers, shared memory.
    limiter = min(limits, key=limits.get)
    blocks = limits[limiter]
    active_warps = blocks * warps_per_block
    return {"blocks_per_sm": blocks, "active_warps": active_warps, "occupancy": active_warps / max_warps,
            "limiter": limiter}


# --- toolchain --------------------------------------------------------------------

def find_ptxas(explicit=None):
    """Path of ptxas: ``explicit``, ``$GPUFOREST_PTXAS``, the ``nvidia-cuda-nvcc`` wheel's,
    ``$CUDA_HOME/bin`` or ``$CUDA_PATH/bin``, then ``PATH``. Raises ``PtxResourcesError``."""
    tried = []
    for label, candidate in (("--ptxas", explicit), ("$GPUFOREST_PTXAS", os.environ.get("GPUFOREST_PTXAS"))):
        if candidate:
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
            raise PtxResourcesError(f"ptxas given by {label} is not an executable file: {candidate}")
    name = "ptxas.exe" if os.name == "nt" else "ptxas"
    try:
        spec = importlib.util.find_spec("nvidia.cuda_nvcc")
    except (ImportError, ValueError):
        spec = None
    for location in (spec.submodule_search_locations or []) if spec is not None else []:
        tried.append(os.path.join(location, "bin", name))
    if spec is None:
        tried.append("<nvidia.cuda_nvcc package: not installed>")
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(variable):
            tried.append(os.path.join(os.environ[variable], "bin", name))
    for candidate in tried:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    on_path = shutil.which(name)
    if on_path:
        return on_path
    tried.append("PATH")
    raise PtxResourcesError(
        "ptxas not found (looked in: " + ", ".join(tried) + "). Install numba-cuda with its CUDA 12 "
        "toolchain (pip install 'numba-cuda[cu12]', which brings nvidia-cuda-nvcc-cu12), put a CUDA "
        "toolkit's bin/ on PATH, or pass --ptxas PATH."
    )


def ptxas_version(ptxas):
    result = subprocess.run([ptxas, "--version"], capture_output=True, text=True, check=False)
    lines = [line.strip() for line in result.stdout.splitlines() if line.strip()]
    releases = [line for line in lines if "release" in line]
    return (releases or lines or ["unknown"])[-1]


def run_ptxas(ptxas, ptx_path, arch, max_registers=None):
    """``ptxas -v`` of one PTX file for ``sm_<arch>`` (``--maxrregcount`` when the kernel is launched with
    ``max_registers``, as numba-cuda then links it); its report as text."""
    command = [ptxas, "-v", f"-arch=sm_{arch[0]}{arch[1]}", str(ptx_path), "-o", os.devnull]
    if max_registers is not None:
        command.append(f"--maxrregcount={max_registers}")
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        hint = ""
        if "Unsupported .version" in result.stderr or "not supported" in result.stderr:
            hint = ("\nThis ptxas is older than the PTX that NVVM wrote: use the ptxas of the same CUDA "
                    "release as numba-cuda's NVVM (the nvidia-cuda-nvcc wheel), e.g. --ptxas PATH.")
        raise RuntimeError(f"{' '.join(command)} failed (exit {result.returncode}):\n{result.stderr.strip()}{hint}")
    # ptxas -v reports on stderr; keep both in case a version changes that.
    return result.stderr + result.stdout


def _import_numba_cuda():
    """numba.cuda with compilation possible without a GPU."""
    if "numba" not in sys.modules:
        # The simulator has no compiler; this process only compiles, never launches.
        os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
    try:
        from numba import config, cuda
        import numba.cuda.dispatcher as dispatcher
    except ImportError as error:
        raise PtxResourcesError(
            f"numba-cuda is not installed ({error}): pip install 'numba-cuda[cu12]'"
        ) from error
    if config.ENABLE_CUDASIM or not hasattr(cuda, "compile_ptx"):
        raise PtxResourcesError(
            "numba's CUDA simulator is on (NUMBA_ENABLE_CUDASIM=1) and it cannot compile PTX: "
            "run this script in a process without NUMBA_ENABLE_CUDASIM"
        )
    return cuda, dispatcher


class _FakeDevice:
    """Stands in for numba's current device while compiling: the njit functions that kernels
    call are compiled for the current device's compute capability, and there is no device."""

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher
        self.compute_capability = ARCHS[0]

    def __enter__(self):
        self.saved = self.dispatcher.get_current_device
        self.dispatcher.get_current_device = lambda: pytypes.SimpleNamespace(
            compute_capability=self.compute_capability
        )
        return self

    def __exit__(self, *exc):
        self.dispatcher.get_current_device = self.saved
        return False


def _preflight(cuda):
    """Compile a trivial kernel, so that a missing NVVM is one clear error, not one per kernel."""
    from numba import types

    def _copy(source, target):
        index = cuda.grid(1)
        if index < source.shape[0]:
            target[index] = source[index]

    array = types.Array(types.float32, 1, "C")
    try:
        cuda.compile_ptx(_copy, (array, array), cc=ARCHS[0])
    except Exception as error:  # noqa: BLE001 - any failure here is a toolchain problem
        raise PtxResourcesError(
            f"numba-cuda cannot compile even a trivial kernel ({type(error).__name__}: {error}). "
            "Is NVVM installed? pip install 'numba-cuda[cu12]' brings it (nvidia-cuda-nvcc-cu12)."
        ) from error


# --- discovery and compilation --------------------------------------------------------

def discover(package_name, only=None):
    """``(modules, errors, missing)``: modules with ``ptx_specializations`` as ``{name: [spec...]}``,
    import or listing errors, and the expected stage modules that are absent."""
    package = importlib.import_module(package_name)
    names = sorted(info.name for info in pkgutil.iter_modules(package.__path__) if not info.name.startswith("_"))
    if only:
        unknown = sorted(set(only) - set(names))
        if unknown:
            raise PtxResourcesError(f"no module(s) {', '.join(unknown)} in {package_name} (have: {', '.join(names)})")
        names = [name for name in names if name in only]
    modules, errors = {}, []
    for name in names:
        try:
            module = importlib.import_module(f"{package_name}.{name}")
        except Exception as error:  # noqa: BLE001 - reported, then --check fails
            errors.append({"module": name, "kernel": None, "arch": None,
                           "error": f"import failed: {type(error).__name__}: {error}"})
            continue
        if not hasattr(module, "ptx_specializations"):
            continue
        try:
            specs = [_normalise(name, spec) for spec in module.ptx_specializations()]
        except Exception as error:  # noqa: BLE001
            errors.append({"module": name, "kernel": None, "arch": None,
                           "error": f"ptx_specializations() failed: {type(error).__name__}: {error}"})
            continue
        if not specs:
            errors.append({"module": name, "kernel": None, "arch": None,
                           "error": "ptx_specializations() returned no kernels"})
        modules[name] = specs
    missing = [] if only else [name for name in EXPECTED_MODULES if name not in modules
                               and not any(e["module"] == name for e in errors)]
    return modules, errors, missing


def _normalise(module, spec):
    if not isinstance(spec, (tuple, list)) or len(spec) not in (3, 4, 5):
        raise TypeError(f"{module}: a specialisation must be (name, function, argument_types[, block_size"
                        f"[, max_registers]]), got {spec!r}")
    name, function, argument_types = spec[:3]
    block_size = spec[3] if len(spec) >= 4 else DEFAULT_BLOCK_SIZE
    max_registers = spec[4] if len(spec) == 5 else None
    if not isinstance(block_size, int) or isinstance(block_size, bool) or block_size < 1:
        raise TypeError(f"{module}.{name}: block size must be a positive int, got {block_size!r}")
    # A cuda.jit dispatcher given in place of the plain function: compile its Python function.
    function = getattr(function, "py_func", function)
    return {"name": str(name), "function": function, "argument_types": tuple(argument_types),
            "block_size": block_size, "max_registers": max_registers}


def _safe(text):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)


def _compile_ptx(cuda, spec, arch, library=None):
    """``(ptx, library)`` of ``spec`` for ``arch``. numba-cuda's lowering does not depend on the
    arch (about 95% of a compile), so the lowered library of the first arch is reused for the next,
    whose PTX only NVVM makes; a numba-cuda without ``_compile_pyfunc_with_fixup`` compiles each."""
    from numba.cuda import compiler

    lower = getattr(compiler, "_compile_pyfunc_with_fixup", None)
    if lower is None:
        return cuda.compile_ptx(spec["function"], spec["argument_types"], cc=arch)[0], None
    if library is None:
        library, _ = lower(spec["function"], spec["argument_types"], device=False, abi="numba", cc=arch)
    return library.get_asm_strs(cc=arch)[0], library


def measure(modules, ptxas, ptx_dir, archs=ARCHS, log=print):
    """Compile and assemble every specialisation for every arch; ``(rows, errors)``."""
    cuda, dispatcher = _import_numba_cuda()
    rows, errors = [], []
    with _FakeDevice(dispatcher) as fake:
        _preflight(cuda)
        for module, specs in modules.items():
            for index, spec in enumerate(specs):
                signature = ", ".join(str(t) for t in spec["argument_types"])
                library = None
                for arch in archs:
                    arch_name = f"sm_{arch[0]}{arch[1]}"
                    where = {"module": module, "kernel": spec["name"], "arch": arch_name}
                    fake.compute_capability = arch
                    try:
                        ptx, library = _compile_ptx(cuda, spec, arch, library)
                    except Exception as error:  # noqa: BLE001 - reported per kernel
                        message = f"compile_ptx failed: {type(error).__name__}: {error}"
                        errors.append({**where, "error": message, "signature": signature})
                        log(f"ERROR {module}.{spec['name']} [{arch_name}] {message.splitlines()[0]}")
                        continue
                    path = Path(ptx_dir) / f"{_safe(module)}.{index:02d}.{_safe(spec['name'])}.{arch_name}.ptx"
                    path.write_text(ptx)
                    try:
                        resources = kernel_resources(run_ptxas(ptxas, path, arch, spec["max_registers"]))
                    except Exception as error:  # noqa: BLE001
                        errors.append({**where, "error": f"ptxas: {error}", "signature": signature})
                        log(f"ERROR {module}.{spec['name']} [{arch_name}] ptxas failed, see the report")
                        continue
                    row = {**where, "signature": signature, "block_size": spec["block_size"], **resources}
                    row["arch"] = arch_name
                    row.update(occupancy(row["registers"], row["smem"], spec["block_size"]))
                    row["failures"] = _failures(row)
                    rows.append(row)
    return rows, errors


def _failures(row):
    failures = []
    no_spills = row["module"] in NO_SPILL_MODULES and not row["kernel"].endswith(SPILL_ALLOWED_SUFFIXES)
    if no_spills and (row["spill_stores"] > 0 or row["spill_loads"] > 0):
        failures.append(f"spills ({row['spill_stores']} bytes stored, {row['spill_loads']} bytes loaded)")
    if row["occupancy"] < MIN_OCCUPANCY:
        failures.append(f"occupancy {row['occupancy']:.3f} < {MIN_OCCUPANCY} (limited by {row['limiter']})")
    return failures


# --- report -------------------------------------------------------------------------

_COLUMNS = ("module", "kernel", "arch", "block", "regs", "spills st/ld", "stack", "smem", "blocks/SM", "occupancy",
            "limiter", "check")


def _cells(row):
    return (row["module"], row["kernel"], row["arch"], str(row["block_size"]), str(row["registers"]),
            f"{row['spill_stores']}/{row['spill_loads']}", str(row["stack_frame"]), str(row["smem"]),
            str(row["blocks_per_sm"]), f"{row['occupancy']:.3f}", row["limiter"],
            "ok" if not row["failures"] else "FAIL: " + "; ".join(row["failures"]))


def text_table(rows):
    table = [_COLUMNS] + [_cells(row) for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(_COLUMNS))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in table]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def markdown(report):
    lines = [
        f"# CUDA kernel resources (ptxas -v), {report['date'][:10]}",
        "",
        f"ptxas: {report['ptxas']['version']}; numba-cuda {report['numba_cuda']}. "
        f"Occupancy: theoretical, on an {report['gpu']['name']} ({report['gpu']['multiprocessors']} SMs, "
        f"{report['gpu']['registers_per_sm'] // 1024}K registers and "
        f"{report['gpu']['shared_memory_per_sm'] // 1024} KB shared memory per SM), for both archs. "
        "Bytes for spills (stores/loads), stack frame and static shared memory (smem).",
        "",
        f"Rules: no spills in {', '.join(report['rules']['no_spill_modules'])} (but the kernels named "
        f"*{', *'.join(report['rules']['spill_allowed_suffixes'])}); occupancy >= "
        f"{report['rules']['min_occupancy']} everywhere. Result: **{'pass' if report['passed'] else 'FAIL'}**.",
        "",
        "| " + " | ".join(_COLUMNS) + " |",
        "|" + "|".join("---" if i < 3 else "---:" for i in range(len(_COLUMNS) - 2)) + "|---|---|",
    ]
    for row in report["kernels"]:
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in _cells(row)) + " |")
    if report["errors"]:
        lines += ["", "## Errors", ""]
        for error in report["errors"]:
            where = ".".join(part for part in (error["module"], error["kernel"]) if part)
            first = error["error"].strip().splitlines()[0] if error["error"].strip() else ""
            lines.append(f"- {where} {error['arch'] or ''}: {first}")
    if report["missing_modules"]:
        lines += ["", "Stage modules not written yet: " + ", ".join(report["missing_modules"]) + "."]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a rule fails or a kernel does not compile")
    parser.add_argument("--json", type=Path, default=None, help="JSON output (default results/ptx_resources.json)")
    parser.add_argument("--markdown", type=Path, default=None, help="markdown output (default results/ptx_resources.md)")
    parser.add_argument("--modules", nargs="+", default=None, help="only these modules of the package")
    parser.add_argument("--package", default=PACKAGE, help=f"package of kernel modules (default {PACKAGE})")
    parser.add_argument("--ptxas", default=None, help="ptxas to use (default: found as find_ptxas says)")
    parser.add_argument("--keep-ptx", type=Path, default=None, help="write the PTX files here instead of a temp dir")
    args = parser.parse_args(argv)
    if args.json is None and args.markdown is None:
        args.json, args.markdown = RESULTS / "ptx_resources.json", RESULTS / "ptx_resources.md"

    try:
        ptxas = find_ptxas(args.ptxas)
        cuda, _ = _import_numba_cuda()
        modules, errors, missing = discover(args.package, args.modules)
        with tempfile.TemporaryDirectory(prefix="ptx_resources_") as temporary:
            ptx_dir = args.keep_ptx or Path(temporary)
            ptx_dir.mkdir(parents=True, exist_ok=True)
            rows, compile_errors = measure(modules, ptxas, ptx_dir)
    except PtxResourcesError as error:
        print(f"ptx_resources: {error}", file=sys.stderr)
        return 2
    errors += compile_errors

    from numba_cuda import __version__ as numba_cuda_version

    report = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": platform.platform(),
        "package": args.package,
        "ptxas": {"path": ptxas, "version": ptxas_version(ptxas)},
        "numba_cuda": numba_cuda_version,
        "archs": [f"sm_{a}{b}" for a, b in ARCHS],
        "gpu": H100,
        "rules": {
            "no_spill_modules": list(NO_SPILL_MODULES), "spill_allowed_suffixes": list(SPILL_ALLOWED_SUFFIXES),
            "min_occupancy": MIN_OCCUPANCY,
        },
        "modules": {name: [spec["name"] for spec in specs] for name, specs in modules.items()},
        "missing_modules": missing,
        "kernels": rows,
        "errors": errors,
    }
    report["passed"] = bool(rows) and not errors and not any(row["failures"] for row in rows)

    print(text_table(rows) if rows else f"no kernels found in {args.package}")
    for error in errors:
        where = ".".join(part for part in (error["module"], error["kernel"]) if part)
        print(f"\nERROR {where} {error['arch'] or ''}:\n{error['error']}", file=sys.stderr)
    if missing:
        print(f"\nstage modules without kernels yet: {', '.join(missing)}")
    failed = [row for row in rows if row["failures"]]
    print(f"\n{len(rows)} kernel compilations, {len(failed)} failing a rule, {len(errors)} errors: "
          f"{'pass' if report['passed'] else 'FAIL'}")

    for path, text in ((args.json, json.dumps(report, indent=2) + "\n"), (args.markdown, markdown(report) + "\n")):
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    return 1 if args.check and not report["passed"] else 0


if __name__ == "__main__":
    sys.exit(main())
