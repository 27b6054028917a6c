"""Every CUDA kernel compiles for real GPUs without a GPU (benchmarks/ptx_resources.py).

The script compiles each kernel specialisation with ``numba.cuda.compile_ptx`` for compute
capability 8.0 and 9.0 and assembles it with ``ptxas -v``; here it runs in a subprocess
without ``NUMBA_ENABLE_CUDASIM`` (conftest.py sets it for this process, and the simulator
has no compiler). Its ptxas-report parser and occupancy calculator are checked against
hand-computed examples.
"""

import importlib
import importlib.util
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "ptx_resources.py"


def _load_script():
    spec = importlib.util.spec_from_file_location("ptx_resources", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ptx = _load_script()


# --- ptxas -v parser ------------------------------------------------------------

SM80_REPORT = """\
ptxas info    : 8 bytes gmem, 8 bytes cmem[4]
ptxas info    : Compiling entry function '_ZN3pkg9histogram5buildE5Array' for 'sm_80'
ptxas info    : Function properties for _ZN3pkg9histogram5buildE5Array
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 31 registers, used 1 barriers, 6144 bytes smem, 608 bytes cmem[0]
ptxas info    : Compile time = 60.518 ms
"""

SPILL_REPORT = """\
ptxas info    : Overriding maximum register limit 256 for 'kern' with  24 of maxrregcount option
ptxas info    : 24 bytes gmem
ptxas info    : Compiling entry function 'kern' for 'sm_90'
ptxas info    : Function properties for kern
    1520 bytes stack frame, 2636 bytes spill stores, 2396 bytes spill loads
ptxas info    : Used 24 registers, used 0 barriers, 1520 bytes cumulative stack size
ptxas info    : Compile time = 434.508 ms
"""

# A non-inlined device function: ptxas reports it after the kernel.
CALLEE_REPORT = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'kern' for 'sm_80'
ptxas info    : Function properties for kern
    64 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers, 64 bytes cumulative stack size, 1024 bytes smem, 360 bytes cmem[0]
ptxas info    : Compile time = 2.392 ms
ptxas info    : Function properties for helper
    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads
"""


def test_parse_kernel_report():
    resources = ptx.kernel_resources(SM80_REPORT)
    assert resources == {
        "symbol": "_ZN3pkg9histogram5buildE5Array", "arch": "sm_80", "registers": 31, "barriers": 1,
        "smem": 6144, "cmem": 608, "stack_frame": 0, "spill_stores": 0, "spill_loads": 0,
    }


def test_parse_spills_and_no_shared_memory():
    resources = ptx.kernel_resources(SPILL_REPORT)
    assert (resources["arch"], resources["registers"], resources["smem"], resources["cmem"]) == ("sm_90", 24, 0, 0)
    assert (resources["stack_frame"], resources["spill_stores"], resources["spill_loads"]) == (1520, 2636, 2396)


def test_parse_counts_spills_of_called_functions():
    parsed = ptx.parse_ptxas_output(CALLEE_REPORT)
    assert [entry["name"] for entry in parsed["entries"]] == ["kern"]
    assert parsed["functions"]["helper"] == {"stack_frame": 16, "spill_stores": 8, "spill_loads": 4}
    resources = ptx.kernel_resources(CALLEE_REPORT)
    assert (resources["registers"], resources["smem"], resources["stack_frame"]) == (10, 1024, 64)
    assert (resources["spill_stores"], resources["spill_loads"]) == (8, 4)


def test_parse_rejects_reports_without_one_kernel():
    with pytest.raises(ValueError, match="one entry function"):
        ptx.kernel_resources(SM80_REPORT + SPILL_REPORT)
    with pytest.raises(ValueError, match="one entry function"):
        ptx.kernel_resources("ptxas info    : 0 bytes gmem\n")


# --- occupancy on an H100 -----------------------------------------------------------

@pytest.mark.parametrize(
    ("registers", "shared_memory", "block_size", "blocks", "occupancy", "limiter"),
    [
        # 32 regs x 32 threads = 1024 per warp: 16 warps per 16K-register partition, 64 per SM.
        (32, 0, 256, 8, 1.0, "warps"),
        # 128 regs: 4096 per warp, 4 warps per partition, 16 per SM = 2 blocks of 8 warps.
        (128, 0, 256, 2, 0.25, "registers"),
        # 64 regs: 8 warps per partition, 32 per SM = 4 blocks.
        (64, 0, 256, 4, 0.5, "registers"),
        # 40 regs: 1280 per warp, 12 warps per partition, 48 per SM = 6 blocks.
        (40, 0, 256, 6, 0.75, "registers"),
        # 162 regs: 5184 rounded up to 5376 per warp, 3 warps per partition, 12 per SM = 1 block.
        (162, 0, 256, 1, 0.125, "registers"),
        # 100 KB + 1 KB reserved per block: 228 KB hold 2 blocks.
        (32, 100 * 1024, 256, 2, 0.25, "shared_memory"),
        # 48 KB + 1 KB: 4 blocks of 8 warps.
        (32, 48 * 1024, 256, 4, 0.5, "shared_memory"),
        # Small blocks: the 32 blocks per SM limit.
        (32, 0, 32, 32, 0.5, "blocks"),
        (16, 49152, 1024, 2, 1.0, "warps"),
        # Cannot launch at all.
        (255, 0, 1024, 0, 0.0, "registers"),
        (32, 228 * 1024, 256, 0, 0.0, "shared_memory"),
        (32, 0, 1025, 0, 0.0, "block_size"),
    ],
)
def test_occupancy(registers, shared_memory, block_size, blocks, occupancy, limiter):
    result = ptx.occupancy(registers, shared_memory, block_size)
    assert result["blocks_per_sm"] == blocks
    assert result["occupancy"] == pytest.approx(occupancy)
    assert result["limiter"] == limiter


def test_rules():
    row = {
        "module": "histogram", "kernel": "build", "spill_stores": 8, "spill_loads": 0, "occupancy": 0.25,
        "limiter": "registers",
    }
    failures = ptx._failures(row)
    assert len(failures) == 2 and "spills" in failures[0] and "occupancy" in failures[1]
    # Spills are allowed outside histogram, splitting and partitioning.
    assert ptx._failures({**row, "module": "predict", "occupancy": 0.5}) == []
    # And in the split scans compiled for monotonic constraints or several outputs, not in the others.
    constrained = {**row, "module": "splitting", "occupancy": 0.5}
    assert ptx._failures({**constrained, "kernel": "scan_rows_bins256_slots3_constrained"}) == []
    assert ptx._failures({**constrained, "kernel": "scan_rows_bins256_slots3_multi_output"}) == []
    assert "spills" in ptx._failures({**constrained, "kernel": "scan_rows_bins256_slots3"})[0]


def test_ptxas_lookup_explains_a_bad_path(tmp_path):
    with pytest.raises(ptx.PtxResourcesError, match="not an executable file"):
        ptx.find_ptxas(str(tmp_path / "no-ptxas"))


# --- the real kernels -------------------------------------------------------------------

def _kernel_modules():
    """``{module: [kernel names]}`` of gpuforest.kernels.cuda, read in this (simulator) process."""
    package = importlib.import_module("gpuforest.kernels.cuda")
    modules = {}
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"gpuforest.kernels.cuda.{info.name}")
        if hasattr(module, "ptx_specializations"):
            modules[info.name] = [spec[0] for spec in module.ptx_specializations()]
    return modules


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    pytest.importorskip("numba_cuda", reason="numba-cuda is not installed (pip install 'numba-cuda[cu12]')")
    try:
        ptx.find_ptxas()
    except ptx.PtxResourcesError as error:
        pytest.skip(str(error))
    path = tmp_path_factory.mktemp("ptx") / "ptx_resources.json"
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_ENABLE_CUDASIM"}
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--check", "--json", str(path)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800, check=False,
    )
    output = f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert path.exists(), output
    return {"returncode": result.returncode, "output": output, "json": json.loads(path.read_text())}


def test_every_stage_has_cuda_kernels():
    modules = _kernel_modules()
    missing = [name for name in ptx.EXPECTED_MODULES if not modules.get(name)]
    assert not missing, f"kernels/cuda modules without ptx_specializations(): {missing}"


@pytest.mark.kernel_build
def test_kernels_compile_without_spills_at_half_occupancy(report):
    assert report["returncode"] == 0, report["output"]
    data = report["json"]
    assert data["passed"] and not data["errors"], report["output"]
    rows = data["kernels"]
    expected = _kernel_modules()
    assert expected, "no module of gpuforest.kernels.cuda has ptx_specializations()"
    for module, names in expected.items():
        for name in names:
            for arch in ("sm_80", "sm_90"):
                found = [row for row in rows if (row["module"], row["kernel"], row["arch"]) == (module, name, arch)]
                assert found, f"{module}.{name} missing for {arch}:\n{report['output']}"
    # Every specialisation, not just every name.
    assert len(rows) == 2 * sum(len(names) for names in expected.values())
    for row in rows:
        where = f"{row['module']}.{row['kernel']} {row['arch']}"
        if row["module"] in ("histogram", "splitting", "partitioning") and not row["kernel"].endswith(("_constrained", "_multi_output")):
            assert row["spill_stores"] == 0 and row["spill_loads"] == 0, where
        assert row["occupancy"] >= 0.5, where
        assert row["registers"] > 0, where
