"""The small fits' benchmark (benchmarks/bench_small_fits.py): its report's ratios and medians from each round's
best times, computed by hand."""

import pytest


@pytest.fixture
def bench(benchmark_script):
    return benchmark_script("bench_small_fits")


def test_the_report_gives_each_round_s_ratio_and_their_median(bench):
    def run(setting, threads, ours, theirs):
        return {"setting": setting, "threads": threads, "cases": {"tree": {"gpuforest": ours, "scikit-learn": theirs}}}

    report = {
        "date": "2026-11-29", "machine": "test", "versions": {"gpuforest": "0", "scikit-learn": "1"}, "rounds": 3,
        "fits": 5,
        "results": [
            run("default", 2, 0.002, 0.003), run("1", 1, 0.004, 0.002),
            run("default", 2, 0.003, 0.003), run("1", 1, 0.002, 0.002),
            run("default", 2, 0.001, 0.004), run("1", 1, 0.004, 0.001),
        ],
    }
    lines = bench.markdown(report).splitlines()
    assert "| 2 | 1.50 1.00 4.00 | 1.50 | 1.000 | 3.000 |" in lines
    assert "| 1 | 0.50 1.00 0.25 | 0.50 | 2.000 | 1.000 |" in lines
