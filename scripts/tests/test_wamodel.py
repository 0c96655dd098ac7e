"""The cleaning-cost model (wowbench.wamodel): small runs with known
shapes."""

import pytest

from wowbench import wamodel


def test_no_copies_when_little_is_dirty():
    # a tenth of the cache dirty: victims are clean, nothing is copied
    assert wamodel.cleaning_cost(0.1, segs=8, bps=64, writes=4000) == 1.0


def test_cost_grows_with_the_dirty_share():
    costs = [wamodel.cleaning_cost(d, segs=16, bps=64, writes=8000)
             for d in (0.3, 0.5, 0.7)]
    assert costs[0] < costs[1] < costs[2]
    assert costs[0] >= 1.0


def test_more_segments_cost_less():
    # the reserve is a smaller share of a larger log
    small = wamodel.cleaning_cost(0.5, segs=8, bps=64, writes=6000)
    large = wamodel.cleaning_cost(0.5, segs=32, bps=64, writes=12000)
    assert large < small


def test_a_dirty_share_that_cannot_fit_is_refused():
    with pytest.raises(ValueError):
        wamodel.cleaning_cost(0.9, segs=8, bps=64, writes=100)
