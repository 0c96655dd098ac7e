"""Turn a bench run directory into results.json, report.md and plots.

A run directory (scripts/bench.py) holds meta.json (the plan, the profile,
the outcome of each run) and runs/<run id>/ as the guest left it
(scripts/bench-guest/benchlib.sh): meta.txt, fio.json, status-*.txt, and
origin.txt.gz + cache.txt.gz (blkparse text) for a destage run, or
iops_iops.N.log + dirty.txt for a closed-loop run.

:func:`collect` computes every figure (:func:`destage_figures`,
:func:`closed_figures`), :func:`summarize` the cross-system tables (ratio to
dm-wow, distance to the oracle) and the issue's targets, :func:`markdown`
the report, :func:`publish` Documentation/benchmarks.md.  Everything but
the plots is standard library, so the tests run it on canned data.
"""

import glob
import gzip
import json
import math
import os
import re
import shutil
import subprocess

from . import analysis, blktrace, systems
from .hddmodel import SECTOR_SIZE

MIB = 1 << 20

# Cache-trace geometry per system: (erase block bytes or None = the meta's
# bucket_bytes, first segment in erase blocks).  dm-wow's segments start at
# erase block 1; bcache's buckets too (bucket 0 holds the superblock); the
# other peers have no segment area, so every write counts.
CACHE_GEOMETRY = {
    "wow": (MIB, 1), "cscan": (MIB, 1), "lrw": (MIB, 1),
    "bcache": (None, 1),
    "writecache": (MIB, 0), "dmcache": (MIB, 0),
}

TARGET_ORACLE_RATIO = 1.1
TARGET_WA = 1.05
TARGET_WRITECACHE_FACTOR = 2.0


# --------------------------------------------------------------------------
# Reading what the guest left


def read_meta_txt(path):
    """key=value lines; numbers become int or float."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                k, eq, v = line.rstrip("\n").partition("=")
                if not eq:
                    continue
                out[k] = _number(v)
    except OSError:
        pass
    return out


def _number(v):
    try:
        return int(v)
    except ValueError:
        pass
    try:
        return float(v)
    except ValueError:
        return v


def _open_text(path):
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def read_trace(path):
    """D events of a blkparse text file (gzipped or not)."""
    with _open_text(path) as f:
        return list(blktrace.parse_lines(f, ("D",)))


def split_at_marker(events, marker_sector):
    """(load events, destage events): the marker is a read of 8 sectors at
    ``marker_sector``, issued between the two phases; it is in neither.
    Without a marker everything is taken as destage."""
    for i, ev in enumerate(events):
        if ev.kind == "read" and ev.sector == marker_sector:
            return events[:i], events[i + 1:]
    return [], list(events)


def read_iops_logs(paths):
    """fio's per-job IOPS logs (log_avg_msec=1000: "msec, value, ddir, bs,
    offset[, prio]") as [(ddir, [(seconds, I/Os)])], one list per job and
    direction (0 read, 1 write).  fio writes a sample when it gets to it: a
    job stalled for 3 s logs one sample whose value is every I/O done since
    the last one (the values add up to the job's I/Os), so a value is a
    count over the time since the previous sample, not a rate."""
    out = []
    for p in paths:
        per = {}
        with open(p) as f:
            for line in f:
                parts = [x.strip() for x in line.split(",")]
                if len(parts) < 3:
                    continue
                try:
                    ms, val, ddir = int(parts[0]), float(parts[1]), int(parts[2])
                except ValueError:
                    continue
                per.setdefault(ddir, []).append((ms / 1000.0, val))
        for ddir, samples in sorted(per.items()):
            out.append((ddir, sorted(samples)))
    return out


def cumulative(samples, t):
    """I/Os done by time ``t`` of one job's samples, spreading each
    sample's I/Os evenly over the time since the previous sample."""
    prev_t, total = 0.0, 0.0
    for st, n in samples:
        if t >= st:
            total += n
            prev_t = st
            continue
        if st > prev_t and t > prev_t:
            total += n * (t - prev_t) / (st - prev_t)
        break
    return total


def rate(logs, ddirs, t0, t1):
    """I/Os per second of the jobs in ``logs`` (directions ``ddirs``)
    between t0 and t1 seconds."""
    if t1 <= t0:
        return 0.0
    return sum(cumulative(s, t1) - cumulative(s, t0)
               for d, s in logs if d in ddirs) / (t1 - t0)


def read_dirty(path):
    """[(seconds, dirty KiB, origin sectors written or None, device writes
    or None, device sectors written or None, cache sectors written or
    None)] from dirty.txt (benchlib.sh's closed_watch; runs before the
    steady-state rule have only the first two columns, runs before the
    cleaning cost the first four)."""
    out = []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) not in (2, 4, 6):
                    continue
                try:
                    v = [float(x) for x in parts]
                except ValueError:
                    continue
                v += [None] * (6 - len(v))
                out.append(tuple(v))
    except OSError:
        pass
    return out


def interpolate(samples, t):
    """Value at time ``t`` of [(t, value)] (sorted), linear between samples,
    the first/last value outside them; None without samples."""
    if not samples:
        return None
    if t <= samples[0][0]:
        return samples[0][1]
    for (t0, v0), (t1, v1) in zip(samples, samples[1:]):
        if t <= t1:
            if t1 <= t0:
                return v1
            return v0 + (v1 - v0) * (t - t0) / (t1 - t0)
    return samples[-1][1]


# fio's completion latency histograms (--write_hist_log with
# --log_hist_msec=1000, coarseness 0): one line a second per direction,
# "msec, ddir, bs, bin 0, ..., bin 1855", each bin the I/Os completed since
# the previous line with a latency in the bin's range.  Bin i stands for
# plat_value(i) nanoseconds (fio's plat_idx_to_val: exact below 128 ns,
# then 64 bins per power of two, so within 1%).  The last bin holds every
# latency from plat_floor(PLAT_NR - 1), about 17 s, on: a figure there is
# only a floor.  fio writes no line for the run's last partial second.
PLAT_BITS = 6
PLAT_VAL = 1 << PLAT_BITS
PLAT_NR = 29 * PLAT_VAL
PERCENTILES = (50.0, 99.0, 99.9)


def plat_value(idx):
    """Latency (ns) that fio's histogram bin ``idx`` stands for."""
    if idx < 2 * PLAT_VAL:
        return float(idx)
    error_bits = (idx >> PLAT_BITS) - 1
    base = 1 << (error_bits + PLAT_BITS)
    return base + (idx % PLAT_VAL + 0.5) * (1 << error_bits)


def plat_floor(idx):
    """The smallest latency (ns) fio puts in bin ``idx``."""
    if idx < 2 * PLAT_VAL:
        return float(idx)
    error_bits = (idx >> PLAT_BITS) - 1
    return float((1 << (error_bits + PLAT_BITS)) +
                 (idx % PLAT_VAL) * (1 << error_bits))


def read_hist_logs(paths):
    """fio's histogram logs as [(ddir, [(seconds, {bin: I/Os})])], one list
    per job and direction, the bins that are not empty."""
    out = []
    for p in paths:
        per = {}
        with _open_text(p) as f:
            for line in f:
                parts = line.split(",")
                if len(parts) < 4:
                    continue
                try:
                    ms, ddir = int(parts[0]), int(parts[1])
                    bins = {i: int(v) for i, v in enumerate(parts[3:])
                            if v.strip() != "0"}
                except ValueError:
                    continue
                per.setdefault(ddir, []).append((ms / 1000.0, bins))
        for ddir, samples in sorted(per.items()):
            out.append((ddir, sorted(samples, key=lambda x: x[0])))
    return out


def latency(hists, t0, t1, ddirs=(1,)):
    """Completion latency of the I/Os (directions ``ddirs``) that completed
    in (t0, t1] by fio's histogram logs ``hists``: {ios, p50_ms, p99_ms,
    p99_9_ms, max_ms, floors} (fio's rule: a percentile is the first bin
    whose cumulative count reaches it; ``floors`` names the figures in
    fio's last bin, given as its floor), or None without I/Os."""
    total = {}
    for ddir, samples in hists:
        if ddir not in ddirs:
            continue
        for t, bins in samples:
            if t0 < t <= t1:
                for i, n in bins.items():
                    total[i] = total.get(i, 0) + n
    n = sum(total.values())
    if not n:
        return None
    out = {"ios": n, "floors": []}

    def put(key, idx):
        if idx >= PLAT_NR - 1:
            out[key] = plat_floor(PLAT_NR - 1) / 1e6
            out["floors"].append(key)
        else:
            out[key] = plat_value(idx) / 1e6

    order = sorted(total)
    for pct in PERCENTILES:
        need, seen = pct / 100.0 * n, 0
        for i in order:
            seen += total[i]
            if seen >= need:
                put(_pct_key(pct), i)
                break
    put("max_ms", order[-1])
    return out


def _pct_key(pct):
    return "p%s_ms" % ("%g" % pct).replace(".", "_")


def latency_series(hists, ddirs=(1,)):
    """Write latency second by second from fio's histogram logs: [[t,
    p50_ms, p99_ms, max_ms, I/Os]] for each second with I/Os (the plot of
    latency over time)."""
    times = sorted({round(t, 3) for d, smp in hists if d in ddirs
                    for t, _ in smp})
    out, prev = [], 0.0
    for t in times:
        lat = latency(hists, prev, t, ddirs)
        prev = t
        if lat:
            out.append([round(t, 1), round(lat["p50_ms"], 3),
                        round(lat["p99_ms"], 3), round(lat["max_ms"], 3),
                        lat["ios"]])
    return out


def cleaning_cost(dirty, t0, t1):
    """Cache-device bytes written per byte the user wrote between t0 and
    t1, from closed_watch's samples (device and cache sectors written):
    the cost of caching, cleaning and metadata; None without the columns
    or writes."""
    dev = [(d[0], d[4]) for d in dirty if d[4] is not None]
    cache = [(d[0], d[5]) for d in dirty if d[5] is not None]
    if len(dev) < 2 or len(cache) < 2:
        return None
    user = interpolate(dev, t1) - interpolate(dev, t0)
    if user <= 0:
        return None
    return (interpolate(cache, t1) - interpolate(cache, t0)) / user


def snap_cleaning_cost(meta, a="start", b="end"):
    """The same from a run's two io_snap notes (benchlib.sh)."""
    try:
        user = meta[b + "_dev_sectors"] - meta[a + "_dev_sectors"]
        cache = meta[b + "_cache_sectors"] - meta[a + "_cache_sectors"]
    except (KeyError, TypeError):
        return None
    return cache / float(user) if user > 0 else None


WOW_PREFIX = ("state", "policy", "block_size", "cache_blocks", "free_blocks",
              "dirty_blocks")


def parse_wow_status(text):
    """{field: value} of a dm-wow INFO status line, with or without
    dmsetup's "<start> <length> wow " in front: the fixed prefix by name
    (Documentation/dm-wow.rst), then the key=value pairs; numbers as int.
    None for a line that is not dm-wow's."""
    words = text.split()
    if "wow" in words[:3]:
        words = words[words.index("wow") + 1:]
    if len(words) < len(WOW_PREFIX) or not words[2].isdigit():
        return None
    out = dict(zip(WOW_PREFIX, words))
    for w in words[len(WOW_PREFIX):]:
        k, eq, v = w.partition("=")
        if eq:
            out[k] = v
    return {k: _number(v) for k, v in out.items()}


def read_status_file(path):
    """The dm-wow status in a status-*.txt file, or None."""
    try:
        with open(path) as f:
            for line in f:
                st = parse_wow_status(line)
                if st:
                    return st
    except OSError:
        pass
    return None


def read_status_samples(path):
    """[(seconds, status dict)] from status-samples.txt (closed_watch: "t
    <dmsetup status>" a second, dm-wow only)."""
    out = []
    try:
        with open(path) as f:
            for line in f:
                t, _, rest = line.partition(" ")
                try:
                    t = float(t)
                except ValueError:
                    continue
                st = parse_wow_status(rest)
                if st:
                    out.append((t, st))
    except OSError:
        pass
    return out


def log_figures(samples, dirty, t0, t1):
    """dm-wow's own count of its cache writes between t0 and t1, from its
    status samples and the device's completed writes (dirty.txt; every
    bench write is one 4 KiB block): {log_wa: log blocks written per block
    users wrote, copied_per_write: blocks cleaning copied forward per block
    users wrote, write_hit_frac: writes that found their block cached}, or
    None without samples or writes."""
    if len(samples) < 2:
        return None
    writes = [(d[0], d[3]) for d in dirty if d[3] is not None]
    if len(writes) < 2:
        return None
    bs = samples[0][1].get("block_size") or systems.BLOCK
    user = (interpolate(writes, t1) - interpolate(writes, t0)) * \
        systems.BLOCK / float(bs)
    if user <= 0:
        return None

    def delta(key):
        pts = [(t, st[key]) for t, st in samples
               if isinstance(st.get(key), int)]
        if len(pts) < 2:
            return None
        return interpolate(pts, t1) - interpolate(pts, t0)

    log, copied = delta("log_blocks"), delta("copied_blocks")
    hits, misses = delta("write_hits"), delta("write_misses")
    return {"log_wa": None if log is None else log / user,
            "copied_per_write": None if copied is None else copied / user,
            "write_hit_frac": ratio(hits, (hits or 0) + (misses or 0))
            if hits is not None else None}


# The steady-state rule of the closed loop, the same for every system (the
# guest stops fio by its causal twin, benchlib.sh's closed_watch).  A run is
# steady when, over the measured window,
#   * its IOPS is stable: the two halves of the window differ by at most
#     STEADY_HALF_TOL of the window's mean, plus the largest burst fio
#     logged in the window over a half's I/Os (a system that completes
#     writes in bursts seconds apart cannot be told apart any finer);
#   * its cache occupancy is stable: the dirty data moved by at most
#     STEADY_DIRTY_DRIFT of the cache size during the window (least-squares
#     slope of the samples times the window's length);
#   * a cache that holds dirty data (mean over the window >= HOLDS_DIRTY of
#     the cache) has turned over before the window: since it was first
#     full (dirty >= 90% of the window's mean), the origin was written at
#     least STEADY_TURNOVER times the window's mean dirty data, so its
#     destager has been through its dirty data once.  The guest waits for
#     100%; the 10% are for the one-second sampling and fio's stop.
STEADY_HALF_TOL = 0.2
STEADY_DIRTY_DRIFT = 0.05
STEADY_TURNOVER = 0.9
HOLDS_DIRTY = 0.02


def closed_window(logs, runtime_s, window_s):
    """(start, end) seconds of the measured window: the last ``window_s``
    seconds of fio's log (its last sample, at most ``runtime_s``)."""
    end = max([s[-1][0] for _, s in logs if s] + [0.0])
    end = min(end, float(runtime_s)) if end and runtime_s else end
    return max(end - window_s, 0.0), end


def _mean(xs):
    return sum(xs) / len(xs) if xs else None


def _slope(points):
    """Least-squares slope of [(x, y)]; None with fewer than 3 points."""
    if len(points) < 3:
        return None
    mx = _mean([x for x, _ in points])
    my = _mean([y for _, y in points])
    den = sum((x - mx) ** 2 for x, _ in points)
    if not den:
        return None
    return sum((x - mx) * (y - my) for x, y in points) / den


def turnover_time(dirty, t_full, level_kib):
    """Seconds at which the origin, since ``t_full``, had been written as
    much as ``level_kib`` of dirty data (one turnover), from the samples
    ``dirty`` (t, dirty KiB, origin sectors, ...); None if it never was."""
    org = [(d[0], d[2]) for d in dirty if d[2] is not None]
    if not org or not level_kib:
        return None
    base = interpolate(org, t_full)
    for t, o in org:
        if t >= t_full and o - base >= 2.0 * level_kib:
            return t
    return None


