"""Every ```python block of README.md runs as written, as a new user would paste it; so do its
``gpuforest`` commands, on a CSV file of the name they use."""

import importlib.util
import re
import shlex
from pathlib import Path

import numba
import numpy as np
import pytest
from sklearn.datasets import make_classification

from gpuforest import cli, load_model
from gpuforest.backend import cuda_available

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks(text):
    """The ```python blocks of a markdown text.

    Parameters
    ----------
    text : str
        The markdown.

    Returns
    -------
    blocks : list of (int, str)
        The line number of each block's first code line and the block's code.
    """
    return [
        (text.count("\n", 0, match.start(1)) + 1, match.group(1))
        for match in re.finditer(r"^```python\n(.*?)^```$", text, flags=re.DOTALL | re.MULTILINE)
    ]


def documented_output(code):
    """The printed tree that a block shows in its trailing comments (``# |--- ...`` lines), as text."""
    return "\n".join(line[2:] for line in code.splitlines() if line.startswith("# |"))


BLOCKS = python_blocks(README.read_text())


def test_readme_has_python_examples():
    assert len(BLOCKS) >= 8


@pytest.fixture(autouse=True)
def one_numba_thread():
    # The examples' data are tiny, and pytest-xdist already runs a worker per core: more threads per
    # worker only wait on each other (50 boosting rounds take seconds instead of a fraction of one).
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    yield
    numba.set_num_threads(threads)


@pytest.mark.parametrize("code", [code for _, code in BLOCKS], ids=[f"line{line}" for line, _ in BLOCKS])
def test_readme_example_runs(code, capsys):
    if re.search(r"device\s*=\s*[\"']cuda[\"']", code) and not cuda_available():
        pytest.skip("the example needs a CUDA GPU")
    try:
        exec(compile(code, str(README), "exec"), {"__name__": "__readme__"})
    except ModuleNotFoundError as error:
        # An optional extra (matplotlib, pyarrow, ...) that this environment lacks, never a gpuforest module.
        missing = error.name.partition(".")[0] if error.name else None
        if missing in (None, "gpuforest") or importlib.util.find_spec(missing) is not None:
            raise
        pytest.skip(f"the example needs {missing}, an optional extra that is not installed")
    assert documented_output(code) in capsys.readouterr().out


def command_lines(text):
    """The lines of the ```sh blocks of a markdown text that run ``gpuforest``."""
    blocks = re.findall(r"^```sh\n(.*?)^```$", text, flags=re.DOTALL | re.MULTILINE)
    return [line for block in blocks for line in block.splitlines() if line.startswith("gpuforest ")]


def test_readme_commands_train_save_load_and_predict(tmp_path, monkeypatch, capsys):
    """A new user's first session on the command line: train from a CSV and save the model, predict and
    evaluate with the saved model, as the README shows; the predictions are the loaded model's."""
    lines = command_lines(README.read_text())
    assert [shlex.split(line)[1] for line in lines] == ["train", "predict", "evaluate"]
    X, y = make_classification(n_samples=300, n_features=5, random_state=0)
    header = ",".join([f"x{j}" for j in range(5)] + ["label"])
    np.savetxt(tmp_path / "data.csv", np.column_stack([X, y]), delimiter=",", header=header, comments="")
    monkeypatch.chdir(tmp_path)
    for line in lines:
        assert cli.main(shlex.split(line)[1:]) == 0, line
    assert "accuracy" in capsys.readouterr().out
    model = load_model(tmp_path / "forest.gpuforest")
    predictions = np.loadtxt(tmp_path / "predictions.csv", delimiter=",", skiprows=1)
    np.testing.assert_array_equal(predictions, model.predict(X.astype(np.float32)))
    assert model.n_estimators == 50
