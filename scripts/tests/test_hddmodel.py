"""Exact values of the HDD model (wowbench.hddmodel)."""

import math

import pytest

from wowbench import hddmodel as hm

MS = 1e-3
XFER_4K = 8 / 180000.0  # 8 sectors at 1500 sectors per 8.333 ms revolution


def test_geometry_constants():
    assert hm.DISK_SECTORS == 153352 * 8 * 1500
    assert hm.MEDIA_RATE == pytest.approx(180000.0)
    assert hm.ROTATIONAL_LATENCY_S == pytest.approx(4.16667 * MS, rel=1e-5)


def test_seek_zero_distance():
    assert hm.seek_time(0) == 0.0


def test_seek_one_cylinder():
    expected = (0.8 + 2.03 / 153352 + 13.17 * math.sqrt(1 / 153352)) * MS
    assert hm.seek_time(1) == pytest.approx(expected, rel=1e-12)
    assert hm.seek_time(-1) == pytest.approx(0.833644 * MS, rel=1e-5)


def test_seek_full_stroke():
    assert hm.seek_time(153352) == pytest.approx(16.0 * MS, rel=1e-12)


def test_random_write_pays_everything():
    m = hm.HddModel()
    cyl = 1000
    t = m.service_time(cyl * hm.SECTORS_PER_CYLINDER, 8, True)
    expected = 0.1 * MS + hm.seek_time(cyl) + hm.ROTATIONAL_LATENCY_S + 0.5 * MS + XFER_4K
    assert t == pytest.approx(expected, rel=1e-12)
    assert m.cylinder == cyl


def test_read_pays_no_settle():
    m = hm.HddModel()
    t = m.service_time(5000, 8, False)  # cylinder 0: no seek
    assert t == pytest.approx(0.1 * MS + hm.ROTATIONAL_LATENCY_S + XFER_4K, rel=1e-12)


def test_sequential_pays_overhead_and_transfer_only():
    m = hm.HddModel()
    m.service_time(123456, 8, True)
    assert m.service_time(123464, 8, True) == pytest.approx(0.1 * MS + XFER_4K, rel=1e-12)
    assert m.service_time(123472, 2048, False) == pytest.approx(
        0.1 * MS + 2048 / 180000.0, rel=1e-12)


def test_same_cylinder_gap_pays_rotation_not_seek():
    m = hm.HddModel()
    m.service_time(0, 8, True)
    t = m.service_time(16, 8, True)
    assert t == pytest.approx(0.1 * MS + hm.ROTATIONAL_LATENCY_S + 0.5 * MS + XFER_4K, rel=1e-12)


def test_flush_costs_overhead_and_keeps_position():
    m = hm.HddModel()
    m.service_time(0, 8, True)
    assert m.service_time(0, 0, True) == pytest.approx(0.1 * MS)
    assert m.service_time(8, 8, True) == pytest.approx(0.1 * MS + XFER_4K, rel=1e-12)