def since_turnover(logs, dirty, window, cache_kib, level_kib, t_full):
    """IOPS from the first turnover to the end of the run: a long window,
    the same rule for every system, which spans whole cycles of a system
    that fills and drains in bursts (where the last window alone may land
    in a burst or in a stall).  (iops, start) or (None, None)."""
    if not cache_kib or level_kib is None or t_full is None:
        return None, None
    t = turnover_time(dirty, t_full, level_kib)
    end = window[1]
    if t is None or t >= end:
        return None, None
    return rate(logs, (0, 1), t, end), t


# A cache that fills and drains in cycles (dm-wow: its log frees segments
# only once the sweep has passed their blocks) completes writes in bursts
# one cycle apart, so any fixed window holds one burst more or less
# depending on where it falls.  Its sustained rate is the rate over whole
# cycles: from one fill to a later one.  A run cycles when its dirty data
# swings by at least CYCLE_SWING of the cache after the turnover; a fill
# is a rise through 3/4 of the swing after a fall below 1/4 of it.
CYCLE_SWING = 0.25


def whole_cycles(dirty, t_from, t_end, cache_kib, rw_scale=1.0):
    """IOPS over whole fill/drain cycles of the samples ``dirty`` (as
    read_dirty gives them) between ``t_from`` and ``t_end``: the device's
    writes completed from the first fill to the last, over that time, times
    ``rw_scale`` (fio's I/Os over its writes, for a mix with reads).  The
    writes come from the same samples as the fills (fio's log has its own
    clock, and a burst lands right at a fill).  (iops, cycles, start,
    end), or (None, 0, None, None) when the run does not cycle or shows
    fewer than two fills."""
    none = (None, 0, None, None)
    pts = [d for d in dirty if t_from <= d[0] <= t_end and d[3] is not None]
    if not cache_kib or len(pts) < 3:
        return none
    low = min(d[1] for d in pts)
    swing = max(d[1] for d in pts) - low
    if swing < CYCLE_SWING * cache_kib:
        return none
    armed, fills = False, []
    for d in pts:
        if d[1] <= low + swing / 4.0:
            armed = True
        elif armed and d[1] >= low + swing * 3 / 4.0:
            fills.append(d)
            armed = False
    if len(fills) < 2:
        return none
    a, b = fills[0], fills[-1]
    return ((b[3] - a[3]) / (b[0] - a[0]) * rw_scale, len(fills) - 1,
            a[0], b[0])


def steady_state(logs, dirty, window, cache_kib, rw_scale=1.0):
    """Stability figures of a closed run's ``window`` (start, end) and the
    verdict of the steady-state rule above.  ``logs`` as read_iops_logs
    gives them, ``dirty`` as read_dirty, ``cache_kib`` the cache size (0
    for the raw disk)."""
    start, end = window
    mid = (start + end) / 2.0
    out = {"iops_first_half": rate(logs, (0, 1), start, mid),
           "iops_second_half": rate(logs, (0, 1), mid, end)}
    mean = rate(logs, (0, 1), start, end)
    out["half_change"] = ((out["iops_second_half"] - out["iops_first_half"])
                          / mean if mean else None)
    # fio logs a sample when an I/O completes: a system that completes
    # writes in bursts logs one sample per burst, and a burst near the
    # middle of the window can land in either half
    burst = sum(max([v for t, v in smp if start < t <= end] + [0])
                for d, smp in logs if d in (0, 1))
    out["burst_ios"] = burst
    out["half_tolerance"] = (STEADY_HALF_TOL + burst /
                             (mean * (end - start) / 2.0)
                             if mean and end > start else None)
    secs = []
    t = start
    while t + 1.0 <= end + 1e-9:
        secs.append(rate(logs, (0, 1), t, t + 1.0))
        t += 1.0
    m = _mean(secs)
    out["cv"] = (math.sqrt(sum((x - m) ** 2 for x in secs) / len(secs)) / m
                 if m else None)
    inw = [d for d in dirty if start <= d[0] <= end]
    level = _mean([d[1] for d in inw])
    frac = (lambda kib: kib / float(cache_kib)) if cache_kib else \
        (lambda kib: None)
    out["dirty_frac_mean"] = frac(level) if level is not None else None
    out["dirty_frac_min"] = frac(min(d[1] for d in inw)) if inw else None
    out["dirty_frac_max"] = frac(max(d[1] for d in inw)) if inw else None
    # how far the dirty data moved during the window: the least-squares
    # slope of its samples times the window's length
    slope = _slope([(d[0], d[1]) for d in inw])
    out["dirty_drift"] = (frac(slope * (end - start))
                          if slope is not None else None)
    at = [d[1] for d in dirty if d[0] <= start]
    out["dirty_frac_at_window"] = frac(at[-1]) if at and cache_kib else None
    holds = bool(cache_kib and level is not None and
                 level >= HOLDS_DIRTY * cache_kib)
    out["holds_dirty"] = holds
    out["full_s"] = out["turnover"] = None
    out["iops_since_turnover"] = out["turnover_s"] = None
    out["iops_cycles"], out["cycles"] = None, 0
    out["cycles_span"] = None
    have_origin = bool(dirty) and all(d[2] is not None for d in dirty)
    if holds and have_origin:
        full = [d for d in dirty if d[1] >= 0.9 * level]
        if full and full[0][0] <= start:
            t_full = full[0][0]
            org = [(d[0], d[2]) for d in dirty]
            written = interpolate(org, start) - interpolate(org, t_full)
            out["full_s"] = t_full
            out["turnover"] = written / (2.0 * level)   # sectors / sectors
            out["iops_since_turnover"], out["turnover_s"] = since_turnover(
                logs, dirty, window, cache_kib, level, t_full)
            if out["turnover_s"] is not None:
                iops, n, a, b = whole_cycles(dirty, out["turnover_s"], end,
                                             cache_kib, rw_scale)
                out["iops_cycles"], out["cycles"] = iops, n
                out["cycles_span"] = None if iops is None else [
                    round(a, 2), round(b, 2)]
        elif full:
            out["full_s"] = full[0][0]
            out["turnover"] = 0.0
    reasons = []
    if mean <= 0:
        reasons.append("no I/O in the window")
    elif abs(out["half_change"]) > out["half_tolerance"]:
        reasons.append("IOPS changed %+.0f%% between the window's halves "
                       "(more than %.0f%%)" % (out["half_change"] * 100,
                                               out["half_tolerance"] * 100))
    if out["dirty_drift"] is not None and \
            abs(out["dirty_drift"]) > STEADY_DIRTY_DRIFT:
        reasons.append("dirty data moved %+.0f%% of the cache in the window"
                       % (out["dirty_drift"] * 100))
    if holds:
        if not have_origin:
            reasons.append("no origin counter (run predates the rule)")
        elif out["turnover"] < STEADY_TURNOVER:
            reasons.append("cache not turned over before the window "
                           "(%.2fx its dirty data written back)" %
                           out["turnover"])
    out["steady"] = not reasons
    out["not_steady_because"] = reasons
    return out


def fio_summary(path):
    """Total read/write IOPS and I/Os of a fio JSON output."""
    try:
        with open(path) as f:
            text = f.read()
        # fio may print notes before the JSON
        data = json.loads(text[text.index("{"):])
    except (OSError, ValueError):
        return None
    out = {"read_iops": 0.0, "write_iops": 0.0, "read_ios": 0,
           "write_ios": 0, "runtime_ms": 0, "write_clat": None}
    for j in data.get("jobs", []):
        for d in ("read", "write"):
            out[d + "_iops"] += j.get(d, {}).get("iops", 0.0)
            out[d + "_ios"] += j.get(d, {}).get("total_ios", 0)
        out["runtime_ms"] = max(out["runtime_ms"], j.get("job_runtime", 0))
        # the whole run's write completion latency (one job: the bench's
        # jobs report as a group)
        clat = j.get("write", {}).get("clat_ns") or {}
        if clat.get("N") and out["write_clat"] is None:
            c = {"ios": clat["N"], "max_ms": clat.get("max", 0) / 1e6}
            for k, v in (clat.get("percentile") or {}).items():
                try:
                    pct = float(k)
                except ValueError:
                    continue
                if pct in PERCENTILES:
                    c[_pct_key(pct)] = v / 1e6
            out["write_clat"] = c
    return out


# --------------------------------------------------------------------------
# Per-run figures


