"""Origin and cache analyses (wowbench.analysis)."""

import random

import pytest

from wowbench import analysis, hddmodel
from wowbench.blktrace import Event

GIB8 = 8 << 21  # 8 GiB in 512-byte sectors


def W(sector, n=8):
    return Event(0.0, "D", "WS", sector, n)


def test_merge_runs_sorts_and_merges():
    reqs = [(100, 8), (0, 8), (8, 8), (50, 4), (4, 8), (108, 8), (200, 0)]
    assert analysis.merge_runs(reqs) == [(0, 16), (50, 4), (100, 16)]


def test_oracle_caps_request_size():
    reqs = [(s, 8) for s in range(0, 5000, 8)] + [(9000, 8)]
    assert analysis.oracle_requests(reqs, 2048) == [
        (0, 2048), (2048, 2048), (4096, 904), (9000, 8)]
    assert analysis.oracle_requests(reqs) == [
        (0, 2048), (2048, 2048), (4096, 904), (9000, 8)]  # 1 MiB default


def test_stream_stats_exact():
    reqs = [(0, 8), (8, 8), (100, 32), (40, 8), (48, 8), (10, 8)]
    st = analysis.stream_stats(reqs, GIB8)
    assert st["requests"] == 6
    assert st["bytes"] == 72 * 512
    assert st["descents"] == 2                      # 100 -> 40, 48 -> 10
    assert st["sequential_fraction"] == pytest.approx(2 / 5)
    assert st["mean_seek_sectors"] == pytest.approx((0 + 84 + 92 + 0 + 46) / 5)
    assert st["mean_request_sectors"] == pytest.approx(72 / 6)
    assert st["time_s"] == pytest.approx(
        hddmodel.total_time([(s, n, True) for s, n in reqs], GIB8), rel=1e-12)
    assert st["iops"] == pytest.approx(6 / st["time_s"])


def test_descents_count_cscan_sweeps():
    sweep = [(s, 8) for s in range(0, 80000, 1000)]
    assert analysis.stream_stats(sweep * 3, GIB8)["descents"] == 2
    assert analysis.stream_stats(sweep, GIB8)["descents"] == 0


def test_analyze_origin_oracle_and_ignored_kinds():
    evs = [W(1000), W(0), Event(0, "D", "FWS", 0, 0), W(8),
           Event(0, "D", "R", 5, 8), Event(0, "D", "D", 0, 64), W(1008)]
    r = analysis.analyze_origin(evs, GIB8)
    assert r["trace"]["requests"] == 4 and r["trace"]["descents"] == 1
    assert r["oracle"]["requests"] == 2 and r["oracle"]["descents"] == 0
    assert r["oracle"]["mean_request_sectors"] == 16
    assert r["oracle"]["sequential_fraction"] == 0.0
    assert (r["flushes"], r["reads_ignored"], r["discards_ignored"]) == (1, 1, 1)
    assert r["flush_time_s"] == pytest.approx(hddmodel.OVERHEAD_S)
    assert r["time_ratio"] > 1


def test_random_4k_over_8g_vs_oracle():
    """TESTING.md: 10,240 random 4 KiB blocks over 8 GiB, 136 s vs 58 s."""
    rng = random.Random(20240612)
    blocks = rng.sample(range(GIB8 // 8), 10240)
    r = analysis.analyze_origin([W(b * 8) for b in blocks], GIB8)
    assert 1.8 <= r["time_ratio"] <= 3.0
    assert 120 <= r["trace"]["time_s"] <= 150
    assert 50 <= r["oracle"]["time_s"] <= 66
    assert r["oracle"]["descents"] == 0


# --- cache device: E = 64 sectors (32 KiB), b = 8 sectors, segments from 64

EB, BS, FIRST = 32768, 4096, 64


def cache(evs, **kw):
    return analysis.analyze_cache(evs, EB, BS, FIRST, **kw)


def test_cache_aligned_appends_are_clean():
    evs = [W(0)]                                              # superblock
    evs += [W(64 + i * 8) for i in range(8)]                  # fill segment 0
    evs += [W(128, 16), W(144, 48)]                           # fill segment 1
    evs += [W(64, 32), W(96, 32)]                             # recycle segment 0
    evs += [Event(0, "D", "D", 128, 64), W(128)]              # discard, reuse 1
    evs += [W(192), Event(0, "D", "D", 192, 128), W(192)]     # discard partial 2
    evs += [Event(0, "D", "FWS", 0, 0)]
    r = cache(evs)
    assert (r["violations"], r["misaligned"], r["non_append"], r["rewrites"]) == (0, 0, 0, 0)
    assert r["write_amplification"] == 1.0
    assert (r["writes"], r["metadata_writes"], r["discards"], r["flushes"]) == (16, 1, 2, 1)


def test_cache_rewrite_of_partial_erase_block():
    r = cache([W(64), W(72), W(64)])
    assert (r["violations"], r["rewrites"], r["non_append"], r["misaligned"]) == (1, 1, 1, 0)
    assert r["write_amplification"] == pytest.approx((3 * 4096 + EB) / (3 * 4096))


def test_cache_misaligned_write():
    r = cache([W(64, 4)])
    assert (r["violations"], r["misaligned"], r["non_append"]) == (1, 1, 0)
    assert r["write_amplification"] == 1.0


def test_cache_non_append_and_partial_discard():
    evs = [W(64), W(80), Event(0, "D", "D", 64, 32), W(64)]
    r = cache(evs)
    assert (r["violations"], r["non_append"], r["rewrites"]) == (2, 2, 1)
    assert r["rmw_erase_blocks"] == 2


def test_cache_write_across_erase_blocks_and_mid_life():
    assert cache([W(64, 64), W(128, 64)])["violations"] == 0
    r = cache([W(120, 16)])          # 8 sectors at offset 56 of block 1
    assert r["non_append"] == 1 and r["rmw_erase_blocks"] == 1
    assert cache([W(120, 16)], mid_life=True)["violations"] == 0


def test_cache_metadata_area_reported_apart():
    r = cache([W(0), W(0)])
    assert r["violations"] == 0
    assert (r["metadata_writes"], r["metadata_non_append"]) == (2, 1)
    assert r["write_amplification"] == pytest.approx((8192 + EB) / 8192)


def test_cache_rejects_unaligned_first_segment():
    with pytest.raises(ValueError):
        analysis.analyze_cache([], EB, BS, 8)
