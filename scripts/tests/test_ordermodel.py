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