def trace_text(run_dir, which, meta):
    """Path of the gzipped blkparse text of ``which`` ("origin" or "cache")
    of a destage run: <which>.txt.gz, made once from the binary trace the
    guest left in bt/ (blkparse on the host)."""
    path = os.path.join(run_dir, which + ".txt.gz")
    if os.path.exists(path):
        return path
    dev = meta.get("trace_" + which)
    bt = os.path.join(run_dir, "bt")
    if not dev or not glob.glob(os.path.join(bt, "%s.blktrace.*" % dev)):
        return path     # missing: the caller's open fails
    exe = shutil.which("blkparse") or "/usr/bin/blkparse"
    tmp = path + ".tmp"
    with gzip.open(tmp, "wb", compresslevel=1) as out:
        p = subprocess.Popen([exe, "-D", bt, "-i", dev],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        for chunk in iter(lambda: p.stdout.read(1 << 20), b""):
            out.write(chunk)
        if p.wait() != 0:
            raise OSError("blkparse of %s/%s failed (exit %d)" % (
                bt, dev, p.returncode))
    os.replace(tmp, path)
    return path


def destage_figures(run_dir, system):
    """Figures of one destage run (module doc of analysis.py for the
    fields of ``origin`` and ``cache``)."""
    meta = read_meta_txt(os.path.join(run_dir, "meta.txt"))
    sectors = int(meta.get("origin_sectors", 0))
    events = read_trace(trace_text(run_dir, "origin", meta))
    load, destage = split_at_marker(events, meta.get("marker_sector", -1))
    # the marker read is out of both; analyze_origin ignores reads anyway
    whole = load + destage
    out = {
        "meta": meta,
        "origin": analysis.analyze_origin(whole, sectors),
        "load_phase_writes": sum(1 for e in load if e.kind == "write"),
        "destage_phase_writes": sum(1 for e in destage if e.kind == "write"),
        "fio": fio_summary(os.path.join(run_dir, "fio.json")),
        "dropped_events": meta.get("dropped_events", 0),
    }
    geo = CACHE_GEOMETRY.get(system)
    cpath = trace_text(run_dir, "cache", meta) if geo else ""
    if geo and os.path.exists(cpath):
        eb = geo[0] or int(meta.get("bucket_bytes", MIB))
        cev = read_trace(cpath)
        out["cache"] = analysis.analyze_cache(
            cev, eb, systems.BLOCK, geo[1] * eb // SECTOR_SIZE)
    out["log_wa"] = run_log_wa(
        read_status_file(os.path.join(run_dir, "status-clean.txt")),
        out["fio"])
    out["cache_per_user"] = snap_cleaning_cost(meta) \
        if has_cache_dev(system) else None
    return out


def has_cache_dev(system):
    """True for a system that writes a cache device (the cache disk alone
    is one: its bytes per user byte are 1)."""
    return system is None or system not in ("raw", "linear")


def cost_figures(run_dir, system):
    """Figures of a CPU-cost or flush-cost run: fio's IOPS and write
    latency over the run, the guest's CPU time per write (CPU cost), the
    cache bytes written per user byte, dm-wow's log WA."""
    meta = read_meta_txt(os.path.join(run_dir, "meta.txt"))
    fio = fio_summary(os.path.join(run_dir, "fio.json"))
    if not fio or not fio["write_ios"]:
        raise ValueError("no fio writes")
    out = {"meta": meta, "fio": fio, "iops": fio["write_iops"],
           "write_ios": fio["write_ios"], "fio_clat": fio["write_clat"]}
    busy = meta.get("cpu_busy_ticks")
    idle = meta.get("cpu_idle_ticks")
    # USER_HZ is 100: a tick is 10 ms of one CPU
    out["cpu_us_per_write"] = (busy * 1e4 / fio["write_ios"]
                               if isinstance(busy, int) else None)
    out["cpu_busy_frac"] = (ratio(busy, busy + idle)
                            if isinstance(busy, int) and
                            isinstance(idle, int) else None)
    cs = meta.get("context_switches")
    out["switches_per_write"] = (cs / fio["write_ios"]
                                 if isinstance(cs, int) else None)
    out["cache_per_user"] = snap_cleaning_cost(meta) \
        if has_cache_dev(system) else None
    out["log_wa_run"] = run_log_wa(
        read_status_file(os.path.join(run_dir, "status-end.txt")), fio)
    prof = perf_profile(run_dir)
    if prof:
        out["perf"] = prof
    return out


# Where a CPU-cost run's CPU goes (bench.py --perf): perf's self time by
# symbol, sorted into kinds of work.  The first pattern that matches a
# sample's "module symbol" names its kind; "idle" is not busy time.
PERF_KINDS = [
    ("idle", r"(^|\s)(default_idle|native_safe_halt|pv_native_safe_halt|"
             r"arch_cpu_idle|default_idle_call|do_idle|cpu_idle_poll|"
             r"poll_idle|acpi_idle\w*|intel_idle\w*|cpuidle_\w+|"
             r"mwait_idle\w*)$"),
    ("data copy", r"\s(\w*memcpy\w*|\w*memmove\w*|copy_page\w*|"
                  r"\w*copy_user\w*|_copy_(from|to)_iter|rep_movs\w*|"
                  r"memcpy_orig|copy_mc\w*)$"),
    ("checksums", r"\s(\w*crc32\w*|\w*crc_\w+|crc32c\w*)$"),
    ("locks", r"\s(_raw_\w*(lock|unlock)\w*|\w*queued_\w*lock\w*|"
              r"mutex_\w+|\w*rwsem\w*|\w*spin_\w*lock\w*)$"),
    ("allocation", r"\s(kmem_cache_\w+|__?kmalloc\w*|kfree\w*|"
                   r"mempool_\w+|\w*alloc_pages\w*|\w*free_pages\w*|"
                   r"\w*slab\w*|__slab_\w+|___slab_\w+|kvfree\w*|"
                   r"\w*page_frag\w*)$"),
    ("dm-wow", r"^\[dm_wow\]"),
    ("dm-writecache", r"^\[dm_writecache\]"),
    ("dm core", r"^\[dm_mod\]"),
    ("RAM disk", r"^\[brd\]|\sbrd_\w+$"),
    ("block layer", r"\s(blk_\w+|__blk_\w+|bio_\w+|__bio_\w+|"
                    r"submit_bio\w*|bvec_\w+)$"),
    ("workqueues, scheduler", r"\s(\w*schedule\w*|\w*sched_\w+|"
                              r"\w*wake_up\w*|try_to_wake_up|"
                              r"\w*work_\w+|worker_thread|"
                              r"\w*enqueue_\w+|\w*dequeue_\w+|"
                              r"finish_task_switch\w*|__switch_to\w*)$"),
    ("fio (user space)", r"^(fio|libc[.-]\S*|libaio\S*|\[unknown\])\s"),
    ("other kernel", r"."),
]


def perf_kind(dso, sym):
    """The kind of work (PERF_KINDS) of a sample in ``sym`` of ``dso``."""
    key = "%s %s" % (dso, sym)
    for kind, pat in PERF_KINDS:
        if re.search(pat, key):
            return kind
    return "other kernel"


def module_symbols(path):
    """{symbol: "[module]"} from kallsyms-modules.txt.gz (benchlib.sh
    perf_stop), {} without one."""
    if not os.path.exists(path):
        return {}
    out = {}
    with gzip.open(path, "rt", errors="replace") as f:
        for line in f:
            w = line.split()
            if len(w) == 2:
                out.setdefault(w[0], w[1])
    return out


def fold_stacks(path):
    """{"comm;outermost;...;innermost": samples} from perf-script.txt.gz
    (perf script -F comm,ip,sym: a line with the task's name, then one
    line per frame, innermost first, a blank line after each sample): the
    folded stacks flame graph tools take."""
    out = {}
    comm, frames = None, []

    def done():
        if comm is not None:
            key = ";".join([comm] + frames[::-1])
            out[key] = out.get(key, 0) + 1

    with gzip.open(path, "rt", errors="replace") as f:
        for line in f:
            w = line.split()
            if not w:
                done()
                comm, frames = None, []
            elif comm is None:
                comm = w[0]
            elif len(w) >= 2 and re.fullmatch(r"[0-9a-f]+", w[0]):
                frames.append(re.sub(r"\+0x[0-9a-f]+$", "", w[1]))
    done()
    return out


def perf_profile(run_dir):
    """From a run's perf-self.txt (perf report --no-children --sort dso,sym
    --stdio), or None without one: {"top": [(pct, module, sym, kind)],
    "kinds": {kind: pct of busy time}, "busy_pct": pct of samples not
    idle, "under": [(pct of busy, sym)]: dm-wow's functions by the time
    under them (perf-children.txt), "samples"}.  Shares of busy time leave
    the idle task's samples out.  The run's folded stacks go to
    perf-folded.txt beside them."""
    path = os.path.join(run_dir, "perf-self.txt")
    if not os.path.exists(path):
        return None
    mods = module_symbols(os.path.join(run_dir, "kallsyms-modules.txt.gz"))
    top = []
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"\s*([0-9.]+)%\s+(\S+)\s+\[[k.]\]\s+(\S+)",
                         line)
            if m:
                sym = m.group(3)
                top.append((float(m.group(1)), mods.get(sym, m.group(2)),
                            sym))
    if not top:
        return None
    under = []
    cpath = os.path.join(run_dir, "perf-children.txt")
    if os.path.exists(cpath):
        with open(cpath, errors="replace") as f:
            for line in f:
                m = re.match(r"\s*([0-9.]+)%\s+[0-9.]+%\s+\[[k.]\]\s+"
                             r"(\S+)", line)
                if m and mods.get(m.group(2)) == "[dm_wow]":
                    under.append((float(m.group(1)), m.group(2)))
    spath = os.path.join(run_dir, "perf-script.txt.gz")
    if os.path.exists(spath):
        folded = fold_stacks(spath)
        with open(os.path.join(run_dir, "perf-folded.txt"), "w") as f:
            for k in sorted(folded):
                f.write("%s %d\n" % (k, folded[k]))
    kinds, busy = {}, 0.0
    rows = []
    for pct, dso, sym in top:
        kind = perf_kind(dso, sym)
        rows.append((pct, dso, sym, kind))
        if kind == "idle":
            continue
        busy += pct
        kinds[kind] = kinds.get(kind, 0.0) + pct
    if busy <= 0:
        return None
    return {"top": [r for r in rows if r[3] != "idle"][:25],
            "kinds": {k: v * 100 / busy for k, v in kinds.items()},
            "busy_pct": busy,
            "under": [(pct * 100 / busy, sym) for pct, sym in under][:15]}


def run_log_wa(status, fio):
    """dm-wow's log write amplification over a whole run: the blocks its
    log wrote (``status``'s log_blocks, counted from the device's creation)
    over the blocks fio wrote (4 KiB each); None for another system or an
    older module."""
    if not status or not isinstance(status.get("log_blocks"), int) or \
            not fio or not fio["write_ios"]:
        return None
    bs = status.get("block_size") or systems.BLOCK
    return status["log_blocks"] / (fio["write_ios"] * systems.BLOCK /
                                   float(bs))


def closed_figures(run_dir, runtime_s, window_s, cache_mb, system=None):
    """Figures of one closed run: IOPS over the last ``window_s`` seconds
    and the steady-state figures (:func:`steady_state`)."""
    meta = read_meta_txt(os.path.join(run_dir, "meta.txt"))
    logs = read_iops_logs(sorted(glob.glob(os.path.join(run_dir,
                                                       "iops_iops.*.log"))))
    start, end = closed_window(logs, runtime_s, window_s)
    dirty = read_dirty(os.path.join(run_dir, "dirty.txt"))
    series = [[t, round(rate(logs, (0, 1), t - 1, t), 1)]
              for t in range(1, int(end) + 1)]
    cache_kib = cache_mb * 1024 if system is None or \
        systems.system(system).cache else 0
    out = {
        "meta": meta,
        "write_iops": rate(logs, (1,), start, end),
        "iops": rate(logs, (0, 1), start, end),
        "window_s": window_s,
        "window": [round(start, 3), round(end, 3)],
        "run_s": round(end, 1),
        "stop": meta.get("closed_stop", ""),
        "series": series,
        "dirty": [[round(d[0], 1), d[1]] for d in dirty],
        "origin_sectors": [[round(d[0], 1), d[2]] for d in dirty
                           if d[2] is not None],
        "fio": fio_summary(os.path.join(run_dir, "fio.json")),
    }
    fio = out["fio"]
    scale = ((fio["read_ios"] + fio["write_ios"]) / float(fio["write_ios"])
             if fio and fio["write_ios"] else 1.0)
    out.update(steady_state(logs, dirty, (start, end), cache_kib, scale))
    # write latency and dm-wow's log writes over the span the sustained
    # IOPS is measured on (and the latency over the last window)
    hists = read_hist_logs(sorted(glob.glob(os.path.join(
        run_dir, "lat_clat_hist.*.log"))))
    a, b, how = sustained_span(out)
    out["lat"] = latency(hists, a, b)
    if out["lat"]:
        out["lat"].update(span=[round(a, 2), round(b, 2)], span_by=how)
    out["lat_window"] = latency(hists, start, end)
    # every I/O's (reads too: the SPC-1-like mix's response time)
    out["lat_all"] = latency(hists, a, b, ddirs=(0, 1))
    lf = log_figures(read_status_samples(os.path.join(
        run_dir, "status-samples.txt")), dirty, a, b) or {}
    for k in ("log_wa", "copied_per_write", "write_hit_frac"):
        out[k] = lf.get(k)
    out["log_wa_run"] = run_log_wa(
        read_status_file(os.path.join(run_dir, "status-end.txt")), fio)
    out["fio_clat"] = fio["write_clat"] if fio else None
    out["lat_series"] = latency_series(hists)
    holds = has_cache_dev(system)
    out["cache_per_user"] = cleaning_cost(dirty, a, b) if holds else None
    out["cache_per_user_run"] = (cleaning_cost(dirty, 0, end) if holds
                                 else None)
    return out


# --------------------------------------------------------------------------
# Whole run


def collect(out_dir):
    """results dict for run dir ``out_dir`` (also what results.json holds)."""
    with open(os.path.join(out_dir, "meta.json")) as f:
        meta = json.load(f)
    outcomes = meta.get("outcomes", {})
    runs = []
    for r in meta["runs"]:
        rd = os.path.join(out_dir, "runs", r["id"])
        entry = dict(r)
        entry["error"] = outcomes.get(r["id"], "no outcome")
        if r["measurement"] == "rate":
            entry["rate_basis"] = (meta.get("rate_basis") or {}).get(
                r["id"], "fixed")
        if entry["error"].startswith("kernel:") and _rc(out_dir, r["id"]) == 0:
            # it finished, but the console showed a kernel problem while it
            # ran: keep its figures, flag it
            entry["kernel_warning"] = entry["error"]
            entry["error"] = ""
        if entry["error"] == "" or os.path.exists(os.path.join(rd, "meta.txt")):
            try:
                if r["measurement"] == "destage":
                    entry.update(destage_figures(rd, r["system"]))
                elif r["measurement"] in ("cpu", "flush"):
                    entry.update(cost_figures(rd, r["system"]))
                else:
                    entry.update(closed_figures(rd, r["runtime_s"],
                                                r["window_s"], r["cache_mb"],
                                                r["system"]))
            except (OSError, ValueError, KeyError, ZeroDivisionError) as e:
                entry["error"] = entry["error"] or "analysis: %s" % e
        entry["ok"] = entry["error"] == ""
        entry["wall_s"] = run_wall_s(os.path.join(out_dir, "runs",
                                                  r["id"] + ".out"))
        runs.append(entry)
    res = {"meta": meta, "runs": runs}
    res["summary"] = summarize(res)
    return res


def run_wall_s(path):
    """Guest seconds from a run's first phase line ("@ <uptime> <phase>",
    benchlib.sh) to its last: what the run cost, for time estimates."""
    times = []
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith("@ "):
                    try:
                        times.append(float(line.split()[1]))
                    except (IndexError, ValueError):
                        pass
    except OSError:
        return None
    return round(times[-1] - times[0], 1) if len(times) > 1 else None


def _rc(out_dir, rid):
    try:
        with open(os.path.join(out_dir, "runs", rid + ".rc")) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def _ok(runs, measurement):
    return [r for r in runs if r["measurement"] == measurement and r["ok"]]


def ratio(a, b):
    """a / b, or None if either is missing or b is 0."""
    if a is None or b is None or not b:
        return None
    return a / b


def _blocks(r, profile):
    """Dirty-set size (4 KiB writes) of a destage run (runs from before the
    sweep have the profile's one size)."""
    return r.get("blocks") or profile.get("destage_blocks", 0)


def destage_table(by_sys, blocks):
    """One workload at one dirty-set size: {oracle_s, oracle_mean_seek_
    sectors, blocks, systems: {system: figures}}."""
    # the workload's oracle: the raw run's (exactly the workload's
    # writes), else dm-wow's, else the smallest
    ref = by_sys.get("raw") or by_sys.get(systems.REFERENCE)
    oracles = [r["origin"]["oracle"]["time_s"] for r in by_sys.values()]
    oracle_s = ref["origin"]["oracle"]["time_s"] if ref else min(oracles)
    wow = by_sys.get(systems.REFERENCE)
    wow_s = wow["origin"]["trace"]["time_s"] if wow else None
    row = {}
    for s, r in by_sys.items():
        t = r["origin"]["trace"]
        row[s] = {
            "time_s": t["time_s"],
            "iops": t["iops"],
            "mb_s": t["mb_s"],
            "requests": t["requests"],
            "mean_seek_sectors": t["mean_seek_sectors"],
            "mean_request_sectors": t["mean_request_sectors"],
            "sequential_fraction": t["sequential_fraction"],
            "descents": t["descents"],
            "own_oracle_s": r["origin"]["oracle"]["time_s"],
            "x_own_oracle": r["origin"]["time_ratio"],
            "x_oracle": ratio(t["time_s"], oracle_s),
            "x_wow": ratio(t["time_s"], wow_s),
            # the workload's writes per modelled second of origin time:
            # the rate this destage order could sustain
            "writes_per_s": ratio(blocks, t["time_s"]),
            "load_phase_writes": r.get("load_phase_writes", 0),
            "wa": r.get("cache", {}).get("write_amplification"),
            "log_wa": r.get("log_wa"),
            "violations": r.get("cache", {}).get("violations"),
            "cache_writes": r.get("cache", {}).get("writes"),
        }
    return {"oracle_s": oracle_s,
            "oracle_writes_per_s": ratio(blocks, oracle_s),
            "blocks": blocks,
            "oracle_mean_seek_sectors":
                (ref or min(by_sys.values(), key=lambda r: r["origin"]
                            ["oracle"]["time_s"]))
                ["origin"]["oracle"]["mean_seek_sectors"],
            "systems": row}


def summarize(res):
    """Cross-system tables and the targets of issue 5.  ``destage``: per
    workload at the headline dirty-set size (the profile's destage_blocks,
    else the largest run); ``destage_sweep``: per workload and dirty-set
    size (str(blocks)); ``closed``: per workload and cache size;
    ``rate``: the same of the rate-limited runs; ``rewrites``: wow over
    cscan and lrw on the rewrite workloads."""
    runs = res["runs"]
    profile = res["meta"].get("profile", {})
    groups = {}
    for r in _ok(runs, "destage"):
        groups.setdefault(r["workload"], {}).setdefault(
            _blocks(r, profile), {})[r["system"]] = r
    dtab, dsweep = {}, {}
    for wl, by_blocks in groups.items():
        dsweep[wl] = {str(n): destage_table(by_sys, n)
                      for n, by_sys in sorted(by_blocks.items())}
        head = profile.get("destage_blocks")
        if head not in by_blocks:
            head = max(by_blocks)
        dtab[wl] = dsweep[wl][str(head)]
    closed = _ok(runs, "closed")
    ctab = closed_tables([r for r in closed
                          if r.get("origin", "hdd") == "hdd"])
    raid = raid_tables([r for r in closed if r.get("origin", "hdd") != "hdd"])
    rtab = closed_tables(_ok(runs, "rate"), rate_key)
    rate_vs_ssd(rtab)
    cpu_runs = _ok(runs, "cpu")
    cpu = cpu_table([r for r in cpu_runs if r.get("jobs", 1) == 1])
    cpu2 = cpu_scaling(cpu, cpu_table([r for r in cpu_runs
                                       if r.get("jobs", 1) == 2]))
    flush = flush_table(_ok(runs, "flush"))
    return {"destage": dtab, "destage_sweep": dsweep, "closed": ctab,
            "raid": raid,
            "rate": rtab, "policies": policies(ctab),
            "cpu": cpu, "cpu2": cpu2, "flush": flush,
            "targets": targets(dtab, ctab) + targets16(ctab, rtab, cpu,
                                                       flush) +
            targets35(raid) + targets37(cpu2)}


def raid_case(r):
    """A RAID run's case: "<origin> <workload> <full|N MiB footprint>", and
    for an open-loop run " open, <cache> MiB cache" (its rows are its
    BSUs)."""
    case = "%s %s %s" % (r["origin"], r["workload"],
                         "%d MiB" % r["span_mb"] if r.get("span_mb")
                         else "full")
    if r.get("bsus"):
        case += " open, %d MiB cache" % r["cache_mb"]
    return case


def _raid_row(r):
    """The row key of a RAID run in its case: the cache MiB, or for an
    open-loop run "b<BSUs>"."""
    return "b%d" % r["bsus"] if r.get("bsus") else str(r["cache_mb"])


def _row_order(key):
    return int(key.lstrip("b"))


def spread(xs):
    """{n, mean, min, max, sd} of the figures ``xs`` (None left out)."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return {"n": 0, "mean": None, "min": None, "max": None, "sd": None}
    m, sd = _mean_sd(xs)
    return {"n": len(xs), "mean": m, "min": min(xs), "max": max(xs),
            "sd": sd}


RAID_PEERS = ("cscan", "lrw", "writecache")


def raid_tables(runs):
    """The RAID cases' closed runs: {case: {str(cache MiB): {system:
    {sustained: spread of the repeats' sustained IOPS, runs: [(id,
    sustained, steady)], steady: how many were}, "wow_x": {peer: {mean,
    lo, hi, apart}}}}}: wow's mean over the peer's, the ratio's range
    over the repeats (wow's lowest over the peer's highest, and the other
    way) and whether the two spreads do not overlap (a ratio is claimed
    only then)."""
    groups = {}
    for r in runs:
        groups.setdefault(raid_case(r), {}).setdefault(
            _raid_row(r), {}).setdefault(r["system"], []).append(r)
    out = {}
    for case, by_mb in groups.items():
        out[case] = {}
        for mb, by_sys in sorted(by_mb.items(),
                                 key=lambda x: _row_order(x[0])):
            row = {}
            for sname, rs in by_sys.items():
                sus = [sustained(r)[0] for r in rs]
                row[sname] = {
                    "sustained": spread(sus),
                    "runs": [[r["id"], x, bool(r.get("steady"))]
                             for r, x in zip(rs, sus)],
                    "steady": sum(1 for r in rs if r.get("steady")),
                    # response time (every I/O) and write latency over
                    # the sustained span: the open-loop ladder's figures
                    "p50_ms": spread([(r.get("lat_all") or {}).get(
                        "p50_ms") for r in rs]),
                    "p99_ms": spread([(r.get("lat_all") or {}).get(
                        "p99_ms") for r in rs]),
                    "write_p99_ms": spread([(r.get("lat") or {}).get(
                        "p99_ms") for r in rs])}
            wow = row.get(systems.REFERENCE)
            x = {}
            for peer in RAID_PEERS:
                o = row.get(peer)
                if not wow or not o or not wow["sustained"]["n"] or \
                        not o["sustained"]["n"]:
                    continue
                a, b = wow["sustained"], o["sustained"]
                x[peer] = {"mean": ratio(a["mean"], b["mean"]),
                           "lo": ratio(a["min"], b["max"]),
                           "hi": ratio(a["max"], b["min"]),
                           "apart": a["min"] > b["max"] or
                           a["max"] < b["min"]}
            row["wow_x"] = x
            out[case][mb] = row
    return out


def raid_md(raid):
    """The RAID cases as Markdown tables: per case, a row per cache size:
    each system's mean sustained IOPS over the repeats with the lowest and
    highest (and how many runs, † when one was not steady), then wow over
    each peer: the ratio of the means and its range over the repeats; "="
    marks a ratio whose spreads overlap (not claimed).  An open-loop
    ladder's rows are its BSUs, and its cells add the mean p50 / p99
    response time of every I/O."""
    if not raid:
        return ""
    out = []
    for case in sorted(raid):
        by_mb = raid[case]
        names = _order({s for row in by_mb.values() for s in row
                        if s != "wow_x"}, systems.SYSTEM_NAMES)
        peers = [p for p in RAID_PEERS if p in names]
        header = ["cache"] + [_label(n) for n in names] + [
            "wow / %s" % p for p in peers]
        rows = []
        ladder = " open, " in case
        if ladder:
            header[0] = "BSUs (offered I/Os/s)"
        for mb, row in sorted(by_mb.items(), key=lambda x: _row_order(x[0])):
            cells = ["%d (%d)" % (_row_order(mb), 50 * _row_order(mb))
                     if ladder else "%s MiB" % mb]
            for n in names:
                x = row.get(n)
                if not x or not x["sustained"]["n"]:
                    cells.append("–")
                    continue
                sp = x["sustained"]
                cell = "%.0f [%.0f–%.0f] (%d%s)" % (
                    sp["mean"], sp["min"], sp["max"], sp["n"],
                    "" if x["steady"] == len(x["runs"]) else " †")
                if ladder and x["p50_ms"]["n"]:
                    cell += "; %.1f / %.0f ms" % (x["p50_ms"]["mean"],
                                                  x["p99_ms"]["mean"])
                cells.append(cell)
            for p in peers:
                r = row["wow_x"].get(p)
                cells.append("–" if not r else "%s%.2f [%.2f–%.2f]" % (
                    "" if r["apart"] else "= ", r["mean"], r["lo"],
                    r["hi"]))
            rows.append(cells)
        out.append("**%s**\n\n%s\n" % (case, table(header, rows)))
    return "\n".join(out)


def rate_key(r):
    """A rate-limited run's row: its system, or for the cache disk alone
    at another system's rate "ssd@<that system>"."""
    if r["system"] == "ssd" and r.get("rate_of"):
        return "ssd@" + r["rate_of"].rsplit("-", 1)[1]
    return r["system"]


