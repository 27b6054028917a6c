"""Kernel tier, kernels/counting.py: ``count`` adds to the active ``DeviceCounts`` only, and to none when counting is
off; nested ``Backend.counting`` blocks each get the events of their own span."""

import pytest

from gpuforest.backend import get_backend
from gpuforest.kernels.counting import ACTIVE, DeviceCounts, count

EVENTS = ("launches", "host_to_device", "device_to_host")


def as_tuple(counts):
    return tuple(getattr(counts, event) for event in EVENTS)


def test_counts_start_at_zero():
    assert as_tuple(DeviceCounts()) == (0, 0, 0)


def test_count_adds_to_the_active_counts(monkeypatch):
    counts = DeviceCounts()
    monkeypatch.setattr(ACTIVE, "counts", counts)
    events = ["launches", "device_to_host", "launches", "host_to_device", "launches"]
    for event in events:
        count(event)
    count("host_to_device", n=3)
    expected = tuple(events.count(event) for event in EVENTS)
    assert as_tuple(counts) == (expected[0], expected[1] + 3, expected[2])


def test_nothing_is_counted_when_counting_is_off(monkeypatch):
    monkeypatch.setattr(ACTIVE, "counts", None)
    for event in EVENTS:
        count(event)  # one attribute test, no counts to add to
    assert ACTIVE.counts is None


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_nested_blocks_count_their_own_events(device):
    backend = get_backend(device)
    assert ACTIVE.counts is None
    with backend.counting() as outer:
        count("launches")
        with backend.counting() as inner:
            count("launches", n=2)
            count("device_to_host")
        count("host_to_device")
    count("launches")  # after both blocks: counted nowhere
    assert as_tuple(inner) == (2, 0, 1)
    assert as_tuple(outer) == (1, 1, 0)
    assert ACTIVE.counts is None