def test_device_sectors_stretched_over_full_stroke():
    dev = 8 << 21  # 8 GiB in sectors
    m = hm.HddModel(dev)
    assert m.cylinder_of(0) == 0
    assert m.cylinder_of(dev // 2) == 153352 // 2
    assert m.cylinder_of(dev - 1) == 153351
    # a full-stroke random write on the small device costs a full-stroke seek
    m.service_time(dev - 8, 8, True)
    assert m.cylinder == 153351
    t = hm.total_time([(dev - 8, 8, True), (0, 8, True)], dev)
    assert t == pytest.approx(2 * (0.1 * MS + hm.ROTATIONAL_LATENCY_S + 0.5 * MS + XFER_4K)
                              + hm.seek_time(153351) * 2, rel=1e-12)


def _sweep_mean(n, rounds, seed):
    """Mean service time of lone 4 KiB writes, n random ones sorted and
    served in order by the model itself, over several rounds."""
    import random
    rng = random.Random(seed)
    total, count = 0.0, 0
    for _ in range(rounds):
        sectors = sorted(rng.randrange(0, hm.DISK_SECTORS - 8, 8)
                         for _ in range(n))
        times = hm.service_times((s, 8, True) for s in sectors)
        total += math.fsum(times[1:])  # the first seeks from cylinder 0
        count += n - 1
    return total / count


@pytest.mark.parametrize("n", [200, 1500, 6000])
def test_sweep_write_time_matches_the_model_served(n):
    assert hm.sweep_write_time(n) == pytest.approx(
        _sweep_mean(n, 24000 // n + 2, seed=n), rel=0.004)


def test_sweep_write_time_falls_with_density_to_no_seek():
    fixed = 0.1 * MS + hm.ROTATIONAL_LATENCY_S + 0.5 * MS + XFER_4K
    times = [hm.sweep_write_time(n) for n in (1, 10, 100, 1000, 10 ** 4,
                                             10 ** 5, 10 ** 9)]
    assert times == sorted(times, reverse=True)
    # a billion blocks: nearly every gap stays on its cylinder
    assert times[-1] == pytest.approx(fixed, rel=1e-4)
    # one block per sweep: the gap is uniform over the stroke
    assert times[0] == pytest.approx(
        fixed + (0.8 + 2.03 / 2 + 13.17 * 2 / 3) * MS, rel=1e-3)
    with pytest.raises(ValueError):
        hm.sweep_write_time(0)


# ---- the 10K rpm disk (hddmodel.D10K) ----

D = hm.D10K


def test_10k_geometry():
    assert D.rpm == 10000
    assert D.sectors == 35840 * 8 * 1000
    assert D.rotational_latency_s == pytest.approx(3.0 * MS, rel=1e-12)
    assert D.media_rate == pytest.approx(1000 * 10000 / 60.0)
    assert hm.disk("10k") is D and hm.disk("10000") is D
    assert hm.disk("7200") is hm.D7200
    with pytest.raises(ValueError):
        hm.disk("5400")


def test_10k_seek_curve():
    """0.5 ms to the next cylinder, 9.5 ms full stroke, 4.7 ms averaged
    over random pairs; the 7200 rpm disk's average is 8.5 ms."""
    assert hm.seek_time(0, D) == 0.0
    assert hm.seek_time(1, D) == pytest.approx(0.5 * MS, abs=0.05 * MS)
    assert hm.seek_time(D.cylinders, D) == pytest.approx(9.5 * MS, rel=1e-12)
    assert hm.mean_random_seek(D) == pytest.approx(4.7 * MS, rel=1e-12)
    assert hm.mean_random_seek() == pytest.approx(8.5 * MS, abs=0.05 * MS)
    # the closed form matches an average over random pairs of cylinders
    import random
    rng = random.Random(1)
    n = 40000
    avg = sum(hm.seek_time(rng.randrange(D.cylinders) -
                           rng.randrange(D.cylinders), D)
              for _ in range(n)) / n
    assert avg == pytest.approx(hm.mean_random_seek(D), rel=0.01)


def test_10k_request_costs():
    m = hm.HddModel(disk=D)
    cyl = 1000
    t = m.service_time(cyl * D.sectors_per_cylinder, 8, True)
    assert t == pytest.approx(0.1 * MS + hm.seek_time(cyl, D) + 3.0 * MS +
                              0.5 * MS + 8 / (1000 * 10000 / 60.0),
                              rel=1e-12)
    nxt = cyl * D.sectors_per_cylinder + 8
    assert m.service_time(nxt, 8, False) == pytest.approx(
        0.1 * MS + 8 / (1000 * 10000 / 60.0), rel=1e-12)


def test_10k_stretches_a_small_device():
    """A 2 GiB member disk spans the whole stroke: its last sector is on
    the last cylinder."""
    m = hm.HddModel(4 << 20, D)
    assert m.cylinder_of(0) == 0
    assert m.cylinder_of((4 << 20) - 1) == D.cylinders - 1


def test_10k_random_4k_writes():
    """Random 4 KiB writes over the whole 10K disk: about 8.3 ms each
    (0.1 + 4.7 + 3.0 + 0.5 + transfer), 120 a second, against about
    13.3 ms on the 7200 rpm disk."""
    import random
    rng = random.Random(4)
    reqs = [(rng.randrange(D.sectors // 8) * 8, 8, True) for _ in range(20000)]
    per = hm.total_time(reqs, D.sectors, D) / len(reqs)
    assert per == pytest.approx(8.35 * MS, rel=0.02)
    reqs7 = [(s * hm.DISK_SECTORS // D.sectors // 8 * 8, 8, True)
             for s, _, _ in reqs]
    per7 = hm.total_time(reqs7) / len(reqs7)
    assert per7 == pytest.approx(13.3 * MS, rel=0.02)


def test_sweep_write_time_10k():
    """A sweep over n blocks costs the 10K disk its fixed part plus short
    seeks: at n = 1 the gap is uniform over the stroke (mean seek
    a + b/2 + 2c/3 = 6.0 ms)."""
    one = hm.sweep_write_time(1, disk=D)
    assert one == pytest.approx(0.1 * MS + 3.0 * MS + 0.5 * MS +
                                8 / (1000 * 10000 / 60.0) + 6.0 * MS,
                                rel=1e-3)
    big = hm.sweep_write_time(10000, disk=D)
    assert 3.6 * MS < big < 4.5 * MS
    assert big < hm.sweep_write_time(10000)