def rate_vs_ssd(rtab):
    """Each rate-limited run's p99 over the cache disk alone's at the
    same rate (``p99_x_ssd``), in place."""
    for by_size in rtab.values():
        for row in by_size.values():
            for k, x in row.items():
                if k.startswith("ssd"):
                    continue
                ssd = row.get("ssd@" + k) or row.get("ssd")
                x["p99_x_ssd"] = ratio(
                    (x.get("lat") or {}).get("p99_ms"),
                    (ssd.get("lat") or {}).get("p99_ms") if ssd else None)


def _mean_sd(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None, None
    m = sum(xs) / len(xs)
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


def cpu_table(runs):
    """{system: {iops (mean of the rounds), iops_sd, rounds: [IOPS],
    x_linear, cpu_us_per_write, cpu_busy_frac (of all the guest's CPUs),
    switches_per_write, cache_per_user, log_wa}}: the CPU cost."""
    by = {}
    for r in runs:
        by.setdefault(r["system"], []).append(r)
    out = {}
    for s, rs in by.items():
        rs.sort(key=lambda r: r.get("round", 0))
        m, sd = _mean_sd([r["iops"] for r in rs])
        out[s] = {"iops": m, "iops_sd": sd,
                  "rounds": [round(r["iops"], 1) for r in rs],
                  "cpu_us_per_write": _mean_sd(
                      [r.get("cpu_us_per_write") for r in rs])[0],
                  "cpu_busy_frac": _mean_sd(
                      [r.get("cpu_busy_frac") for r in rs])[0],
                  "switches_per_write": _mean_sd(
                      [r.get("switches_per_write") for r in rs])[0],
                  "cache_per_user": _mean_sd(
                      [r.get("cache_per_user") for r in rs])[0],
                  "log_wa": _mean_sd([r.get("log_wa_run") for r in rs])[0]}
        prof = [r["perf"] for r in rs if r.get("perf")]
        if prof:
            # the first round's profile, its shares in µs of a write
            out[s]["perf"] = dict(prof[0], rounds=len(prof))
    lin = out.get("linear", {}).get("iops")
    wc = out.get("writecache", {}).get("iops")
    for x in out.values():
        x["x_linear"] = ratio(x["iops"], lin)
        x["x_writecache"] = ratio(x["iops"], wc)
    return out


def cpu_scaling(one, two):
    """``two`` (the :func:`cpu_table` of the two-job runs) with each
    system's scaling: x_one_job, its two-job IOPS over its own one-job
    IOPS (``one``; 2.0 is perfect scaling over two CPUs)."""
    for s, x in two.items():
        x["x_one_job"] = ratio(x["iops"], one.get(s, {}).get("iops"))
    return two


def flush_table(runs):
    """{system: {plain, fua (mean IOPS of the rounds), fua_x_plain, the
    rounds, FUA write latency p99 and max, cache_per_user of each mode}}:
    the flush cost."""
    by = {}
    for r in runs:
        by.setdefault(r["system"], {}).setdefault(r["workload"], []).append(r)
    out = {}
    for s, modes in by.items():
        x = {}
        for m in systems.FLUSH_MODES:
            rs = sorted(modes.get(m, []), key=lambda r: r.get("round", 0))
            x[m] = _mean_sd([r["iops"] for r in rs])[0]
            x[m + "_rounds"] = [round(r["iops"], 1) for r in rs]
            x[m + "_cache_per_user"] = _mean_sd(
                [r.get("cache_per_user") for r in rs])[0]
            clat = [r.get("fio_clat") or {} for r in rs]
            x[m + "_p99_ms"] = _mean_sd([c.get("p99_ms") for c in clat])[0]
            x[m + "_max_ms"] = max([c.get("max_ms") or 0 for c in clat] +
                                   [0]) or None
        x["fua_x_plain"] = ratio(x["fua"], x["plain"])
        out[s] = x
    wc = out.get("writecache", {}).get("fua")
    for x in out.values():
        x["fua_x_writecache_fua"] = ratio(x["fua"], wc)
    return out


def closed_tables(runs, key=lambda r: r["system"]):
    """{workload: {str(cache MiB): {system: figures}}} of closed (or rate)
    runs: IOPS of the window and sustained, ratios to dm-wow's and the raw
    disk's (run once per workload), and the per-run figures of
    STEADY_KEYS and RUN_KEYS.  ``key`` names a run's row (rate_key)."""
    closed = {}
    for r in runs:
        closed.setdefault(r["workload"], {}).setdefault(
            r["cache_mb"], {})[key(r)] = r
    ctab = {}
    for wl, by_size in closed.items():
        raw, raw_run = None, None
        for by_sys in by_size.values():
            if "raw" in by_sys:
                raw_run = by_sys["raw"]
                raw = raw_run["iops"]
        ctab[wl] = {}
        for mb, by_sys in sorted(by_size.items()):
            wow = by_sys.get(systems.REFERENCE)
            wow_iops = wow["iops"] if wow else None
            wow_sus = sustained(wow)[0] if wow else None
            ctab[wl][str(mb)] = {}
            for s, r in by_sys.items():
                sus, how = sustained(r)
                ctab[wl][str(mb)][s] = dict(
                    {"iops": r["iops"], "write_iops": r["write_iops"],
                     "x_wow": ratio(r["iops"], wow_iops),
                     "x_raw": ratio(r["iops"], raw),
                     "sustained": sus, "sustained_by": how,
                     "x_wow_sustained": ratio(sus, wow_sus)},
                    **{k: r.get(k) for k in STEADY_KEYS + RUN_KEYS})
            if raw is not None and "raw" not in by_sys:
                ctab[wl][str(mb)]["raw"] = dict(
                    {"iops": raw, "write_iops": raw,
                     "x_wow": ratio(raw, wow_iops), "x_raw": 1.0,
                     "sustained": raw, "sustained_by": "window",
                     "raw_copy": True,
                     "x_wow_sustained": ratio(raw, wow_sus)},
                    **{k: raw_run.get(k) for k in STEADY_KEYS + RUN_KEYS})
            wc = ctab[wl][str(mb)].get("writecache")
            for x in ctab[wl][str(mb)].values():
                x["x_writecache_sustained"] = ratio(
                    x["sustained"], wc["sustained"] if wc else None)
    return ctab


def policies(ctab):
    """wow against its baselines wherever they ran side by side:
    {workload: {str(cache MiB): {wow_x_cscan, wow_x_lrw (sustained IOPS),
    and the same of the last windows (_window)}}}."""
    out = {}
    for wl in ctab:
        for mb, row in ctab.get(wl, {}).items():
            if "cscan" not in row and "lrw" not in row:
                continue
            wow = row.get("wow")
            if not wow:
                continue
            x = {}
            for s in ("cscan", "lrw"):
                o = row.get(s)
                x["wow_x_" + s] = ratio(wow["sustained"],
                                        o["sustained"] if o else None)
                x["wow_x_%s_window" % s] = ratio(wow["iops"],
                                                 o["iops"] if o else None)
            out.setdefault(wl, {})[mb] = x
    return out


STEADY_KEYS = ("steady", "not_steady_because", "half_change", "cv",
               "dirty_frac_mean", "dirty_frac_at_window", "turnover",
               "iops_since_turnover", "turnover_s", "iops_cycles", "cycles",
               "cycles_span", "run_s", "stop", "system")
# per-run figures beyond the steady state: write latency (over the
# sustained span, over the window, fio's whole run), dm-wow's log writes,
# the rate asked of a rate-limited run
RUN_KEYS = ("lat", "lat_window", "lat_all", "fio_clat", "log_wa", "copied_per_write",
            "write_hit_frac", "log_wa_run", "rate_iops", "id",
            "cache_per_user", "cache_per_user_run", "lat_series",
            "rate_of", "rate_basis")


def sustained(r):
    """(IOPS, how) a closed run sustains, the same rule for every system:
    over whole fill/drain cycles for a run that cycles ("cycles"), else
    over everything since the turnover ("turnover"), else (nothing dirty
    to turn over: dm-cache passing first writes through, the raw disk) the
    last window ("window")."""
    how = _sustained_by(r)
    return r.get({"cycles": "iops_cycles", "turnover": "iops_since_turnover",
                  "window": "iops"}[how]), how


def _sustained_by(r):
    if r.get("iops_cycles") is not None:
        return "cycles"
    if r.get("iops_since_turnover") is not None:
        return "turnover"
    return "window"


def sustained_span(r):
    """(start, end, how) of the span :func:`sustained` measures a closed
    run's IOPS over: its whole cycles, else from the turnover to the end of
    the window, else the window."""
    how = _sustained_by(r)
    if how == "cycles":
        return r["cycles_span"][0], r["cycles_span"][1], how
    if how == "turnover":
        return r["turnover_s"], r["window"][1], how
    return r["window"][0], r["window"][1], how


def targets(dtab, ctab):
    """Issue 5's target figures, each {name, value, target, met}: reported,
    not asserted."""
    out = []

    def add(name, value, target, met, detail=""):
        out.append({"name": name, "value": value, "target": target,
                    "met": met, "detail": detail})

    uni = dtab.get(systems.HEADLINE_WORKLOAD, {}).get("systems", {})
    for s in ("wow", "cscan"):
        if s in uni:
            v = uni[s]["x_oracle"]
            add("modelled destage of %s within %.1fx of the oracle (uniform)"
                % (s, TARGET_ORACLE_RATIO), v, "<= %.2f" % TARGET_ORACLE_RATIO,
                v is not None and v <= TARGET_ORACLE_RATIO)
    for wl, t in dtab.items():
        row = t["systems"]
        if "wow" in row and ("cscan" in row or "lrw" in row):
            best = min(row[s]["time_s"] for s in ("cscan", "lrw") if s in row)
            v = ratio(best, row["wow"]["time_s"])
            met = v is not None and v >= 1.0 - 1e-9
            add("destage: wow at least as fast as cscan and lrw (%s)" % wl, v,
                ">= 1.00 (best baseline time / wow time)", met,
                "" if met or not v else "wow takes %.2f%% longer" %
                ((1 / v - 1) * 100))
    def unsteady(*rows):
        bad = [r for r in rows if not r.get("steady")]
        return "not steady: %s" % ", ".join(
            sorted(s for s, r in row.items() if r in bad)) if bad else ""

    for wl, by_size in ctab.items():
        for mb, row in by_size.items():
            if "wow" in row and ("cscan" in row or "lrw" in row):
                best_s = max((s for s in ("cscan", "lrw") if s in row),
                             key=lambda s: row[s]["iops"])
                v = ratio(row["wow"]["iops"], row[best_s]["iops"])
                why = unsteady(row["wow"], row[best_s])
                add("closed loop: wow IOPS >= max(cscan, lrw) (%s, %s MiB)"
                    % (wl, mb), v, ">= 1.00 (wow / best baseline)",
                    v is not None and v >= 1.0 - 1e-9 and not why, why)
                best = max(row[s].get("sustained") or 0
                           for s in ("cscan", "lrw") if s in row)
                v = ratio(row["wow"].get("sustained"), best or None)
                if v is not None:
                    add("closed loop, sustained: wow >= max(cscan, lrw) "
                        "(%s, %s MiB)" % (wl, mb), v,
                        ">= 1.00 (wow / best baseline)", v >= 1.0 - 1e-9)
            if wl == systems.HEADLINE_WORKLOAD and "wow" in row and \
                    "writecache" in row:
                v = ratio(row["wow"]["iops"], row["writecache"]["iops"])
                why = unsteady(row["wow"], row["writecache"])
                add("closed loop: wow >= %gx dm-writecache (%s MiB)" % (
                    TARGET_WRITECACHE_FACTOR, mb), v,
                    ">= %.2f" % TARGET_WRITECACHE_FACTOR,
                    v is not None and v >= TARGET_WRITECACHE_FACTOR and
                    not why, why)
                v = ratio(row["wow"].get("sustained"),
                          row["writecache"].get("sustained"))
                if v is not None:
                    add("closed loop, sustained: wow >= %gx dm-writecache "
                        "(%s MiB)" % (TARGET_WRITECACHE_FACTOR, mb), v,
                        ">= %.2f" % TARGET_WRITECACHE_FACTOR,
                        v >= TARGET_WRITECACHE_FACTOR)
    for wl, t in dtab.items():
        for s in ("wow", "cscan", "lrw"):
            wa = t["systems"].get(s, {}).get("wa")
            if wa is not None:
                add("cache write amplification of %s <= %.2f (%s)" % (
                    s, TARGET_WA, wl), wa, "<= %.2f" % TARGET_WA,
                    wa <= TARGET_WA)
    return out


# Issue 16's targets (reported, not asserted)
TARGET_WOW_X_CSCAN_HOT = 1.15     # hot set 1x to 4x the cache
TARGET_CPU_X_LINEAR = 0.8
TARGET_CPU_X_WRITECACHE = 1.2
TARGET_FUA_X_PLAIN = 0.8
TARGET_FUA_X_WRITECACHE = 3.0
TARGET_SAT_X_WRITECACHE = 2.3
TARGET_HALF_RATE_P99_X_SSD = 1.5


# Issue 37's for the CPU cost with two writers on the two vCPUs: the
# ratios it asks of RAM-disk writes (0.8x dm-linear, 1.15x dm-writecache),
# "with two jobs on two CPUs the same" (reported, not asserted)
TARGET_CPU2_X_LINEAR = 0.8
TARGET_CPU2_X_WRITECACHE = 1.15


def _target(out, name, value, op, want, why="", issue=16):
    """A target line with how far off it is: "N% short" of a >= target,
    "N% over" a <= one."""
    if value is None:
        met, detail = False, why or "not measured"
    else:
        met = value >= want - 1e-9 if op == ">=" else value <= want + 1e-9
        if met:
            detail = why
        elif op == ">=":
            detail = "%.0f%% short" % ((1 - value / want) * 100)
        else:
            detail = "%.0f%% over" % ((value / want - 1) * 100)
        if not met and why:
            detail += "; " + why
    out.append({"name": name, "value": value,
                "target": "%s %.2f" % (op, want), "met": met,
                "detail": detail, "issue": issue})


def targets16(ctab, rtab, cpu, flush):
    """Issue 16's targets, each with how far off it is."""
    out = []
    hot = ctab.get("hot", {})
    for mb in sorted(hot, key=int):
        x = systems.HOT_MB / float(mb)
        row = hot[mb]
        if 1 <= x <= 4 and "wow" in row and "cscan" in row:
            _target(out, "hot set %gx the cache (%s MiB): wow >= %.2fx "
                    "cscan, sustained" % (x, mb, TARGET_WOW_X_CSCAN_HOT),
                    ratio(row["wow"]["sustained"], row["cscan"]["sustained"]),
                    ">=", TARGET_WOW_X_CSCAN_HOT)
    if "wow" in cpu:
        _target(out, "CPU cost on RAM disks: dm-wow IOPS over dm-linear's",
                cpu["wow"].get("x_linear"), ">=", TARGET_CPU_X_LINEAR)
        _target(out, "CPU cost on RAM disks: dm-wow IOPS over "
                "dm-writecache's", cpu["wow"].get("x_writecache"), ">=",
                TARGET_CPU_X_WRITECACHE)
    if "wow" in flush:
        _target(out, "every write FUA: dm-wow over its own plain IOPS",
                flush["wow"].get("fua_x_plain"), ">=", TARGET_FUA_X_PLAIN)
        _target(out, "every write FUA: dm-wow over dm-writecache's FUA "
                "IOPS", flush["wow"].get("fua_x_writecache_fua"), ">=",
                TARGET_FUA_X_WRITECACHE)
    for mb, row in sorted(ctab.get(systems.HEADLINE_WORKLOAD, {}).items(),
                          key=lambda kv: int(kv[0])):
        w, wc = row.get("wow"), row.get("writecache")
        if not w or not wc:
            continue
        lw, lc = w.get("lat") or {}, wc.get("lat") or {}
        for k, what in (("p99_9_ms", "p99.9"), ("max_ms", "maximum")):
            _target(out, "saturated (uniform, %s MiB): dm-wow's %s write "
                    "latency over dm-writecache's" % (mb, what),
                    ratio(lw.get(k), lc.get(k)), "<=", 1.0)
        _target(out, "saturated (uniform, %s MiB): dm-wow's sustained IOPS "
                "over dm-writecache's" % mb,
                ratio(w["sustained"], wc["sustained"]), ">=",
                TARGET_SAT_X_WRITECACHE)
    for mb, row in sorted(rtab.get(systems.HEADLINE_WORKLOAD, {}).items(),
                          key=lambda kv: int(kv[0])):
        w = row.get("wow")
        if w:
            _target(out, "half rate (uniform, %s MiB, %s IOPS): dm-wow's "
                    "p99 over the cache disk's own at that rate" % (
                        mb, w.get("rate_iops")), w.get("p99_x_ssd"), "<=",
                    TARGET_HALF_RATE_P99_X_SSD,
                    "" if str(w.get("rate_basis", "")).startswith("half")
                    else "rate: %s" % w.get("rate_basis"))
    return out


# Issue 35's, on the md RAID cases (make bench-raid): wow over a peer, by
# the ratio of the means over the repeats; the detail gives the ratio's
# range over the repeats and says whether the two spreads overlap (a
# ratio is claimed only where they do not)
TARGETS35 = (
    # (case, peer, wanted, what)
    ("raid5 spc1h full", "cscan", 0.98, "SPC-1-like, cache-insensitive"),
    ("raid5 spc1h full", "lrw", 1.4, "SPC-1-like, cache-insensitive"),
    ("raid5 spc1h 354 MiB", "cscan", 1.5, "SPC-1-like, cache-sensitive"),
    ("raid5 spc1h 354 MiB", "lrw", 1.0, "SPC-1-like, cache-sensitive"),
)
TARGET35_RANDOM_X_LRW = 2.0
TARGET35_RANDOM_X_WRITECACHE = 2.0
TARGET35_NEVER_BELOW = 0.98


def _x35(x):
    """The detail of a RAID ratio: its range, and whether it is claimed."""
    return "range %.2f–%.2f, %s" % (
        x["lo"], x["hi"], "spreads apart" if x["apart"] else
        "spreads overlap: not claimed")


def _target35(out, name, x, want):
    _target(out, name, x["mean"] if x else None, ">=", want,
            _x35(x) if x else "", issue=35)


def _by_cache(rows):
    return sorted((int(mb), row) for mb, row in rows.items()
                  if not mb.startswith("b"))


def targets35(raid):
    """Issue 35's targets on the RAID cases (``raid``: raid_tables), each
    with how far off it is; none without RAID runs."""
    out = []
    for case, peer, want, what in TARGETS35:
        for mb, row in _by_cache(raid.get(case, {})):
            _target35(out, "RAID-5 %s (%d MiB cache): wow >= %.2fx %s" % (
                what, mb, want, peer), row["wow_x"].get(peer), want)
    for origin in ("raid5", "raid10"):
        name = origin.upper().replace("RAID", "RAID-")
        rows = _by_cache(raid.get("%s uniform full" % origin, {}))
        lrw = [(mb, row["wow_x"]["lrw"]) for mb, row in rows
               if "lrw" in row["wow_x"]]
        if lrw:
            mb, x = lrw[-1]
            _target35(out, "%s random writes, the largest cache (%d MiB): "
                      "wow >= %.1fx lrw" % (name, mb, TARGET35_RANDOM_X_LRW),
                      x, TARGET35_RANDOM_X_LRW)
        if len(lrw) > 1:
            growing = all(b[1]["mean"] >= a[1]["mean"]
                          for a, b in zip(lrw, lrw[1:]))
            out.append({
                "name": "%s random writes: wow's lead over lrw grows with "
                "the cache (%s MiB)" % (
                    name, ", ".join(str(m) for m, _ in lrw)),
                "value": lrw[-1][1]["mean"] / lrw[0][1]["mean"],
                "target": "each >= the one before", "met": growing,
                "detail": "wow / lrw " + ", ".join(
                    "%.2f" % x["mean"] for _, x in lrw), "issue": 35})
        if origin == "raid5":
            for mb, row in rows:
                x = row["wow_x"].get("writecache")
                if x:
                    _target35(out, "RAID-5 random writes (%d MiB cache): "
                              "dm-wow >= %.1fx dm-writecache" % (
                                  mb, TARGET35_RANDOM_X_WRITECACHE), x,
                              TARGET35_RANDOM_X_WRITECACHE)
    worst = None
    for case in sorted(raid):
        for mb, row in _by_cache(raid[case]):
            # over the better baseline: the lower of the two ratios
            xs = [row["wow_x"][p]["mean"] for p in ("cscan", "lrw")
                  if p in row["wow_x"]]
            if len(xs) < 2:
                continue
            v = min(xs)
            if worst is None or v < worst[0]:
                worst = (v, "%s, %d MiB" % (case, mb))
    if worst:
        _target(out, "wow over the better of cscan and lrw, at every point "
                "of every RAID case (the lowest)", worst[0], ">=",
                TARGET35_NEVER_BELOW, "lowest at " + worst[1], issue=35)
    return out


def targets37(cpu2):
    """Issue 37's two-job CPU targets (``cpu2``: summary["cpu2"]), each
    with how far off it is; none without two-job runs."""
    out = []
    if "wow" in cpu2:
        _target(out, "CPU cost on RAM disks, two jobs on two CPUs: dm-wow "
                "IOPS over dm-linear's", cpu2["wow"].get("x_linear"), ">=",
                TARGET_CPU2_X_LINEAR, issue=37)
        _target(out, "CPU cost on RAM disks, two jobs on two CPUs: dm-wow "
                "IOPS over dm-writecache's", cpu2["wow"].get("x_writecache"),
                ">=", TARGET_CPU2_X_WRITECACHE, issue=37)
    return out


# --------------------------------------------------------------------------
# Markdown


def _f(v, fmt="%.2f", none="–"):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return none
    return fmt % v


def _label(s):
    if s.startswith("ssd@"):
        return "cache disk alone, at %s's rate" % _label(s[4:])
    try:
        return systems.system(s).label
    except KeyError:
        return s


def _wl_label(w):
    try:
        return systems.workload(w).label
    except KeyError:
        return w


def _order(names, universe):
    return [n for n in universe if n in names] + sorted(
        n for n in names if n not in universe)


def table(header, rows, align=None):
    align = align or ["l"] + ["r"] * (len(header) - 1)
    sep = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def destage_headline_table(dtab, wl=systems.HEADLINE_WORKLOAD):
    t = dtab.get(wl)
    if not t:
        return "(no destage runs for %s)" % wl
    header = ["system", "modelled time (s)", "× oracle", "× dm-wow",
              "writes/s", "MB/s", "mean seek (MiB)", "mean request (KiB)",
              "sequential", "descents", "origin writes", "of them while loading",
              "cache WA", "log WA", "cache violations"]
    rows = []
    for s in _order(t["systems"], systems.SYSTEM_NAMES):
        x = t["systems"][s]
        rows.append([
            _label(s), _f(x["time_s"], "%.1f"), _f(x["x_oracle"]),
            _f(x["x_wow"]), _f(x["iops"], "%.0f"), _f(x["mb_s"], "%.2f"),
            _f(x["mean_seek_sectors"] * SECTOR_SIZE / MIB, "%.2f"),
            _f(x["mean_request_sectors"] * SECTOR_SIZE / 1024, "%.1f"),
            _f(x["sequential_fraction"] * 100, "%.0f%%"),
            x["descents"], x["requests"], x["load_phase_writes"],
            _f(x["wa"], "%.3f"), _f(x.get("log_wa"), "%.3f"),
            _f(x["violations"], "%d")])
    rows.append(["oracle", _f(t["oracle_s"], "%.1f"), "1.00", "", "", "",
                 _f(t["oracle_mean_seek_sectors"] * SECTOR_SIZE / MIB, "%.2f"),
                 "", "", "", "", "", "", "", ""])
    return table(header, rows)


def _workload_rows(dtab, wls, syss, cell):
    """One row per system of ``syss``: its label, then ``cell(x)`` of its
    destage figures for each workload of ``wls`` ("–" when missing)."""
    rows = []
    for s in syss:
        row = [_label(s)]
        for w in wls:
            x = dtab[w]["systems"].get(s)
            v = cell(x) if x else None
            row.append("–" if v is None else v)
        rows.append(row)
    return rows


def destage_matrix(dtab):
    wls = _order(dtab, systems.WORKLOAD_NAMES)
    syss = _order({s for w in wls for s in dtab[w]["systems"]},
                  systems.SYSTEM_NAMES)
    rows = _workload_rows(
        dtab, wls, syss, lambda x: "%.1f s · %s× wow · %s× oracle" % (
            x["time_s"], _f(x["x_wow"]), _f(x["x_oracle"])))
    rows.append(["oracle"] + ["%.1f s" % dtab[w]["oracle_s"] for w in wls])
    return table(["system"] + [_wl_label(w) for w in wls], rows)


def wa_matrix(dtab):
    wls = _order(dtab, systems.WORKLOAD_NAMES)
    syss = _order({s for w in wls for s in dtab[w]["systems"]
                   if dtab[w]["systems"][s]["wa"] is not None},
                  systems.SYSTEM_NAMES)
    rows = _workload_rows(
        dtab, wls, syss, lambda x: None if x["wa"] is None else
        "%.3f (%d)" % (x["wa"], x["violations"] or 0))
    return table(["system"] + [_wl_label(w) for w in wls], rows)


def _grid_sizes(ctab, w):
    """The cache sizes of workload ``w`` in the grids: every size of the
    headline workload, one of the others (16 MiB, or the middle one; their
    sweeps have their own tables)."""
    sizes = sorted(ctab[w], key=int)
    if w == systems.HEADLINE_WORKLOAD:
        return sizes
    return ["16"] if "16" in sizes else [sizes[len(sizes) // 2]]


def _closed_grid(ctab, cell):
    """A table of the closed runs: one row per system, one column per
    workload and cache size; ``cell(system, figures)`` gives a cell."""
    cols = [(w, mb) for w in _order(ctab, systems.WORKLOAD_NAMES)
            for mb in _grid_sizes(ctab, w)]
    syss = _order({s for w, mb in cols for s in ctab[w][mb]},
                  systems.SYSTEM_NAMES)
    rows = [[_label(s)] + [cell(s, ctab[w][mb].get(s)) if ctab[w][mb].get(s)
                           else "–" for w, mb in cols] for s in syss]
    return table(["system"] + ["%s, %s MiB" % (_wl_label(w), mb)
                               for w, mb in cols], rows)


def closed_matrix(ctab):
    """Last-window IOPS, with ratios to dm-wow and the raw disk."""
    def cell(s, x):
        mark = "" if x.get("steady") else " †"
        if s == "raw":
            return "%.0f%s" % (x["iops"], mark)
        since = x.get("iops_since_turnover")
        return "%.0f · %s× wow · %s× raw%s%s" % (
            x["iops"], _f(x["x_wow"]), _f(x["x_raw"]), mark,
            "" if since is None else " (since turnover: %.0f)" % since)
    return _closed_grid(ctab, cell)


def closed_sustained_matrix(ctab):
    """Sustained IOPS (:func:`sustained`), its ratio to dm-wow's and how
    it was measured."""
    def cell(s, x):
        how = {"cycles": "%d cycles" % (x.get("cycles") or 0),
               "turnover": "since turnover"}.get(x["sustained_by"], "window")
        return "%.0f · %s× wow (%s)" % (
            x["sustained"], _f(x.get("x_wow_sustained")), how)
    return _closed_grid(ctab, cell)


def closed_sweep_table(ctab, wl=systems.HEADLINE_WORKLOAD):
    """Sustained IOPS against cache size, one row per system (the WOW
    paper's figure as a table; † as in the grids); for the hot set, each
    size's hot set in cache sizes."""
    t = ctab.get(wl)
    if not t or len(t) < 2:
        return ""
    sizes = sorted(t, key=int)
    syss = _order({s for mb in sizes for s in t[mb]}, systems.SYSTEM_NAMES)
    rows = []
    for s in syss:
        row = [_label(s)]
        for mb in sizes:
            x = t[mb].get(s)
            row.append("–" if not x else "%.0f%s" % (
                x["sustained"], "" if x.get("steady") else " †"))
        rows.append(row)
    hot = systems.workload(wl).hot_mb if wl in systems.WORKLOAD_NAMES else 0
    return table(["system"] + ["%s MiB%s" % (mb, " (hot set %g×)" % (
        hot / float(mb)) if hot else "") for mb in sizes], rows)


def _ms(v):
    """A latency in milliseconds, three figures or so."""
    if v is None:
        return "–"
    for limit, fmt in ((100, "%.0f"), (10, "%.1f"), (1, "%.2f")):
        if v >= limit:
            return fmt % v
    return "%.3f" % v


def _lat_cells(x):
    """p50, p99, p99.9 and max (ms) of a run's write latency over its
    sustained span ("≥" a floor: fio's last bin), its I/Os and the span,
    and fio's whole-run max."""
    lat = x.get("lat") or {}
    whole = x.get("fio_clat") or {}
    span = lat.get("span")

    def cell(k):
        return ("≥" if k in lat.get("floors", ()) else "") + _ms(lat.get(k))

    ios = "–"
    if lat:
        ios = "%d" % lat["ios"] + (" (%.0f–%.0f)" % tuple(span) if span
                                   else "")
    return [cell("p50_ms"), cell("p99_ms"), cell("p99_9_ms"), cell("max_ms"),
            ios, _ms(whole.get("max_ms"))]


def _sustained_cell(x):
    return "%.0f%s (%s)" % (x["sustained"], "" if x.get("steady") else " †",
                            x["sustained_by"])


def _runs_in(tab):
    """(workload, MiB, system, figures) of every run in a closed_tables
    table, in table order (the raw disk's copies left out)."""
    for w in _order(tab, systems.WORKLOAD_NAMES):
        for mb in sorted(tab[w], key=int):
            row = tab[w][mb]
            for s in _order(row, systems.SYSTEM_NAMES):
                if not row[s].get("raw_copy"):
                    yield w, mb, s, row[s]


LAT_HEADER = ["p50", "p99", "p99.9", "max", "I/Os (span, s)",
              "max, whole run"]


def latency_table(ctab):
    """One row per saturated closed run: sustained IOPS and its ratio to
    dm-writecache's, the CV of the window's one-second rates, the write
    latency over the sustained span, dm-wow's log write amplification."""
    rows = []
    for w, mb, s, x in _runs_in(ctab):
        rows.append(
            ["`%s`" % x["id"], _sustained_cell(x),
             _f(x.get("x_writecache_sustained")), _f(x.get("cv"))] +
            _lat_cells(x) +
            [_f(x.get("log_wa"), "%.3f"), _f(x.get("copied_per_write"),
                                             "%.3f"),
             _f(x.get("cache_per_user"), "%.2f")])
    if not rows:
        return ""
    return table(["run", "sustained IOPS", "× dm-writecache", "CV (1 s)"] +
                 LAT_HEADER + ["log WA", "copied / write",
                               "cache B / user B"], rows)


def rate_table(rtab):
    """One row per rate-limited run: the rate asked, the IOPS done
    (sustained), the write latency over the sustained span, the dirty data
    and dm-wow's log write amplification."""
    rows = []
    for w, mb, s, x in _runs_in(rtab):
        basis = str(x.get("rate_basis") or "fixed")
        rows.append(
            ["`%s`" % x["id"], _label(s), "%s (%s)" % (
                _f(x.get("rate_iops"), "%d"), basis.split(" ")[0]),
             _sustained_cell(x)] + _lat_cells(x) +
            [_f(x.get("p99_x_ssd")),
             _f(None if x.get("dirty_frac_mean") is None else
                x["dirty_frac_mean"] * 100, "%.0f%%"),
             _f(x.get("log_wa"), "%.3f"), _f(x.get("cache_per_user"),
                                             "%.2f")])
    if not rows:
        return ""
    header = ["run", "system", "rate asked", "IOPS"] + LAT_HEADER + \
        ["p99 × cache disk's", "dirty", "log WA", "cache B / user B"]
    return table(header, rows, ["l", "l"] + ["r"] * (len(header) - 2))


def policies_table(ctab, pol):
    """One row per workload and cache size where wow ran beside cscan or
    lrw: sustained IOPS of wow, cscan and lrw, wow's ratios to them
    (sustained, and of the last windows), and the share of wow's writes
    that found their block cached."""
    rows = []
    for w in _order(pol, systems.WORKLOAD_NAMES):
        for mb in sorted(pol[w], key=int):
            row = ctab[w][mb]
            x = pol[w][mb]
            cells = []
            for s in ("wow", "cscan", "lrw"):
                y = row.get(s)
                cells.append("–" if not y else "%.0f%s" % (
                    y["sustained"], "" if y.get("steady") else " †"))
            wow = row.get("wow") or {}
            rows.append(
                ["%s, %s MiB" % (_wl_label(w), mb)] + cells +
                [_f(x.get("wow_x_cscan")), _f(x.get("wow_x_lrw")),
                 _f(x.get("wow_x_cscan_window")),
                 _f(x.get("wow_x_lrw_window")),
                 _f(None if wow.get("write_hit_frac") is None else
                    wow["write_hit_frac"] * 100, "%.0f%%")])
    if not rows:
        return ""
    return table(["workload", "wow", "cscan", "lrw", "wow / cscan",
                  "wow / lrw", "wow / cscan (window)", "wow / lrw (window)",
                  "wow write hits"], rows)


CPU_HEADER = ["system", "IOPS (rounds)", "× dm-linear", "× dm-writecache",
              "CPU per write", "switches per write"]


def _cpu_rows(cpu, more):
    """Rows of a CPU-cost table (:func:`cpu_table`): CPU_HEADER's cells,
    then ``more(figures)``'s."""
    rows = []
    for sname in _order(cpu, systems.SYSTEM_NAMES):
        x = cpu[sname]
        rows.append([_label(sname), "%s (%s)" % (
            _f(x["iops"], "%.0f"), ", ".join("%.0f" % v for v in x["rounds"])),
            _f(x.get("x_linear")), _f(x.get("x_writecache")),
            _f(x.get("cpu_us_per_write"), "%.0f µs"),
            _f(x.get("switches_per_write"), "%.2f")] + more(x))
    return rows


def cpu_md(cpu):
    rows = _cpu_rows(cpu, lambda x: [_f(x.get("cache_per_user"), "%.2f"),
                                     _f(x.get("log_wa"), "%.3f")])
    if not rows:
        return ""
    return table(CPU_HEADER + ["cache B / user B", "log WA"], rows)


def cpu2_md(cpu2):
    """The two-job CPU cost: IOPS, ratios, CPU per write, each system's
    two-job IOPS over its one-job IOPS, and how busy the CPUs were."""
    rows = _cpu_rows(cpu2, lambda x: [
        _f(x.get("x_one_job")),
        _f(x["cpu_busy_frac"] * 100 if x.get("cpu_busy_frac") is not None
           else None, "%.0f%%")])
    if not rows:
        return ""
    return table(CPU_HEADER + ["× its one-job IOPS", "CPUs busy"], rows)


def cpu_section(parts, h, p, s):
    """The CPU-cost sections of the report (profile ``p``, summary ``s``),
    appended to ``parts``: the one-job table, then the two-job one, each
    with what it measured."""
    runtime, origin_mb, cache_mb, rounds = [p.get(k, 0) for k in (
        "cpu_runtime_s", "cpu_origin_mb", "cpu_cache_mb", "cpu_rounds")]
    one = ("4 KiB random writes at iodepth 32 for %d s (2 s ramp not "
           "counted) on two RAM disks (brd): the origin (%d MiB, the "
           "whole of it written) and a %d MiB slice of the other as the "
           "cache, through dm-linear (the origin alone), dm-wow and "
           "dm-writecache, in %d alternated rounds.  Nothing slow is "
           "under them: the IOPS is what the (emulated) CPU allows, "
           "destage to the RAM origin included once the cache is full.  "
           "IOPS: the mean of the rounds (each round in brackets); CPU "
           "per write: the guest's busy CPU time (/proc/stat) over the "
           "writes; switches per write: its context switches (/proc/stat "
           "ctxt) over the writes, each worker woken and run one or two; "
           "cache B / user B: bytes written to the cache slice "
           "per byte written.\n" % (runtime, origin_mb, cache_mb, rounds))
    two = ("The CPU cost's writes (4 KiB random, %d s, 2 s ramp not "
           "counted, the same RAM disks and %d MiB cache) from two fio "
           "jobs (numjobs=2, reported as one group), each at iodepth 32, "
           "each pinned to its own vCPU (cpus_allowed_policy=split) and "
           "over its own half of the origin, in the same alternated rounds "
           "as the one-job runs.  × its one-job IOPS: how the system "
           "scales over two CPUs (2.00 would be perfect; compare with "
           "dm-linear's); CPU per write: the busy time of both CPUs over "
           "the writes; CPUs busy: that busy time over both CPUs' time.\n"
           % (runtime, cache_mb))
    for title, text, tab in (
            ("CPU cost: RAM disks", one, cpu_md(s.get("cpu") or {})),
            ("CPU cost: two writers on two CPUs", two,
             cpu2_md(s.get("cpu2") or {}))):
        if tab:
            parts += ["%s# %s\n" % (h, title), text, tab + "\n"]


def perf_md(cpu):
    """Where the CPU goes (bench.py --perf): per system, busy time by kind
    of work (share, and µs of a write from its CPU per write), then the
    symbols with the most self time."""
    systems_with = [s for s in _order(cpu, systems.SYSTEM_NAMES)
                    if cpu[s].get("perf")]
    if not systems_with:
        return ""
    kinds = [k for k, _ in PERF_KINDS if k != "idle"]
    rows = []
    for k in kinds:
        if not any(cpu[s]["perf"]["kinds"].get(k) for s in systems_with):
            continue
        row = [k]
        for s in systems_with:
            pct = cpu[s]["perf"]["kinds"].get(k, 0.0)
            us = cpu[s].get("cpu_us_per_write")
            row.append("%.1f%% (%s)" % (pct, _f(us * pct / 100 if us else
                                                 None, "%.1f µs")))
        rows.append(row)
    parts = [table(["kind of work"] + [_label(s) for s in systems_with],
                   rows)]
    for s in systems_with:
        top = cpu[s]["perf"]["top"][:15]
        busy = cpu[s]["perf"]["busy_pct"]
        us = cpu[s].get("cpu_us_per_write")
        parts.append("\n%s, the symbols with the most self time:\n" %
                     _label(s))
        parts.append(table(["share of busy", "µs of a write", "module",
                            "symbol", "kind"],
                           [["%.1f%%" % (pct * 100 / busy),
                             _f(us * pct / busy if us else None, "%.1f"),
                             dso, sym, kind]
                            for pct, dso, sym, kind in top]))
        under = cpu[s]["perf"].get("under")
        if under:
            parts.append("\n%s, its own functions by the time under them "
                         "(callees included):\n" % _label(s))
            parts.append(table(["share of busy", "µs of a write",
                                "function"],
                               [["%.1f%%" % pct,
                                 _f(us * pct / 100 if us else None, "%.1f"),
                                 sym] for pct, sym in under]))
    return "\n".join(parts)


def flush_md(fl):
    rows = []
    for sname in _order(fl, systems.SYSTEM_NAMES):
        x = fl[sname]

        def cell(m):
            return "%s (%s)" % (_f(x.get(m), "%.0f"), ", ".join(
                "%.0f" % v for v in x.get(m + "_rounds") or []))
        rows.append([_label(sname), cell("plain"), cell("fua"),
                     _f(x.get("fua_x_plain")),
                     _f(x.get("fua_x_writecache_fua")),
                     _ms(x.get("fua_p99_ms")), _ms(x.get("fua_max_ms")),
                     _f(x.get("fua_cache_per_user"), "%.2f")])
    if not rows:
        return ""
    return table(["system", "plain IOPS (rounds)", "FUA IOPS (rounds)",
                  "FUA / plain", "FUA × dm-writecache's", "FUA p99 (ms)",
                  "FUA max (ms)", "cache B / user B (FUA)"], rows)


def steadiness_table(res):
    """One row per closed run (rate-limited ones too): how long it ran, the
    window, stability, occupancy, turnover and the verdict of the
    steady-state rule."""
    rows = []
    for r in _ok(res["runs"], "closed") + _ok(res["runs"], "rate"):
        rows.append([
            "`%s`" % r["id"], _f(r.get("run_s"), "%.0f"),
            "%s" % (r.get("stop") or "?"),
            "%.0f–%.0f" % tuple(r["window"]), _f(r["iops"], "%.0f"),
            "%s / %s" % (_f(r.get("iops_first_half"), "%.0f"),
                         _f(r.get("iops_second_half"), "%.0f")),
            "%s (%s)" % (
                _f(None if r.get("half_change") is None else
                   r["half_change"] * 100, "%+.0f%%"),
                _f(None if r.get("half_tolerance") is None else
                   r["half_tolerance"] * 100, "±%.0f%%")),
            _f(r.get("cv"), "%.2f"),
            _f(None if r.get("dirty_frac_mean") is None else
               r["dirty_frac_mean"] * 100, "%.0f%%"),
            _f(None if r.get("dirty_drift") is None else
               r["dirty_drift"] * 100, "%+.1f%%"),
            _f(r.get("turnover"), "%.2f"),
            "%s (%s–)" % (_f(r.get("iops_since_turnover"), "%.0f"),
                          _f(r.get("turnover_s"), "%.0f")),
            "–" if r.get("iops_cycles") is None else "%.0f (%d, %.0f–%.0f)" % (
                r["iops_cycles"], r["cycles"], r["cycles_span"][0],
                r["cycles_span"][1]),
            "yes" if r.get("steady") else
            "**no**: " + "; ".join(r.get("not_steady_because") or ["?"])])
    if not rows:
        return ""
    return table(["run", "ran (s)", "stopped by", "window (s)", "IOPS",
                  "halves", "change (allowed)", "CV (1 s)", "dirty",
                  "dirty drift", "turnover", "IOPS since turnover (s)",
                  "IOPS over whole cycles (cycles, s)", "steady"], rows,
                 ["l", "r", "l", "r", "r", "r", "r", "r", "r", "r", "r",
                  "r", "r", "l"])


def destage_sweep_table(dsweep, wl):
    """Modelled destage rate (workload writes per modelled second) against
    the dirty-set size for one workload, with the oracle's."""
    t = dsweep.get(wl)
    if not t or len(t) < 2:
        return ""
    sizes = sorted(t, key=int)
    syss = _order({s for n in sizes for s in t[n]["systems"]},
                  systems.SYSTEM_NAMES)
    rows = []
    for s in syss:
        row = [_label(s)]
        for n in sizes:
            x = t[n]["systems"].get(s)
            row.append("–" if not x else "%.0f (%s×)" % (
                x["writes_per_s"] or 0, _f(x["x_oracle"])))
        rows.append(row)
    rows.append(["oracle"] + ["%.0f" % (t[n]["oracle_writes_per_s"] or 0)
                              for n in sizes])
    return table(["system"] + ["%s MiB" % _mib(int(n)) for n in sizes], rows)


def _mib(blocks):
    v = blocks * systems.BLOCK / MIB
    return "%d" % v if v == int(v) else "%.1f" % v


def targets_table(tg):
    rows = [[t["name"], _f(t["value"], "%.3f"), t["target"],
             ("met" if t["met"] else "**missed**") +
             (" (%s)" % t["detail"] if t.get("detail") else "")] for t in tg]
    return table(["target", "value", "wanted", ""], rows, ["l", "r", "l", "l"])


def failures(res):
    out = ""
    bad = [r for r in res["runs"] if not r["ok"]]
    if bad:
        out += "Failed runs:\n\n" + "\n".join(
            "* `%s`: %s" % (r["id"], r["error"]) for r in bad) + "\n\n"
    warn = [r for r in res["runs"] if r.get("kernel_warning")]
    if warn:
        out += ("Runs that finished while the kernel reported a problem "
                "(figures kept):\n\n" + "\n".join(
                    "* `%s`: %s" % (r["id"], r["kernel_warning"])
                    for r in warn) + "\n")
    return out


def markdown(res, plots=(), plot_prefix="plots/", heading="#"):
    """The report (tables of one run) as Markdown."""
    meta = res["meta"]
    s = res["summary"]
    p = meta["profile"]
    h = heading
    parts = []
    parts.append("%s dm-wow bench: %s run of %s\n" % (
        h, meta.get("profile_name", "?"), meta.get("started", "?")[:10]))
    host = meta.get("host", {})
    git = meta.get("git", {})
    parts.append(
        "* command: `%s`%s\n* started %s, finished %s (%s s)\n"
        "* machine: %s CPUs (%s), %.0f GiB, host kernel %s; guest: QEMU TCG, "
        "-smp 2 -m 2G, Debian 6.1 kernel\n* dm-wow commit %s%s\n"
        "* all numbers come from TCG with modelled (destage) or emulated "
        "(closed loop, time scale %g) disks: compare ratios, not absolute "
        "values\n" % (
            meta.get("command", "?"),
            " (`make %s`)" % meta["make_target"] if meta.get("make_target")
            else "",
            meta.get("started", "?"), meta.get("finished", "?"),
            meta.get("elapsed_s", "?"), host.get("cpus", "?"),
            host.get("cpu", "?"), host.get("mem_bytes", 0) / (1 << 30),
            host.get("host_kernel", "?"), (git.get("commit") or "?")[:12],
            " (dm-wow/ modified)" if git.get("dirty") else "",
            p.get("timescale", 0)))
    sessions = meta.get("sessions") or []
    if len(sessions) > 1:
        parts.append("* run in %d sessions (`scripts/bench.py --resume`, the "
                     "same module, guest scripts and jobs): %s\n" % (
                         len(sessions), "; ".join(
                             "%s to %s" % (x.get("started", "?"),
                                           x.get("finished", "?"))
                             for x in sessions)))
    if meta.get("wow_opts"):
        parts.append("* closed-loop dm-wow runs with extra table options "
                     "`%s`\n" % meta["wow_opts"])
    if (meta.get("module") or {}).get("built") is False:
        parts.append("* dm-wow.ko as it was (`--no-build`), built %s: it "
                     "may not match the commit\n" % meta["module"]["mtime"])
    parts.append("%s# Modelled destage, uniform random writes (headline)\n" % h)
    parts.append(
        "%d random 4 KiB writes over an %d GiB origin loaded into a %d MiB "
        "cache with destage held back, then destaged at full rate; the "
        "origin's blktrace is charged with the 7200 rpm model.  \"× oracle\": "
        "modelled time over the oracle's (the same writes sorted by LBA and "
        "merged); \"× dm-wow\": over dm-wow (wow)'s.  Cache WA: write "
        "amplification of the cache disk's trace under the erase-block "
        "model (flash-internal: a non-append write costs its erase block).  "
        "Log WA (dm-wow only): the blocks dm-wow's log wrote to the cache "
        "disk by its own count (status `log_blocks`: record headers, user "
        "data and cleaning's copies) over the blocks fio wrote, load and "
        "destage.\n" % (p["destage_blocks"], p["origin_bytes"] >> 30,
                        p["destage_cache_mb"]))
    parts.append(destage_headline_table(s["destage"]) + "\n")
    parts.append("%s# Modelled destage, every workload\n" % h)
    parts.append("Modelled origin time · ratio to dm-wow (wow) · ratio to "
                 "the workload's oracle (lower is better).\n")
    parts.append(destage_matrix(s["destage"]) + "\n")
    parts.append("%s# Cache write amplification (violations)\n" % h)
    parts.append("Erase-block model on the cache disk's trace (load and "
                 "destage): dm-wow with 1 MiB erase blocks from erase block 1,"
                 " bcache with its bucket size from bucket 1, dm-writecache "
                 "and dm-cache with 1 MiB erase blocks over the whole disk "
                 "(their metadata included).  In brackets: writes that are "
                 "not appends, misaligned, or rewrite a segment early.\n")
    parts.append(wa_matrix(s["destage"]) + "\n")
    if any(len(v) > 1 for v in s.get("destage_sweep", {}).values()):
        parts.append("%s# Modelled destage rate against the dirty-set size\n"
                     % h)
        parts.append(
            "The same measurement over a sweep of dirty-set sizes (the "
            "writes loaded, in MiB of 4 KiB blocks, into a %d MiB cache): "
            "the workload's writes per second of modelled origin time, "
            "the rate the destage order could sustain, and in brackets the "
            "time over the oracle's.  A larger dirty set is a larger cache "
            "in a closed loop: it gives a sorting destager shorter "
            "seeks.\n" % p["destage_cache_mb"])
        for w in _order(s["destage_sweep"], systems.WORKLOAD_NAMES):
            t = destage_sweep_table(s["destage_sweep"], w)
            if t:
                parts.append("**%s**\n\n%s\n" % (_wl_label(w), t))
    parts.append("%s# Closed-loop throughput on the live emulated HDD\n" % h)
    parts.append(
        "Sustained IOPS (reads + writes) over the last %d s of each run, in "
        "steady state; iodepth 16; the origin is scripts/hdd-nbdkit.py at "
        "time scale %g.  Every run follows one rule (the method above): "
        "fio runs until the cache is full and the origin has been written "
        "%d%% of the cache's dirty data since (the destager has been "
        "through it once), then until the last window looks steady; † "
        "marks a run the steady-state check below did not pass.\n" % (
            p["closed_window_s"], p["timescale"],
            p.get("closed_turnover_pct", 100)))
    parts.append(closed_matrix(s["closed"]) + "\n")
    parts.append(
        "Sustained IOPS (the method above: over whole fill/drain cycles "
        "for a run whose dirty data swings by %d%% of the cache or more, "
        "else since the turnover, else the last window):\n" % (
            CYCLE_SWING * 100))
    parts.append(closed_sustained_matrix(s["closed"]) + "\n")
    sweep = closed_sweep_table(s["closed"])
    if sweep:
        parts.append("Uniform random writes, IOPS against the cache size:\n")
        parts.append(sweep + "\n")
    for w in _order(s["closed"], systems.WORKLOAD_NAMES):
        if w == systems.HEADLINE_WORKLOAD:
            continue
        sweep = closed_sweep_table(s["closed"], w)
        if sweep:
            parts.append("%s, sustained IOPS against the cache size:\n" %
                         _wl_label(w))
            parts.append(sweep + "\n")
    rw = policies_table(s["closed"], s.get("policies", {}))
    if rw:
        parts.append("%s# wow against cscan and lrw\n" % h)
        parts.append(
            "Every workload and cache size where dm-wow's three policies "
            "ran side by side; the hot set (%d%% of the writes to the "
            "first %d MiB of the origin) is what wow's recency bits are "
            "for: at caches of %g to %g times less than the hot set, "
            "blocks are rewritten while cached.  Sustained IOPS († as "
            "above), wow's over cscan's and lrw's (sustained, and of the "
            "last windows), and the share of wow's writes that found "
            "their block cached (status write_hits over write_hits + "
            "write_misses, over the sustained span).\n" % (
                systems.HOT_PCT, systems.HOT_MB, 1, 4))
        parts.append(rw + "\n")
    lt = latency_table(s["closed"])
    if lt:
        parts.append("%s# Closed-loop write latency and log writes\n" % h)
        parts.append(
            "Per saturated closed run: the sustained IOPS (how it was "
            "measured, † as above) and its ratio to dm-writecache's in the "
            "same workload and cache size, the coefficient of variation of "
            "the last window's one-second rates, and the write completion "
            "latency (fio's clat, ms) over the span the sustained IOPS is "
            "measured on (whole cycles, else from the turnover to the "
            "end, else the window: the I/Os and seconds in brackets), from "
            "fio's one-second latency histograms (bins within 1%); "
            "\"max, whole run\": fio's exact maximum over the whole run, "
            "the fill included.  Log WA (dm-wow): the blocks its log wrote "
            "to the cache disk (status `log_blocks`, sampled once a "
            "second) over the blocks written to it, over the same span; "
            "copied / write: the blocks cleaning copied forward "
            "(`copied_blocks`) over the same.  Not the erase-block model's "
            "cache WA of the destage tables.\n")
        parts.append(lt + "\n")
    rt = rate_table(s.get("rate", {}))
    if rt:
        parts.append("%s# Rate-limited closed loop: write latency below "
                     "saturation\n" % h)
        parts.append(
            "The same uniform random 4 KiB writes at iodepth 16, at a fixed "
            "rate (fio `rate_iops`): \"half\", half the sustained IOPS "
            "the system's saturated run at the same cache size measured "
            "earlier in the bench run; \"fixed\", the profile's %g IOPS "
            "at time scale 1 over the time scale (`--rate-iops`, or a "
            "system whose saturated run is missing).  The same rule (full, "
            "turned over, a steady window of %d s), for dm-wow, "
            "dm-writecache and the cache disk alone at each of their rates "
            "(a dm-linear slice of it of the cache size: the latency "
            "floor; p99 × cache disk's compares with it at the same "
            "rate).  IOPS: sustained (as above); latency as in the table "
            "above.  fio counts a write's latency from its submission: a "
            "write it could not submit while 16 were in flight waits "
            "uncounted, so a stall shows in the 16 writes it holds and in "
            "the IOPS, not in every write behind it.\n" % (
                p.get("rate_iops", 0), p.get("rate_window_s", 0)))
        parts.append(rt + "\n")
    st = steadiness_table(res)
    if st:
        parts.append("%s# Closed-loop steady state\n" % h)
        parts.append(
            "Per run: how long fio ran and what stopped it (`steady`: the "
            "rule; `runtime`: the cap, the rule never stopped it), the "
            "window, its IOPS, the IOPS of its two halves and the "
            "coefficient of variation of its one-second rates, the mean "
            "dirty data (%% of the cache) and how much it moved during the "
            "window (a least-squares fit), and the turnover: origin writes "
            "between the cache "
            "first being full and the window, over the dirty data.  Steady "
            "means halves within %d%% (plus the largest burst fio logged "
            "in the window, over a half's I/Os: the allowance in brackets), "
            "dirty data within %d%% of the cache, and (for a cache holding "
            "dirty data) turnover >= %.1f.\n" % (
                STEADY_HALF_TOL * 100, STEADY_DIRTY_DRIFT * 100,
                STEADY_TURNOVER))
        parts.append(st + "\n")
    cpu_section(parts, h, p, s)
    pt = perf_md(s.get("cpu") or {})
    if pt:
        parts.append("%s# Where the CPU goes (perf)\n" % h)
        parts.append(
            "perf in the VM sampled every CPU at 499 Hz (the software "
            "clock: TCG has no PMU) through each system's first "
            "one-job CPU-cost round (bench.py --perf; the two-job runs "
            "keep their own profiles in their run directories, not "
            "shown here).  Busy time, the idle task's "
            "samples left out, by the kind of work of the function each "
            "sample was in (its own time, not its callees': "
            "PERF_KINDS in scripts/wowbench/report.py sorts them), and "
            "as µs of a write from the CPU per write above.  perf's own "
            "sampling costs CPU too, in every system alike.  Each run "
            "keeps perf-self.txt, perf-children.txt (time under each "
            "function) and perf-script.txt.gz (every sample's stack).\n")
        parts.append(pt + "\n")
    ft = flush_md(s.get("flush") or {})
    if ft:
        parts.append("%s# Flush cost: every write FUA\n" % h)
        parts.append(
            "%d 4 KiB random writes (at most %d s) at iodepth 32 on the "
            "file-backed disks, plain and every one FUA (fio `sync=1`: "
            "O_SYNC with direct I/O), into a %d MiB cache they fill a "
            "quarter at most (no destage waited for): dm-wow, "
            "dm-writecache and the cache disk alone (a slice of it), %d "
            "round(s) of each.  IOPS: the mean of the rounds; FUA p99 and "
            "max: fio's write latency over the FUA run.\n" % (
                p.get("flush_writes", 0), p.get("flush_runtime_s", 0),
                p.get("flush_cache_mb", 0), p.get("flush_rounds", 0)))
        parts.append(ft + "\n")
    rm = raid_md(s.get("raid") or {})
    if rm:
        parts.append("%s# md RAID origins\n" % h)
        parts.append(
            "Closed loop over md arrays of live %s rpm disks (members of "
            "%d GiB: RAID-5 4+1, RAID-10 2+2, 64 KiB chunks), cache sizes "
            "as listed; \"full\": the workload over the whole array, "
            "\"N MiB\": over its first N MiB.  Each cell: the mean "
            "sustained IOPS over the repeats [lowest–highest] (runs; † "
            "when one was not steady).  wow / peer: the ratio of the means "
            "[wow's lowest over the peer's highest – the other way]; \"= "
            "\" marks one whose spreads overlap (not claimed).  An "
            "\"open\" case ran open loop (the log's arrival times "
            "honoured) at the BSUs of its rows: its cells add the mean "
            "p50 / p99 response time of every I/O.\n" % (
                "10K" if p.get("raid_disk", "10k") == "10k" else
                p.get("raid_disk"), p.get("raid_member_bytes", 0) >> 30))
        parts.append(rm + "\n")
    parts.append("%s# Targets (reported, not asserted)\n" % h)
    parts.append(
        "Issue 5's, then issue 16's, then issue 35's (the md RAID cases: "
        "wow's mean over the peer's, with the ratio's range over the "
        "repeats), then issue 37's; a missed line says how far off it "
        "is (\"short\" of a >= target, \"over\" a <= one) or why.\n")
    parts.append(targets_table(s["targets"]) + "\n")
    if plots:
        parts.append("%s# Plots\n" % h)
        for name, title in plots:
            parts.append("![%s](%s%s)\n" % (title, plot_prefix, name))
    f = failures(res)
    if f:
        parts.append(f)
    k = kernel_problems(meta)
    if k:
        parts.append("%s# Kernel problems seen\n" % h)
        parts.append(k)
    return "\n".join(parts)


def kernel_problems(meta, lines=14):
    """The crashes and failures the VM console showed (a crashed run is
    tried once more in a new boot), with the start of each report."""
    probs = meta.get("kernel_problems") or []
    out = []
    for p in probs:
        out.append("* `%s` (boot %s): %s" % (p["run"], p.get("boot", "?"),
                                              p["reason"]))
        con = [c for c in p.get("console", []) if c.strip()][:lines]
        if con:
            out.append("\n  ```\n" + "\n".join("  " + c for c in con) +
                       "\n  ```")
    return "\n".join(out) + "\n" if out else ""


def write_outputs(out_dir, res):
    """results.json, plots/*.png and report.md in ``out_dir``, and each
    run's figures as runs/<run id>/result.json."""
    for r in res["runs"]:
        d = os.path.join(out_dir, "runs", r["id"])
        if os.path.isdir(d):
            with open(os.path.join(d, "result.json"), "w") as f:
                json.dump(r, f, indent=1, sort_keys=True)
    plots = []
    try:
        from . import plots as plotmod
        plots = plotmod.make_all(res, os.path.join(out_dir, "plots"))
    except ImportError as e:  # no matplotlib: tables only
        res.setdefault("notes", []).append("no plots: %s" % e)
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write(markdown(res, plots))
    return plots


DOC_INTRO = """\
# dm-wow benchmarks

How dm-wow's destage order compares with Linux's write-back caches over the
same emulated disks.  The bench is `scripts/bench.py`; it boots the test VM
(tests/vm/wowvm.py), runs the systems on the workloads, and leaves
everything in `results/bench/<time>/` (results.json with every figure,
runs/<run>/result.json with one run's, report.md, plots, the guest's raw
outputs and traces).  `scripts/bench.py --publish results/bench/<time>`
rewrites this page from one run.

## Profiles

* **`make bench`** (the run to publish this page from): every system on
  every workload.  Modelled destage of uniform, zipf, SPC-1-like and
  sequential writes at dirty sets of 8, 32 and 64 MiB; closed loop for
  every workload at a 16 MiB cache, for uniform random writes at 8, 16
  and 32 MiB (and 128 MiB for dm-wow and dm-writecache), the hot set at
  6, 12, 24, 48 and 96 MiB (8x to 0.5x the cache) and the SPC-1-like mix at
  8, 16 and 32 MiB for dm-wow's three policies and dm-writecache; the
  rate-limited closed loop at 16 MiB; three alternated rounds of the CPU
  cost, each of one fio job and of two jobs on the two vCPUs, two of the
  flush cost.  Measured at 109 minutes (6,535 s, 186 runs; the nine
  two-job CPU-cost runs, about half a minute each, came later: 195 runs
  now) on an otherwise idle 2-core machine under TCG on 2026-11-27; the
  estimate from the parts' caps is 2 h 35 min, but most closed runs stop
  early on the steady rule (16 MiB runs about 30 to 80 s, 128 MiB ones 3
  to 8 minutes; the rate-limited ones in a second boot).
* **`make bench-quick`** (one point of each, estimated at about 30
  minutes, 33 runs, when the machine is not shared): modelled destage of
  uniform random writes (an 8 MiB dirty set) for every system; the closed
  loop at a 16 MiB cache for uniform random writes (dm-wow's three
  policies, dm-writecache, the raw disk), the hot set (the three policies
  and dm-writecache) and the SPC-1-like mix (wow and dm-writecache); the
  cache-sensitive SPC-1-like point of `make bench-raid` (RAID-5, wow and
  dm-writecache, once); the rate-limited closed loop at 16 MiB; one round
  of the CPU (one fio job) and flush costs.  It leaves out the other
  workloads, the size sweeps, dm-cache and bcache in the closed loop, and
  the two-job CPU-cost runs.
* **`make bench-raid`** (the WOW paper's experiments, about 115 minutes
  estimated, 111 runs; the caps add up to 4 h 19 min, but closed runs
  stop early on the steady rule: the smoke runs took about a minute
  each): closed loop over md RAID-5 (4+1) and RAID-10 (2+2) arrays of
  live 10K rpm disks, SPC-1-like with the hierarchical reuse random walk
  cache-insensitive and cache-sensitive, uniform random writes over a
  cache-size sweep, and the cache-sensitive point open loop at two
  offered loads, every point three times; see "md RAID origins" below.

`scripts/bench.py --quick|--full|--raid --dry-run` lists the runs and the
estimate.  `--systems`, `--workloads`, `--measurements` and `--only REGEX` run a
subset of either profile (the CPU, flush and rate-limited runs go with
the uniform workload).  `--hdd-trace` logs every request the live HDD
serves (`hdd-trace.txt` in the run dir: start on the disk's clock, kind,
sector, sectors, modelled seconds), to see how busy the disk was and in
what order it was written.  A run a session's end (or a kill) cut short
goes on with `scripts/bench.py --resume results/bench/<time>` (add
`--dry-run` to list what is left): the runs with a result are kept
(judged from their exit status and the console, as a finished boot
judges them), the rest run in new boots, and the report names the
sessions; it refuses when dm-wow/, userspace/, tests/vm/,
scripts/bench-guest/ or the jobs (scripts/wowbench/systems.py) differ
from the run's start, since its runs would no longer compare.

## What is measured

* **Systems.** dm-wow with policy `wow`, `cscan` and `lrw`;
  dm-writecache (ssd mode, 4 KiB blocks); dm-cache (writeback, smq,
  32 KiB blocks, its minimum; metadata on a 16 MiB slice of the cache disk);
  bcache (writeback, 4 KiB blocks, buckets of 1 MiB or less as the kernel
  wants 1024 of them, `sequential_cutoff 0`, congestion bypass off); the
  raw disk; in the rate-limited and flush runs only, the cache disk
  alone (`ssd`: fio on a dm-linear slice of the cache disk of the cache
  size, the latency floor); in the CPU cost only, dm-linear over the
  origin.  Every cache gets the same
  cache size as a dm-linear slice of one cache disk; the origin is marked
  rotational with mq-deadline, as a real disk would be.
* **Workloads** (fio, scripts/wowbench/systems.py): uniform random 4 KiB
  writes; zipf(1.2) random writes (a few blocks rewritten very often);
  one sequential stream; a **hot set**: 90% of the writes uniform over the
  first 48 MiB of the origin, the rest uniform over the rest (fio
  `zoned_abs`), so that as the cache size is swept from 6 to 96 MiB the
  hot set goes from 8x to 0.5x the cache and blocks are rewritten while
  cached, what WOW's recency bits are for; and an **SPC-1-like mix**
  built from the structure of the public SPC-1 specification (Storage
  Performance Council, "SPC Benchmark 1 Official Specification",
  storageperformance.org, its workload chapter; the WOW paper, Gill and
  Modha, FAST 2005, section 5, measured with the same benchmark): three
  application storage units of 45%, 45% and 10% of the capacity (data
  store, user store, log) and eight streams, each with its share of all
  I/Os, its read fraction and its pattern: on the first ASU uniform
  random (0.035 of the I/Os, half reads), two hot-spot streams (0.281 and
  0.210, half reads) and a sequential read (0.070); on the second uniform
  random (0.018, 30% reads), a hot spot (0.070, 30% reads) and a
  sequential read (0.035); on the third a sequential write (0.281).  So
  about 40% reads and 40% sequential I/O.  Our rendering, not the
  benchmark: one fio job per stream over its ASU; the spec's
  hierarchical-reuse random walk becomes fio's zipf(1.2) over the ASU;
  every transfer is 4 KiB; and since the closed loop keeps every job's
  queue full rather than issuing each stream at its rate, the shares set
  the streams' queue depths (16 in all, at least one each), so the mix
  fio does follows the depths and each stream's latency (fio's JSON has
  it).
* **Modelled destage** (deterministic, the headline).  The dirty set is
  loaded with destage held back (dm-wow: `low_watermark 99 high_watermark
  100`; dm-writecache: watermarks 100/99; bcache: `writeback_running 0`;
  dm-cache has no such knob, what it writes meanwhile is counted), then
  everything is destaged at full rate (dm-wow: `cleaner on`; dm-writecache:
  the `cleaner` message; dm-cache: reload with the `cleaner` policy; bcache:
  `writeback_delay 0`, `writeback_percent 0`, the largest `writeback_rate`,
  `writeback_running 1`).  Both disks are blktraced from the load to the
  end of destage; the origin's writes are charged with the 7200 rpm model of
  scripts/wowbench/hddmodel.py and compared with the oracle, the same
  writes sorted by LBA and merged (scripts/wowbench/analysis.py).  The
  workload's oracle is the oracle of the raw disk's run (exactly the
  workload's writes).  The cache disk's trace gives alignment violations
  and write amplification under a simple erase-block model.  The dirty set
  (the writes loaded, into a 128 MiB cache) is swept over sizes: the
  workload's writes per second of modelled origin time against the
  dirty-set size is the WOW paper's throughput-against-cache-size figure
  for the modelled disk (a larger dirty set gives a sorting destager
  shorter seeks).
* **Closed-loop throughput.**  The origin is scripts/hdd-nbdkit.py, a
  position-aware disk that sleeps for the modelled time times a time
  scale, attached to QEMU over NBD.  It serves one request at a time on a
  disk clock: a queued request starts when the one before it is done, so
  the plugin's own overhead is not charged as disk time.  fio writes at iodepth 16, and the
  IOPS of the last window of the run is reported, once the cache is in
  steady state.  One rule decides when, the same for every system
  (scripts/bench-guest/benchlib.sh, `closed_watch`): the guest samples the
  cache's dirty data and the origin's written sectors once a second; the
  cache is *full* once its dirty data grew by at most 1% of the cache over
  five samples; it has *turned over* once the origin has been written, since
  then, as much as the largest dirty amount seen (its destager has been
  through its dirty data once); fio then runs until the last window looks
  steady by the check below (computed in the guest on its own samples, the
  dirty data and the device's completed writes, with a margin: 4% and
  15%), and stops.  A cache that
  keeps nothing dirty (dm-cache's smq passes first writes through) and the
  raw disk are full at once.  fio's runtime caps a run that never gets
  there (the turnover at 60 writes/s, then three windows).  The host checks
  each run from the same samples and fio's log (scripts/wowbench/report.py,
  `steady_state`) and reports per run: the IOPS of the window's two halves
  and the coefficient of variation of its one-second rates, the mean dirty
  data and how far it moved during the window (a least-squares fit), and
  the turnover before the window (origin writes include writes a cache
  passes through).
  A run is *steady* when the halves differ by at most 20% (plus the largest
  burst fio logged in the window over a half's I/Os: a system that
  completes writes in bursts seconds apart cannot be told apart any
  finer), the dirty data moved by at most 5% of the cache, and a cache
  holding dirty data turned over (0.9 of its dirty data written back before
  the window; the guest waits for 1.0).  Tables mark the other runs with †.
  The raw disk is run once per workload.
  A cache that fills and drains in cycles (dm-wow frees a log segment only
  once its sweep has passed all the segment's blocks) completes writes in
  bursts a cycle apart, and a fixed window holds one burst more or less
  depending on where it falls.  So each run also gets a *sustained* IOPS:
  for a run whose dirty data swings by a quarter of the cache or more after
  the turnover, over whole cycles (from the first fill after the turnover
  to the last, the device's completed writes from the guest's samples);
  otherwise over everything since the turnover, or the last window for a
  cache with nothing dirty.  The targets and the cache-size plot use it.
  fio also logs a histogram of its writes' completion latency a second
  (`--write_hist_log`, bins within 1%; the last bin starts at 17 s): each
  run reports p50, p99, p99.9 and the maximum over the same span as its
  sustained IOPS, and fio's exact maximum over the whole run.  For dm-wow
  the guest also samples `dmsetup status` once a second: its *log WA* is
  the blocks its log wrote to the cache disk (`log_blocks`: record
  headers, data and cleaning's copies) over the blocks written to the
  device, over the same span (in the destage tables, over the whole run).
  It is dm-wow's own count of its writes; the *cache WA* of the destage
  tables is the erase-block model's charge for the cache disk's trace.
  Per second, the same histograms give the latency over time (p99 and
  the maximum of each second: the plot of dm-wow against dm-writecache).
* **Rate-limited closed loop.**  The uniform writes at a fixed rate (fio
  `rate_iops`): half the sustained IOPS the system's own saturated run
  at the same cache size measured, earlier in the same bench run (so
  these runs boot second), for dm-wow and dm-writecache, and the cache
  disk alone at each of their rates; by the same rule as the closed loop
  with a 60 s window: write latency when the cache is not saturated, its
  p99 over the cache disk's own at the same rate.  `--rate-iops N` runs
  every system at one fixed rate instead (N at time scale 1, divided by
  the time scale), as does a system whose saturated run failed.  fio
  counts a write's latency from its submission, so one it could not
  submit while 16 were in flight waits uncounted.
* **CPU cost.**  Two RAM disks (brd, 512 MiB each) in the guest: the
  origin and, a 128 MiB slice of the other, the cache; 4 KiB random
  writes at iodepth 32 over the whole origin for 15 s (10 s in the quick
  profile; 2 s of ramp not counted) through dm-linear (the origin alone),
  dm-wow and dm-writecache, in rounds that alternate the three (three
  rounds in the full profile), so a slow spell of the shared machine
  falls on all of them.  With nothing slow underneath, IOPS is what the
  (emulated) CPU allows, destage to the RAM origin included once the
  cache is full; reported as a ratio to dm-linear's, with the guest's busy
  CPU time (/proc/stat) per write.  In the full profile each round also
  runs the three with **two writers on the two vCPUs** (issue 37's
  scaling): fio `numjobs=2` (reported as one group), each job at iodepth
  32, pinned to its own vCPU (`cpus_allowed=0-1`,
  `cpus_allowed_policy=split`) and writing its own half of the origin
  (`offset_increment`), so they never write the same blocks; runs
  `p-cpu2j-<round>-<system>` (the one-job runs keep
  `p-cpu-<round>-<system>`).  The report's "CPU cost: two writers on two
  CPUs" table gives the two-job IOPS, its ratios to dm-linear's and
  dm-writecache's with two jobs, the CPU per write of both CPUs, their
  busy share, and each system's scaling: its two-job IOPS over its own
  one-job IOPS (2.0 would be perfect; dm-linear's is the reference).  The
  quick profile runs one job only; `scripts/bench.py --full
  --measurements cpu --only '^p-cpu2j-1-'` runs one round of the two-job
  runs alone.  With `--perf` (e.g.
  `scripts/bench.py --full --measurements cpu --perf`) each of those runs
  also records a profile: perf in the VM (the host's `linux-perf`, copied
  in with its libraries) samples both CPUs at 499 Hz with call chains
  through the fio run, and the report's "Where the CPU goes" section sorts
  each system's busy time (the idle task left out) by kind of work (data
  copies, checksums, locks, allocation, dm-wow's own code, the block
  layer, ...: `PERF_KINDS` in scripts/wowbench/report.py), in µs of a
  write, with the symbols that have the most self time and the time under
  each of dm-wow's functions.  Each run keeps `perf-self.txt`,
  `perf-children.txt`, `perf-script.txt.gz` and `perf-folded.txt` (folded
  stacks, the input of flame graph tools).  TCG has no PMU, so the
  samples come from the software clock: time spent with interrupts off
  is charged to the function that turns them back on
  (`_raw_spin_unlock_irq` stands for the critical sections before it).
  The report's perf section shows the one-job runs' profiles; the
  two-job runs keep theirs in their run directories.
* **Flush cost.**  32,768 4 KiB random writes (at most 30 s) at iodepth
  32 on the file-backed disks (origin and cache disk), plain and with
  every write FUA (fio `sync=1`: O_SYNC with direct I/O), into a 512 MiB
  cache they fill a quarter at most (no destage is waited for): dm-wow,
  dm-writecache and the cache disk alone, alternated, two rounds in the
  full profile.  Reported: each system's FUA IOPS over its plain IOPS,
  dm-wow's over dm-writecache's, FUA write latency.  The VM's disk images
  are opened with QEMU's `cache=unsafe`, which drops flushes: what this
  measures is the cost of FUA in the guest (the flushes and waits each
  system issues for it), not a real device's flush latency.
* **Cleaning cost.**  For every run, the bytes written to the cache
  device per byte the user wrote: the sectors written to the cache's
  dm-linear slices (the cache slice, and dm-cache's metadata slice), from
  their /sys/block stat, over the sectors written to the device fio
  writes; closed and rate-limited runs over the sustained span (sampled
  once a second with the dirty data), the others over the whole run.  It
  counts data, metadata, record headers and cleaning's copies alike, for
  every system (the cache disk alone writes 1.0).
* **Targets** (issues 5, 16 and 37) are reported, not asserted: each line
  says how far off a missed one is.

The numbers come from QEMU/TCG (no KVM) on a 2-core machine shared with
other work, with modelled or emulated disks: absolute times mean little,
ratios measured in one run are what to compare.
"""


def publish(res, run_dir, doc_dir):
    """Documentation/benchmarks.md and Documentation/bench/*.png from the
    results of one run."""
    bench_dir = os.path.join(doc_dir, "bench")
    os.makedirs(bench_dir, exist_ok=True)
    plots = []
    src = os.path.join(run_dir, "plots")
    try:
        from . import plots as plotmod
        plots = plotmod.make_all(res, bench_dir)
    except ImportError:
        for name in sorted(os.listdir(src)) if os.path.isdir(src) else []:
            shutil.copy(os.path.join(src, name), bench_dir)
            plots.append((name, name))
    body = markdown(res, plots, plot_prefix="bench/", heading="##")
    body = re.sub(r"^## dm-wow bench: ", "## Results: ", body, count=1)
    path = os.path.join(doc_dir, "benchmarks.md")
    notes = NOTES_MARKER + "\n\n## Notes\n\n(none yet)\n"
    kept = ""
    try:
        with open(path) as f:
            old = f.read()
        if NOTES_MARKER in old:
            notes = old[old.index(NOTES_MARKER):]
        kept = hand_sections(old)
    except OSError:
        pass
    with open(path, "w") as f:
        f.write(DOC_INTRO + "\n" + kept + body.rstrip("\n") + "\n\n" +
                notes)


def hand_sections(page):
    """The "## " sections of an old page before its results that the
    intro does not write (measurements published by hand, such as the
    cache loads): a new publish keeps them, in their order.  (An intro
    section whose heading changed would be kept too: rename by hand.)"""
    head = page.split("\n## Results: ", 1)[0]
    ours = set(re.findall(r"^## .*$", DOC_INTRO, re.M))
    parts = re.split(r"(?m)^(?=## )", head)
    out = [x for x in parts if x.startswith("## ") and
           x.split("\n", 1)[0] not in ours]
    return "".join(x.rstrip("\n") + "\n\n" for x in out)


# Everything from this line on in Documentation/benchmarks.md is written by
# hand and kept when the page is published again.
NOTES_MARKER = ("<!-- Hand-written notes below: scripts/bench.py --publish "
                "keeps them. -->")
