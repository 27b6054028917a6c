"""The histogram-task benchmark (benchmarks/bench_histogram_tasks.py): its report's speed-ups from the best times,
computed by hand, and a real measurement of tiny size that gives a time for each node size and thread setting."""

import pytest


@pytest.fixture
def bench(benchmark_script):
    return benchmark_script("bench_histogram_tasks")


def test_the_report_gives_each_node_size_s_speed_up(bench):
    report = {
        "date": "2026-11-29", "machine": "test", "version": "0", "repeats": 3, "threads": 2,
        "results": {"1000": [20e-6, 25e-6], "20000": [300e-6, 150e-6]},
    }
    lines = bench.markdown(report).splitlines()
    assert "| 1,000 | 20.0 | 25.0 | 0.80x |" in lines
    assert "| 20,000 | 300.0 | 150.0 | 2.00x |" in lines


def test_measure_times_every_node_size_on_one_thread_and_all(bench, monkeypatch):
    monkeypatch.setattr(bench, "N_SAMPLES", 3_000)
    monkeypatch.setattr(bench, "NODE_SIZES", (10, 2_500))
    n_threads, times = bench.measure(n_repeats=2)
    assert list(times) == [10, 2_500]
    assert all(0 < seconds < 1 for pair in times.values() for seconds in pair)
    assert n_threads >= 1
