"""The destage-order model (wowbench.ordermodel): small runs with known
shapes."""

from wowbench import ordermodel


def run(policy, workload, dirty_mib, **kw):
    return ordermodel.simulate(policy, workload,
                               int(dirty_mib * ordermodel.MIB_BLOCKS),
                               writes=30_000, warm=10_000, **kw)


def test_no_online_order_beats_the_bounds_on_the_hot_set():
    wow, cscan, best = (run(p, "hot", 6) for p in ("wow", "cscan", "min"))
    bound = ordermodel.online_bound("hot", 6 * ordermodel.MIB_BLOCKS)
    # wow holds more hot blocks dirty than cscan, but no more than all
    assert cscan["absorbed"] < wow["absorbed"] <= bound + 0.01
    # knowing the future absorbs far more
    assert best["absorbed"] > 2 * bound


def test_one_end_per_device_loses_the_log_stream():
    # SPC-1's log written beside the random streams: seen as one stream
    # per device, each log write sets its group's recency bit and wow
    # spares the log's groups
    dev = run("wow", "spc1", 4, seq="device")
    own = run("wow", "spc1", 4, seq="stream")
    assert dev["skips"] > own["skips"]
    assert own["seconds_per_write"] < dev["seconds_per_write"]


def test_cscan_writes_in_ascending_order_within_a_sweep():
    r = run("cscan", "uniform", 2)
    # a dirty set of 512 blocks over 2 M blocks: no block is absorbed and
    # each destage is one request; the blocks written behind the hand
    # wait for the next turn, so a turn destages about twice the dirty
    # set: 20,000 counted writes make about 20 turns
    assert r["absorbed"] < 0.01
    assert abs(r["requests_per_write"] - 1) < 0.02
    assert 15 <= r["wraps"] <= 25


def test_more_dirty_data_costs_the_disk_less_per_write():
    small, large = (run("cscan", "hot", d)["seconds_per_write"]
                    for d in (1.5, 6))
    assert large < small


def test_spc1h_writes():
    """spc1.py's writes, a block at a time: n of them, inside the
    footprint, the log's flagged sequential and consecutive."""
    from wowbench import ordermodel as om
    ob = 354 * om.MIB_BLOCKS
    w = list(om.spc1h_writes(20000, ob, 1))
    assert len(w) == 20000
    assert all(0 <= b < ob for b, _ in w)
    seq = [b for b, s in w if s]
    # the log: 0.281 of the I/Os (0.606 are writes), 3.6 blocks a write on
    # average (spc1.SEQ_LENGTHS) against 1 of the random streams'
    assert 0.65 < len(seq) / len(w) < 0.85
    assert sum(1 for a, b in zip(seq, seq[1:]) if b == a + 1) > \
        0.6 * len(seq)
    r = om.simulate("wow", "spc1h", 768, 20000, 5000, origin_blocks=ob)
    assert r["absorbed"] > 0.1
