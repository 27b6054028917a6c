"""demo: the chart of ``make demo`` (``write_chart``) on a tiny result table, not the whole demo."""

import struct
import sys

import pytest

from gpuforest.demo import write_chart

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
