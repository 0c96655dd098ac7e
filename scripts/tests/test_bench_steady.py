"""The closed loop's steady-state rule: the guest's causal stop rule
(scripts/bench-guest/benchlib.sh closed_watch, run here under busybox as in
the guest, or the host's sh without it, with a fake clock, fake counters
and a fake fio) and the host's check of a
finished run (scripts/wowbench/report.py steady_state, closed_window)."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import SCRIPTS
from wowbench import report

BENCHLIB = os.path.join(SCRIPTS, "bench-guest", "benchlib.sh")

# ---------------------------------------------------------------------------
# The guest rule

# A fake guest: time advances only when closed_watch sleeps; each call of
# sys_dirty is one sample k = 1, 2, ...: dirty data from $T/dirty (one line
# per sample, the last repeated), the origin's sectors written from
# $T/origin and the device's writes completed from $T/writes (the same).  fio is a process that runs until SIGINT or
# FIO_SECONDS of real time.
HARNESS = r'''
set -u
T=$1
RESULTS=$T WOW_NAME=run B_WATCH=$T/watch.txt
fail() { echo "FAILED: $*"; exit 1; }
. "$2"
echo 0 > "$T/clock"
echo 0 > "$T/k"
now_cs() { cat "$T/clock"; }
sleep() {
	# fio completes its first write while closed_watch waits for it
	[ -e "$T/started" ] || { : > "$T/started"; echo "1 0 0 0 7 0 0 0" > "$T/dst"; }
	case $1 in
	0.1) _c=10 ;;
	*) _c=$(($1 * 100)) ;;
	esac
	echo $(($(cat "$T/clock") + _c)) > "$T/clock"
	command sleep 0.01
}
_line() { sed -n "$1p" "$2" | grep . || tail -n 1 "$2"; }
sys_dirty() {
	_k=$(($(cat "$T/k") + 1))
	echo $_k > "$T/k"
	echo "0 0 0 0 0 0 $(_line $_k "$T/origin") 0" > "$T/ost"
	_w=$(_line $_k "$T/writes")
	echo "1 0 0 0 $_w 0 $((_w * 8)) 0" > "$T/dst"
	_line $_k "$T/dirty"
}
# the cache's sectors written: 10 a write (a cache writing 1.25 times
# what it is given)
cache_sectors() { echo $(($(_line $(cat "$T/k") "$T/writes") * 10)); }
# dm-wow's status: log_blocks 3 a sample
dmsetup() {
	[ "$1 $2" = "status bench" ] || return 1
	echo "0 16777216 wow ok $SYS 4096 100 50 7 log_blocks=$(($(cat "$T/k") * 3))"
}
echo "0 0 0 0 0 0 0 0" > "$T/ost"
echo "0 0 0 0 0 0 0 0" > "$T/dst"
"$3" -c 'import signal, sys, time
signal.signal(signal.SIGINT, lambda *a: sys.exit(0))
time.sleep(float(sys.argv[1]))' "$FIO_SECONDS" &
_fio=$!
closed_watch $_fio "$CACHE_KIB" "$WINDOW" "$TURN" "$T/ost" "$T/dst" \
	> "$T/dirty.txt"
wait $_fio
echo "fio exit $?"
'''


def watch(tmp_path, dirty, origin, writes=None, cache_kib=16384, window=3,
          turn=100, fio_seconds=20, system=None):
    """Run closed_watch on the fake guest (``writes`` default: 100 a
    sample) for ``system`` (benchlib.sh's SYS, unset by default); returns
    (meta dict, dirty.txt rows as lists of floats)."""
    writes = writes or [100 * k for k in range(1, 400)]
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "dirty").write_text("".join("%d\n" % d for d in dirty))
    (tmp_path / "origin").write_text("".join("%d\n" % o for o in origin))
    (tmp_path / "writes").write_text("".join("%d\n" % w for w in writes))
    h = tmp_path / "harness.sh"
    h.write_text(HARNESS)
    env = dict(os.environ, CACHE_KIB=str(cache_kib), WINDOW=str(window),
               TURN=str(turn), FIO_SECONDS=str(fio_seconds))
    env.pop("SYS", None)
    if system:
        env["SYS"] = system
    shell = ["sh"]
    bb = shutil.which("busybox")
    if bb:
        # the guest's shell and tools: busybox (its awk may lack math)
        bindir = tmp_path / "bin"
        bindir.mkdir()
        for tool in ("awk", "sed", "grep", "cat", "tail", "tee", "basename",
                     "kill", "sh"):
            os.symlink(bb, str(bindir / tool))
        env["PATH"] = "%s:%s" % (bindir, env.get("PATH", ""))
        shell = [bb, "sh"]
    p = subprocess.run(shell + [str(h), str(tmp_path), BENCHLIB,
                                sys.executable], capture_output=True,
                       text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    meta = report.read_meta_txt(str(tmp_path / "run" / "meta.txt"))
    rows = [[float(x) for x in line.split()] for line in
            (tmp_path / "dirty.txt").read_text().splitlines()]
    return meta, rows


def test_guest_waits_for_full_then_turnover_then_the_window(tmp_path):
    # the cache fills in three samples to 12,000 KiB, then the origin is
    # written 4,000 sectors a sample: 24,000 sectors (12,000 KiB) after
    # the plateau is the turnover
    dirty = [4000, 8000, 12000]
    origin = [0, 0, 0] + [4000 * i for i in range(1, 60)]
    meta, rows = watch(tmp_path, dirty, origin)
    assert meta["closed_stop"] == "steady"
    # full: 5 s in and no growth over the last 5 samples
    full = meta["closed_full_cs"]
    assert full >= 500
    k_full = [r[0] for r in rows].index(full / 100.0)
    assert rows[k_full][1] - rows[k_full - 5][1] <= 16384 / 100
    assert rows[k_full - 1][0] < 5 or \
        rows[k_full - 1][1] - rows[k_full - 6][1] > 16384 / 100
    # turnover: the first sample with 2 * 12,000 sectors written since the
    # first of the 5 flat samples
    k_turn = [r[0] for r in rows].index(meta["closed_turnover_cs"] / 100.0)
    assert rows[k_turn][2] - rows[k_full - 5][2] >= 2 * 12000
    assert rows[k_turn - 1][2] - rows[k_full - 5][2] < 2 * 12000
    # stop: the window after the turnover (steady at once)
    assert meta["closed_stop_cs"] - meta["closed_turnover_cs"] == 300
    # columns: t, dirty KiB, origin sectors since t0, device writes and
    # sectors since the first write (the fake device's counters stood at
    # 0, then 100 writes, 800 sectors), the cache's sectors since then
    # (from 0: the fake's first sample, at k = 0, is its last line)
    assert rows[0][1:5] == [4000, 0, 100, 800]
    assert rows[2][4] - rows[1][4] == 800
    assert rows[2][5] - rows[1][5] == 1000


def test_guest_turnover_counts_the_largest_dirty_amount(tmp_path):
    # dirty creeps up after "full" (by less than 1% of the cache in 5
    # samples):
    # the turnover needs the origin written twice the largest amount (in
    # sectors: KiB * 2)
    dirty = [10000] * 8 + [10000 + 30 * i for i in range(1, 40)]
    origin = [0] * 8 + [3000 * i for i in range(1, 60)]
    meta, rows = watch(tmp_path, dirty, origin)
    assert meta["closed_stop"] == "steady"
    k_full = [r[0] for r in rows].index(meta["closed_full_cs"] / 100.0)
    k_turn = [r[0] for r in rows].index(meta["closed_turnover_cs"] / 100.0)
    base = rows[k_full - 5][2]
    dmax = max(r[1] for r in rows[k_full - 5:k_turn + 1])
    assert dmax > 10000
    assert rows[k_turn][2] - base >= 2 * dmax
    assert rows[k_turn - 1][2] - base < 2 * max(
        r[1] for r in rows[k_full - 5:k_turn])


def test_guest_waits_for_a_steady_window(tmp_path):
    # the writes slow down from 300 to 50 a sample 4 samples after the
    # turnover: the first 8 s window after it is not steady (its halves),
    # the guest runs on until the window's halves agree well enough
    dirty = [4000, 8000, 12000]
    origin = [0, 0, 0] + [4000 * i for i in range(1, 60)]
    meta, rows = watch(tmp_path / "a", dirty, origin, window=8,
                       writes=[300 * k for k in range(1, 400)])
    assert meta["closed_stop_cs"] == meta["closed_turnover_cs"] + 800
    k_turn = [r[0] for r in rows].index(meta["closed_turnover_cs"] / 100.0)
    w = [300 * k for k in range(1, k_turn + 6)]
    w += [w[-1] + 50 * k for k in range(1, 400)]
    meta2, rows2 = watch(tmp_path / "b", dirty, origin, window=8, writes=w)
    assert meta2["closed_turnover_cs"] == meta["closed_turnover_cs"]
    assert meta2["closed_stop"] == "steady"
    assert meta2["closed_stop_cs"] > meta2["closed_turnover_cs"] + 800
    # and at its stop, the host's rule agrees on the guest's samples
    k_stop = [r[0] for r in rows2].index(meta2["closed_stop_cs"] / 100.0)
    t_stop = rows2[k_stop][0]
    logs = [(1, [(r[0], float(b[3] - a[3])) for a, r, b in
                 zip(rows2, rows2[1:], rows2[1:])][:k_stop])]
    st = report.steady_state(logs, [tuple(r) for r in rows2[:k_stop + 1]],
                             (t_stop - 8, t_stop), 16384)
    assert st["steady"], st["not_steady_because"]
    # a cache whose dirty data keeps falling never stops (runtime)
    meta3, _ = watch(tmp_path / "c", [120000 - 300 * k for k in range(400)],
                     [100000 * i for i in range(400)], fio_seconds=3)
    assert "closed_turnover_cs" in meta3 and meta3["closed_stop"] == "runtime"


def test_guest_raw_disk_stops_after_warmup_and_window(tmp_path):
    meta, rows = watch(tmp_path, [0], [800 * i for i in range(100)],
                       window=4)
    assert meta["closed_stop"] == "steady"
    assert 500 <= meta["closed_full_cs"] <= 700
    assert meta["closed_turnover_cs"] == meta["closed_full_cs"]
    assert meta["closed_stop_cs"] == meta["closed_full_cs"] + 400


def test_guest_samples_dm_wows_status_with_the_dirty_data(tmp_path):
    dirty = [4000, 8000, 12000]
    origin = [0, 0, 0] + [4000 * i for i in range(1, 60)]
    _, rows = watch(tmp_path / "wow", dirty, origin, system="wow")
    samples = report.read_status_samples(
        str(tmp_path / "wow" / "run" / "status-samples.txt"))
    # one status a sample, at the sample's time: the k-th has log_blocks 3k
    assert [t for t, _ in samples] == [r[0] for r in rows]
    assert [st["log_blocks"] for _, st in samples] == [
        3 * k for k in range(1, len(rows) + 1)]
    assert samples[0][1]["policy"] == "wow"
    # another system: no status samples
    watch(tmp_path / "wc", dirty, origin, system="writecache")
    assert not (tmp_path / "wc" / "run" / "status-samples.txt").exists()


def test_guest_never_turned_over_runs_to_fios_runtime(tmp_path):
    # the destager never writes: fio ends by itself (its --runtime)
    meta, rows = watch(tmp_path, [4000, 8000, 12000], [0], fio_seconds=2)
    assert meta["closed_stop"] == "runtime"
    assert "closed_turnover_cs" not in meta
    assert "closed_full_cs" in meta


# ---------------------------------------------------------------------------
# The host's check


def _log(rates, dt=1.0):
    """One job's IOPS log: rates[i] I/Os in second i+1."""
    return [(1, [(dt * (i + 1), float(v)) for i, v in enumerate(rates)])]


def _dirty(levels, origin_per_s, t_full=5, cache_kib=16384):
    """dirty.txt rows: dirty KiB levels[i] at second i; the origin written
    origin_per_s sectors a second from t_full on."""
    return [(float(i), float(d), float(max(0, i - t_full) * origin_per_s),
             0.0) for i, d in enumerate(levels)]


def test_closed_window_is_the_last_window_of_the_log():
    logs = _log([100] * 40)
    assert report.closed_window(logs, 100, 15) == (25.0, 40.0)
    # a cap shorter than the log ends the window
    assert report.closed_window(logs, 30, 15) == (15.0, 30.0)
    assert report.closed_window(_log([100] * 5), 100, 15) == (0.0, 5.0)


def test_interpolate():
    s = [(0.0, 0.0), (2.0, 10.0), (4.0, 10.0)]
    assert report.interpolate(s, 1.0) == pytest.approx(5.0)
    assert report.interpolate(s, -1) == 0.0
    assert report.interpolate(s, 9) == 10.0
    assert report.interpolate([], 1) is None


def test_steady_run_passes():
    # fill for 5 s, then 100 IOPS; the cache holds 12,000 KiB, written
    # back at 800 sectors/s: turnover 24,000 sectors = 30 s after full
    logs = _log([2000] * 5 + [100] * 55)
    dirty = _dirty([2400 * i for i in range(5)] + [12000] * 56, 800)
    st = report.steady_state(logs, dirty, (40.0, 60.0), 16384)
    assert st["steady"], st["not_steady_because"]
    assert st["turnover"] == pytest.approx((40 - 5) * 800 / 24000.0)
    assert st["full_s"] == 5.0
    assert st["half_change"] == pytest.approx(0.0)
    assert st["cv"] == pytest.approx(0.0)
    assert st["dirty_frac_mean"] == pytest.approx(12000 / 16384.0)
    assert st["dirty_drift"] == pytest.approx(0.0)
    assert st["holds_dirty"]


def test_window_before_turnover_is_not_steady():
    logs = _log([2000] * 5 + [100] * 55)
    dirty = _dirty([2400 * i for i in range(5)] + [12000] * 56, 800)
    st = report.steady_state(logs, dirty, (15.0, 30.0), 16384)
    assert not st["steady"]
    assert st["turnover"] == pytest.approx(10 * 800 / 24000.0)
    assert any("turned over" in r for r in st["not_steady_because"])


def test_falling_iops_is_not_steady():
    # the first pass: IOPS falls from 200 to 100 across the window
    logs = _log([2000] * 5 + [200] * 35 + [100] * 20)
    dirty = _dirty([2400 * i for i in range(5)] + [12000] * 56, 1600)
    st = report.steady_state(logs, dirty, (30.0, 60.0), 16384)
    # halves: 10 s at 200 and 5 at 100, then 15 s at 100
    assert st["half_change"] == pytest.approx((100 - 2500 / 15.0) /
                                              (4000 / 30.0))
    assert not st["steady"]
    assert any("halves" in r for r in st["not_steady_because"])


def test_bursts_widen_the_halves_allowance():
    # dm-wow's closed loop as fio logged it (16 MiB cache): writes complete
    # in bursts of ~450 every ~5 s, and a 15 s window's halves hold 1 and 2
    # of them
    samples = [(1.006, 1553), (2.007, 1385), (3.032, 69), (8.038, 391),
               (9.047, 65), (15.065, 456), (21.084, 445), (26.1, 471),
               (32.113, 441), (37.127, 451), (42.138, 434), (47.152, 464),
               (51.159, 44), (52.163, 412), (57.175, 450)]
    logs = [(1, [(t, float(v)) for t, v in samples])]
    start, end = report.closed_window(logs, 102, 15)
    assert (start, end) == (pytest.approx(42.175), 57.175)
    dirty = _dirty([10000] * 58, 800, t_full=3)
    st = report.steady_state(logs, dirty, (start, end), 16384)
    assert st["burst_ios"] == 464
    assert st["half_change"] > 0.5
    assert st["half_tolerance"] == pytest.approx(
        0.2 + 464 / ((st["iops_first_half"] + st["iops_second_half"]) /
                     2 * 7.5))
    assert st["half_tolerance"] > st["half_change"]
    assert st["steady"], st["not_steady_because"]
    # the same bursts over twice the rate: beyond the allowance
    fast = [(1, [(t, float(v) * (2 if t > 50 else 1)) for t, v in samples])]
    st = report.steady_state(fast, dirty, (start, end), 16384)
    assert not st["steady"]


def test_draining_cache_is_not_steady():
    # bcache at 64 MiB: its writeback overtook the writes, dirty data falls
    # 0.2 MiB/s (8% of the cache over the 20 s window); the IOPS halves are
    # within bounds and the cache turned over
    logs = _log([75] * 120)
    dirty = _dirty([44000 - 200 * max(0, i - 20) for i in range(121)], 1000)
    st = report.steady_state(logs, dirty, (100.0, 120.0), 65536)
    assert st["dirty_drift"] == pytest.approx(-200 * 20 / 65536.0)
    assert st["turnover"] > 1
    assert not st["steady"]
    assert st["not_steady_because"] == [
        "dirty data moved -6% of the cache in the window"]
    # a sawtooth (reclaim bursts) around a flat level is steady
    saw = [12000 + (i % 5) * 400 for i in range(121)]
    st = report.steady_state(logs, _dirty(saw, 1000), (100.0, 120.0), 16384)
    assert abs(st["dirty_drift"]) < 0.05 and st["steady"]


def test_filling_cache_is_not_steady():
    # dirty still climbing through the window
    logs = _log([100] * 60)
    dirty = _dirty([200 * i for i in range(61)], 800, t_full=0)
    st = report.steady_state(logs, dirty, (40.0, 60.0), 16384)
    assert st["dirty_drift"] == pytest.approx(200 * 20 / 16384.0)
    assert not st["steady"]
    assert any("dirty data moved" in r for r in st["not_steady_because"])


def test_cache_that_keeps_nothing_dirty_needs_no_turnover():
    # dm-cache with smq passes first writes through: nothing to turn over
    logs = _log([70] * 30)
    dirty = _dirty([0] * 31, 560, t_full=0)
    st = report.steady_state(logs, dirty, (10.0, 30.0), 16384)
    assert not st["holds_dirty"] and st["turnover"] is None
    assert st["steady"], st["not_steady_because"]
    # the raw disk: no cache at all
    st = report.steady_state(logs, dirty, (10.0, 30.0), 0)
    assert st["dirty_frac_mean"] is None and st["steady"]


def test_run_without_origin_counter_is_not_steady():
    logs = _log([100] * 40)
    dirty = [(float(i), 12000.0, None, None) for i in range(41)]
    st = report.steady_state(logs, dirty, (20.0, 40.0), 16384)
    assert not st["steady"]
    assert any("origin counter" in r for r in st["not_steady_because"])


def test_read_dirty_reads_both_formats(tmp_path):
    p = tmp_path / "dirty.txt"
    p.write_text("0.5 100\n1.50 200 16 3\nbad line\n2.5 300 32 6 48 60\n")
    assert report.read_dirty(str(p)) == [
        (0.5, 100.0, None, None, None, None),
        (1.5, 200.0, 16.0, 3.0, None, None),
        (2.5, 300.0, 32.0, 6.0, 48.0, 60.0)]


def test_cleaning_cost_over_a_span():
    # the device written 8 sectors a second, the cache 10 from t = 2 on
    dirty = [(float(t), 0.0, 0.0, t, 8.0 * t, 10.0 * max(0, t - 2))
             for t in range(11)]
    assert report.cleaning_cost(dirty, 4.0, 10.0) == pytest.approx(1.25)
    assert report.cleaning_cost(dirty, 0.0, 10.0) == pytest.approx(1.0)
    # older runs have no such columns; no writes, no figure
    assert report.cleaning_cost([d[:4] + (None, None) for d in dirty],
                                0.0, 10.0) is None
    flat = [(float(t), 0.0, 0.0, 0, 0.0, 0.0) for t in range(5)]
    assert report.cleaning_cost(flat, 0.0, 4.0) is None
    assert report.snap_cleaning_cost({"start_dev_sectors": 100,
                                      "end_dev_sectors": 900,
                                      "start_cache_sectors": 0,
                                      "end_cache_sectors": 1200}) == 1.5
    assert report.snap_cleaning_cost({"start_dev_sectors": 100}) is None


def test_iops_since_turnover_spans_bursts_and_stalls():
    # a system that fills in bursts: after the fill, 20 s of stall at 10
    # IOPS, then a 2 s burst at 1000, repeated (bursts end at 27 s and
    # 49 s); the last 10 s window (50..60) holds no burst, the span since
    # the turnover (at 35 s: 30 s of 800 sectors/s after full at 5 s,
    # = 2 x 12,000 KiB) holds one
    cycle = [10] * 20 + [1000] * 2
    logs = _log([2000] * 5 + (cycle * 3)[:55])
    dirty = _dirty([2400 * i for i in range(5)] + [12000] * 56, 800)
    st = report.steady_state(logs, dirty, (50.0, 60.0), 16384)
    assert st["turnover_s"] == 35.0
    since = sum((cycle * 3)[30:55]) / 25.0
    assert st["iops_since_turnover"] == pytest.approx(since)
    assert st["iops_since_turnover"] > 3 * report.rate(logs, (0, 1), 50, 60)
    # no turnover yet: no figure
    st = report.steady_state(logs, dirty, (15.0, 30.0), 16384)
    assert st["iops_since_turnover"] is None
    # the raw disk holds nothing: no figure
    st = report.steady_state(logs, dirty, (50.0, 60.0), 0)
    assert st["iops_since_turnover"] is None


def _sawtooth(cycles, period=16, burst=2900, cache_kib=16384):
    """dm-wow's closed loop at 16 MiB: every ``period`` seconds the cache
    fills in one burst of ``burst`` writes, then drains linearly while the
    writes stall.  dirty.txt rows (t, dirty KiB, origin sectors, writes)."""
    rows, writes = [], 0
    for i in range(cycles * period + 1):
        phase = i % period
        if phase == 0:
            writes += burst
        dirty = 11600 * (period - phase) / float(period)
        rows.append((float(i), dirty, float(i * 1300), float(writes)))
    return rows


def test_whole_cycles_spans_fills_and_counts_their_writes():
    dirty = _sawtooth(5)
    iops, n, a, b = report.whole_cycles(dirty, 2.0, 80.0, 16384)
    # fills at 16, 32, 48, 64, 80: four cycles of 2,900 writes in 16 s
    assert (n, a, b) == (4, 16.0, 80.0)
    assert iops == pytest.approx(2900 / 16.0)
    # the same whichever phase the run ended in, where a window is not
    for end in (70.0, 75.0, 79.0):
        iops2, n2, _, _ = report.whole_cycles(dirty, 2.0, end, 16384)
        assert n2 == 3 and iops2 == pytest.approx(2900 / 16.0)
    # a mix with reads: fio's I/Os over its writes
    assert report.whole_cycles(dirty, 2.0, 80.0, 16384, 1.5)[0] == \
        pytest.approx(1.5 * 2900 / 16.0)


def test_whole_cycles_needs_a_swing_and_two_fills():
    flat = [(float(i), 16000.0 + (i % 3) * 100, 0.0, 75.0 * i)
            for i in range(60)]
    assert report.whole_cycles(flat, 0.0, 59.0, 16384) == (None, 0, None,
                                                           None)
    # one fill only: no whole cycle
    assert report.whole_cycles(_sawtooth(5), 2.0, 31.0, 16384)[0] is None


def test_steady_state_reports_whole_cycles_after_the_turnover():
    dirty = _sawtooth(6)
    logs = [(1, [(float(t), 2900.0) for t in range(16, 97, 16)])]
    st = report.steady_state(logs, dirty, (76.0, 96.0), 16384)
    assert st["turnover_s"] is not None and st["turnover_s"] < 32
    assert st["cycles"] >= 3
    assert st["iops_cycles"] == pytest.approx(2900 / 16.0)
    assert report.sustained(st) == (st["iops_cycles"], "cycles")
