"""The live disk's trace summary (wowbench.hddtrace) on made-up traces."""

import pytest

from wowbench import hddtrace


def _lines(rows):
    return ["%.6f %s %d %d %.6f\n" % r for r in rows]


def test_a_busy_sweep():
    # four writes back to back, 1000 sectors apart, then a flush
    rows = [(0.0, "W", 0, 8, 0.005), (0.005, "W", 1000, 8, 0.005),
            (0.010, "W", 2000, 8, 0.005), (0.015, "W", 3000, 8, 0.005),
            (0.020, "F", 0, 0, 0.0001)]
    s = hddtrace.summarize(hddtrace.parse(_lines(rows) + ["junk\n"]),
                           device_sectors=100000)
    assert s["span_s"] == pytest.approx(0.0201)
    assert s["busy"] == pytest.approx(1.0)
    assert s["idle_s"] == pytest.approx(0.0)
    assert s["writes"] == 4
    assert s["write_ms"] == pytest.approx(5.0)
    assert s["backwards"] == 0.0
    assert s["blocks_per_sweep"] == pytest.approx(100.0)


def test_idle_gaps_backward_writes_and_the_span():
    rows = [(0.0, "W", 5000, 8, 0.004), (0.010, "W", 1000, 8, 0.004),
            (0.014, "W", 4000, 8, 0.004), (9.0, "W", 0, 8, 0.004)]
    reqs = hddtrace.parse(_lines(rows))
    s = hddtrace.summarize(reqs, device_sectors=30000, end=1.0)
    assert s["writes"] == 3
    assert s["span_s"] == pytest.approx(0.018)
    assert s["idle_s"] == pytest.approx(0.006)
    assert s["busy"] == pytest.approx(0.012 / 0.018)
    assert s["backwards"] == pytest.approx(0.5)
    # one forward gap, of 3000 sectors
    assert s["blocks_per_sweep"] == pytest.approx(10.0)
    with pytest.raises(ValueError):
        hddtrace.summarize(reqs, device_sectors=30000, start=20.0)
