"""demo: the chart of ``make demo`` (``write_chart``) on a tiny result table, and its warm-up (which compiles
what the table's fits use), not the whole demo."""

import gc
import struct
import sys

import pytest
from sklearn.model_selection import train_test_split

from gpuforest import demo
from gpuforest.demo import _datasets, _models, _warm_up, write_chart

pytest.importorskip("matplotlib")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def comparisons(n_panels):
    return {"results": [
        {"task": f"set {index} forest", "n_samples": 100, "n_features": 4, "device": "cpu",
         "rows": [{"library": "gpuforest", "fit_s": 0.1 * (index + 1)}, {"library": "scikit-learn", "fit_s": 0.2}]}
        for index in range(n_panels)
    ]}


def png_size(path):
    """``(width, height)`` from the PNG's IHDR chunk (PNG specification, section 11.2.2)."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    return struct.unpack(">II", data[16:24])


def test_chart_is_a_png_of_four_panels_a_row(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    written = write_chart(comparisons(5))
    assert written == str(tmp_path / "demo-results.png")
    width, height = png_size(tmp_path / "demo-results.png")
    # 5 panels of 4 x 3.5 inches, 4 a row: 2 rows, 16 x 7 inches.
    assert width / height == pytest.approx(16 / 7, rel=0.01)


def test_without_matplotlib_one_line_says_how_to_get_the_chart(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # its import then raises ImportError
    assert write_chart(comparisons(2), tmp_path / "chart.png") is None
    assert not (tmp_path / "chart.png").exists()
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "pip install 'gpuforest[plot]'" in out


def kernel_specialisations():
    """Every gpuforest kernel specialisation this process holds (compiled, or loaded from numba's cache)."""
    from numba.core.dispatcher import Dispatcher

    return {
        (dispatcher.py_func.__module__, dispatcher.py_func.__qualname__, signature)
        for dispatcher in gc.get_objects() if isinstance(dispatcher, Dispatcher)
        and dispatcher.py_func.__module__.startswith("gpuforest")
        for signature in dispatcher.overloads
    }


@pytest.mark.quality
def test_the_warm_up_takes_every_kernel_of_the_table_fits():
    """After the demo's warm-up, its table's fits and predictions (the synthetic set cut to 5,000 rows) add no
    kernel specialisation: none compiles, nor loads from the cache, while it is timed."""
    _warm_up()
    warmed = kernel_specialisations()
    for _, task, X, y, forest_params in _datasets():
        X_train, X_test, y_train, _ = train_test_split(X[:5000], y[:5000], random_state=0)
        for _, ours, _ in _models(task, forest_params):
            ours.fit(X_train, y_train).predict(X_test)
    assert kernel_specialisations() - warmed == set()


def test_families_compile_side_by_side_in_shares_of_the_table_order(monkeypatch):
    launched = []
    monkeypatch.setattr(
        demo, "compile_in_processes", lambda function, calls: launched.append((function, calls)) or iter(())
    )
    demo._compile_side_by_side(2)
    assert launched == [(demo._warm_up, [(("tree", "forest"),), (("boosting", "adaboost"),)])]


def test_fits_are_timed_as_the_best_of_repeated_fits_in_turn(monkeypatch):
    """``_compared`` fits ours and theirs alternately, up to ``REPEATS`` times while the pair's fits took under
    ``REPEAT_BUDGET_S``, and keeps each one's best time."""
    calls = []

    def fake_timed(times):
        return lambda estimator, *data: calls.append(estimator) or (f"{estimator} score", times[estimator].pop(0))

    quick = {"ours": [0.010, 0.004, 0.020, 0.006, 0.030], "theirs": [0.012, 0.015, 0.003, 0.011, 0.009]}
    monkeypatch.setattr(demo, "_timed", fake_timed(quick))
    assert demo._compared("ours", "theirs", None, None, None, None) == ("ours score", "theirs score", 0.004, 0.003)
    assert calls == ["ours", "theirs"] * demo.REPEATS
    calls.clear()
    budget = demo.REPEAT_BUDGET_S
    # The first pair takes 0.7 of the budget, the second the rest: two pairs.
    slower = {"ours": [0.5 * budget, 0.1 * budget, 0.0], "theirs": [0.2 * budget, 0.3 * budget, 0.0]}
    monkeypatch.setattr(demo, "_timed", fake_timed(slower))
    assert demo._compared("ours", "theirs", None, None, None, None)[2:] == (0.1 * budget, 0.2 * budget)
    assert calls == ["ours", "theirs"] * 2
    calls.clear()
    slow = {"ours": [budget, 0.0], "theirs": [0.001, 0.0]}
    monkeypatch.setattr(demo, "_timed", fake_timed(slow))
    assert demo._compared("ours", "theirs", None, None, None, None)[2:] == (budget, 0.001)
    assert calls == ["ours", "theirs"]
