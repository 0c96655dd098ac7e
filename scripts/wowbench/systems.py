"""What the bench runs: systems, fio workloads, profiles and the run plan.

Systems are the caches compared over the same emulated disks (the guest side
is scripts/bench-guest/benchlib.sh, which knows each by name):

  wow, cscan, lrw  dm-wow with that destage policy
  writecache       dm-writecache, ssd mode, 4 KiB blocks
  dmcache          dm-cache writeback with smq, 32 KiB blocks (its minimum)
  bcache           bcache writeback, 4 KiB blocks
  raw              no cache: the origin itself (a reference)
  ssd              no origin: the cache disk alone, a dm-linear slice of
                   the cache size (a reference, rate-limited runs only)

Workloads are fio jobs, rendered by :func:`fio_job` for the three
measurements:

  destage  a fixed amount of I/O (``blocks`` 4 KiB writes in all) loads the
           dirty set, which is then destaged and traced (modelled HDD time)
  closed   time-based, iodepth 16 in all, on the live emulated HDD
           (sustained IOPS over the last window of the run, once the cache
           is full and has been written back once: see benchlib.sh's
           closed_watch and report.steady_state), with fio's completion
           latency histograms
  rate     the closed loop at a fixed rate (fio rate_iops), by the same
           rule: write latency below saturation

Profiles (:data:`PROFILES`) fix the sizes, and :func:`plan` turns one into
the ordered list of runs.
"""

import re
from typing import NamedTuple

MIB = 1 << 20
BLOCK = 4096


class System(NamedTuple):
    name: str       # guest name (benchlib.sh)
    label: str      # for tables and plots
    family: str     # "dm-wow" or the peer's name
    cache: bool     # False for raw and ssd
    only: str = ""  # the one measurement it takes part in ("" = any)


SYSTEMS = [
    System("wow", "dm-wow (wow)", "dm-wow", True),
    System("cscan", "dm-wow (cscan)", "dm-wow", True),
    System("lrw", "dm-wow (lrw)", "dm-wow", True),
    System("writecache", "dm-writecache", "dm-writecache", True),
    System("dmcache", "dm-cache (smq)", "dm-cache", True),
    System("bcache", "bcache", "bcache", True),
    System("raw", "raw disk", "raw", False),
    System("ssd", "cache disk alone", "ssd", False, "rate"),
]
SYSTEM_NAMES = [s.name for s in SYSTEMS]
CACHE_SYSTEMS = [s.name for s in SYSTEMS if s.cache]
WOW_SYSTEMS = [s.name for s in SYSTEMS if s.family == "dm-wow"]
REFERENCE = "wow"


def system(name):
    for s in SYSTEMS:
        if s.name == name:
            return s
    raise KeyError(name)


# --------------------------------------------------------------------------
# Workloads


class Job(NamedTuple):
    """One fio job section.  ``share`` is its part of the writes (of the
    reads for a read job) in the destage measurement; ``iodepth`` its queue
    depth (the jobs of a workload add up to 16)."""
    name: str
    rw: str                   # randwrite, write, randread
    iodepth: int
    share: float = 1.0
    region: tuple = (0.0, 1.0)  # fraction of the origin: [start, end)
    dist: str = ""            # fio random_distribution, "" = uniform
    bs: int = BLOCK


class Workload(NamedTuple):
    name: str
    label: str
    description: str
    jobs: tuple
    reads: float = 0.0        # destage: reads issued, as a share of writes
    hot_x: int = 0            # > 0: the jobs write the first hot_x times
                              # the cache size of the origin (their region
                              # fractions are of that span)


WORKLOADS = [
    Workload("uniform", "uniform random",
             "4 KiB random writes, uniform over the whole origin",
             (Job("uniform", "randwrite", 16),)),
    Workload("zipf", "hot set (zipf)",
             "4 KiB random writes, zipf(1.2) over the whole origin: a hot set "
             "rewritten often",
             (Job("zipf", "randwrite", 16, dist="zipf:1.2"),)),
    Workload("spc1", "SPC-1-like mix",
             "SPC-1-like: 40% uniform random writes and 40% zipf(1.2) writes "
             "over the first 45% (ASU-1), uniform random reads (a quarter as "
             "many as the writes) over the next 45% (ASU-2), 20% sequential "
             "writes over the last 10% (ASU-3, a log)",
             (Job("asu1-rand", "randwrite", 4, 0.4, (0.0, 0.45)),
              Job("asu1-hot", "randwrite", 5, 0.4, (0.0, 0.45), "zipf:1.2"),
              Job("asu2-read", "randread", 4, 1.0, (0.45, 0.9)),
              Job("asu3-log", "write", 3, 0.2, (0.9, 1.0))),
             reads=0.25),
    Workload("seq", "sequential stream",
             "4 KiB sequential writes, one stream from 1/8 of the origin on",
             (Job("seq", "write", 16, region=(0.125, 1.0)),)),
]
WORKLOAD_NAMES = [w.name for w in WORKLOADS]
HEADLINE_WORKLOAD = "uniform"

# Rewrites (closed loop only): uniform random writes confined to a hot set
# of 1, 2 and 4 times the cache size, so blocks are rewritten while cached
# (what WOW's recency bits are for: wow against cscan and lrw).
REWRITE_WORKLOADS = [
    Workload("rewrite%dx" % x, "rewrites, hot set %d× the cache" % x,
             "4 KiB random writes, uniform over the first %d times the "
             "cache size of the origin" % x,
             (Job("uniform", "randwrite", 16),), hot_x=x)
    for x in (1, 2, 4)]
REWRITE_NAMES = [w.name for w in REWRITE_WORKLOADS]
ALL_WORKLOAD_NAMES = WORKLOAD_NAMES + REWRITE_NAMES
MEASUREMENTS = ["destage", "closed", "rate"]


def workload(name):
    for w in WORKLOADS + REWRITE_WORKLOADS:
        if w.name == name:
            return w
    raise KeyError(name)


def _region(job, span_bytes):
    """(offset, size) in bytes of a job's region in a span of
    ``span_bytes`` from the device's start, 1 MiB aligned."""
    start = int(span_bytes * job.region[0]) // MIB * MIB
    end = int(span_bytes * job.region[1]) // MIB * MIB
    return start, end - start


def job_blocks(wl, blocks):
    """{job name: 4 KiB I/Os} for the destage measurement: ``blocks`` writes
    in all, split by share; read jobs get ``wl.reads * blocks`` reads."""
    writers = [j for j in wl.jobs if "write" in j.rw]
    total = sum(j.share for j in writers)
    out, left = {}, blocks
    for i, j in enumerate(writers):
        n = left if i == len(writers) - 1 else int(round(blocks * j.share / total))
        out[j.name] = n
        left -= n
    for j in wl.jobs:
        if "read" in j.rw:
            out[j.name] = int(round(blocks * wl.reads * j.share))
    return out


def fio_job(wl, mode, origin_bytes, blocks=0, seed=1, cache_bytes=0,
            rate_iops=0):
    """fio job file text for workload ``wl`` in ``mode`` ("destage",
    "closed" or "rate") on a device of ``origin_bytes``.  The device comes
    from the environment (``DEV``); a closed or rate run adds
    ``--runtime``/``--time_based`` on the command line.  A workload with a
    hot set (``hot_x``) needs ``cache_bytes``; "rate" needs ``rate_iops``
    and a one-job workload."""
    if mode not in MEASUREMENTS:
        raise ValueError("mode must be one of %s" % ", ".join(MEASUREMENTS))
    if mode == "destage" and blocks <= 0:
        raise ValueError("destage needs blocks > 0")
    if mode == "rate" and (rate_iops <= 0 or len(wl.jobs) != 1):
        raise ValueError("rate needs rate_iops > 0 and a one-job workload")
    span = origin_bytes
    if wl.hot_x:
        if cache_bytes <= 0:
            raise ValueError("workload %s needs the cache size" % wl.name)
        span = min(origin_bytes, wl.hot_x * cache_bytes)
    lines = ["# %s (%s), generated by scripts/bench.py" % (wl.name, mode),
             "[global]", "filename=${DEV}", "ioengine=libaio", "direct=1",
             "randrepeat=0", "randseed=%d" % seed, "group_reporting=1", ""]
    counts = job_blocks(wl, blocks) if mode == "destage" else {}
    for j in wl.jobs:
        off, size = _region(j, span)
        lines += ["[%s]" % j.name, "rw=%s" % j.rw, "bs=%d" % j.bs,
                  "iodepth=%d" % j.iodepth, "offset=%d" % off,
                  "size=%d" % size]
        if j.dist:
            lines += ["random_distribution=%s" % j.dist, "norandommap=1"]
        elif mode != "destage" and j.rw.startswith("rand"):
            lines.append("norandommap=1")
        if mode == "destage":
            lines.append("io_size=%d" % (counts[j.name] * j.bs))
        if mode == "rate":
            lines.append("rate_iops=%d" % rate_iops)
        lines.append("")
    return "\n".join(lines)


def run_job(run, profile):
    """(name, text) of the fio job file of ``run`` (a :class:`Run`): runs
    that write the same share the file.  The cache disk alone (``ssd``)
    gets the workload over its cache-sized slice."""
    wl = workload(run.workload)
    device = profile["origin_bytes"]
    if run.measurement == "destage":
        name = "%s-destage-%d" % (wl.name, run.blocks)
    elif run.measurement == "closed":
        name = "%s-closed" % wl.name
    else:
        name = "%s-rate-%d" % (wl.name, run.rate_iops)
    if wl.hot_x:
        name += "-hot%dm" % (wl.hot_x * run.cache_mb)
    if run.system == "ssd":
        device = run.cache_mb * MIB
        name += "-dev%dm" % run.cache_mb
    return name, fio_job(wl, run.measurement, device, run.blocks,
                         cache_bytes=run.cache_mb * MIB,
                         rate_iops=run.rate_iops)


# --------------------------------------------------------------------------
# Profiles and the run plan

PROFILES = {
    # make bench-quick (a few minutes): modelled destage of uniform random
    # writes for every system; closed loop at one cache size for dm-wow's
    # three policies, dm-writecache and the raw disk; the rate-limited
    # closed loop at one cache size for wow, dm-writecache and the cache
    # disk alone
    "quick": {
        "origin_bytes": 8 << 30,
        "destage_cache_mb": 128,
        "destage_blocks": 2048,            # the headline dirty set (8 MiB)
        "destage_sweep_blocks": [2048],    # dirty-set sizes (4 KiB writes)
        "destage_workloads": ["uniform"],
        "closed_cache_mb": [16],           # uniform random: the size sweep
        "closed_more_cache_mb": [],        # uniform random: [(MiB,
                                           # [systems])], sizes for a few
        "closed_other_cache_mb": None,     # other workloads: not in quick
        "closed_systems": ["wow", "cscan", "lrw", "writecache", "raw"],
        "closed_window_s": 15,
        "closed_turnover_pct": 100,
        "closed_fill_iops": 1000,          # guess of the cache's fill rate
        "closed_min_fill_s": 8,
        "closed_floor_iops": 60,           # cap: turnover at this rate
        "closed_expect_iops": 80,          # for the time estimate only
        "rewrite_cache_mb": None,          # rewrites: not in quick
        "rewrite_systems": ["wow", "cscan", "lrw"],
        "rate_cache_mb": [16],             # rate-limited closed loop
        "rate_systems": ["wow", "writecache", "ssd"],
        # uniform random writes at this rate at time scale 1, divided by
        # the time scale (the disk is that much faster): 55 here is 550 at
        # --timescale 0.1, the rate for a 128 MiB cache; about 3/4
        # of what the raw disk does (rate_iops())
        "rate_iops": 55,
        "rate_window_s": 30,
        "timescale": 1.0,
    },
    # make bench (about 1 h 45 min): every workload over a sweep of
    # dirty-set sizes (modelled destage); closed loop over a sweep of cache
    # sizes for uniform random writes (128 MiB for dm-wow and dm-writecache
    # only), at one size for the other workloads and for the rewrites
    # (dm-wow's policies); the rate-limited closed loop
    "full": {
        "origin_bytes": 8 << 30,
        "destage_cache_mb": 128,
        "destage_blocks": 8192,
        "destage_sweep_blocks": [2048, 8192, 16384],
        "destage_workloads": WORKLOAD_NAMES,
        "closed_cache_mb": [8, 16, 32],
        "closed_more_cache_mb": [(128, ["wow", "writecache"])],
        "closed_other_cache_mb": 16,
        "closed_systems": None,            # all
        "closed_window_s": 20,
        "closed_turnover_pct": 100,
        "closed_fill_iops": 1000,
        "closed_min_fill_s": 8,
        "closed_floor_iops": 60,
        "closed_expect_iops": 80,
        "rewrite_cache_mb": 16,
        "rewrite_systems": ["wow", "cscan", "lrw"],
        "rate_cache_mb": [16],
        "rate_systems": ["wow", "writecache", "ssd"],
        "rate_iops": 55,
        "rate_window_s": 60,
        "timescale": 1.0,
    },
}


class Run(NamedTuple):
    id: str             # scenario name: [A-Za-z0-9_.+-]
    measurement: str    # destage | closed | rate
    system: str
    workload: str
    cache_mb: int
    runtime_s: int = 0  # closed, rate: fio's runtime cap
    window_s: int = 0   # closed, rate: the measured tail
    timeout_s: int = 0  # guest watchdog for the run
    blocks: int = 0     # destage: 4 KiB writes loaded (the dirty set)
    turnover_pct: int = 0   # closed, rate: origin writes, % of the dirty
                            # data, before the window (scripts/bench-guest)
    rate_iops: int = 0  # rate: fio's rate_iops


def rate_iops(profile):
    """The rate-limited runs' IOPS: the profile's ``rate_iops`` (at time
    scale 1) over its time scale."""
    return max(1, int(round(profile["rate_iops"] / profile["timescale"])))


def fill_seconds(cache_mb, profile, rate=0):
    """Seconds of closed-loop load to fill a cache of ``cache_mb`` MiB at
    the profile's fill rate (a rate-limited run: 90% of it at ``rate``)."""
    blocks = cache_mb * MIB // BLOCK
    if rate:
        return max(profile["closed_min_fill_s"], -(-blocks * 9 // (10 * rate)))
    return max(profile["closed_min_fill_s"],
               -(-blocks // profile["closed_fill_iops"]))


def closed_runtime_cap(cache_mb, profile, system_name, rate=0):
    """fio's runtime cap for a closed run: fill, then the turnover (the
    whole cache written back) at the profile's floor rate, then three
    windows to settle.  A rate-limited run (``rate`` IOPS) fills 90% of the
    cache at that rate and turns over at it (the origin cannot be written
    faster than the writes come), with its own window.  The guest stops a
    run sooner once it turned over and its last window looked steady
    (benchlib.sh closed_watch)."""
    window = profile["rate_window_s" if rate else "closed_window_s"]
    if not system(system_name).cache:
        return 3 * window + 20
    blocks = cache_mb * MIB // BLOCK
    if rate:
        turn = -(-blocks * 9 * profile["closed_turnover_pct"] //
                 (1000 * rate))
    else:
        turn = -(-blocks * profile["closed_turnover_pct"] //
                 (100 * profile["closed_floor_iops"]))
    return fill_seconds(cache_mb, profile, rate) + turn + 3 * window


def closed_expected_s(cache_mb, profile, system_name, rate=0):
    """Rough seconds a closed run takes (for the time estimate): fio starts
    (3 s), the cache fills to ~85% dirty at the fill rate, turns over at
    the profile's expected rate, then the window, and fio stops (3 s).  A
    rate-limited run fills to ~80% (dm-wow's low watermark) and turns over
    at its rate."""
    window = profile["rate_window_s" if rate else "closed_window_s"]
    if system_name == "dmcache" or not system(system_name).cache:
        return 3 + 5 + window + 3   # nothing stays dirty
    if rate:
        blocks = cache_mb * MIB // BLOCK * 0.8
        return (3 + blocks / rate + blocks * profile["closed_turnover_pct"] /
                100.0 / rate + window + 3)
    blocks = cache_mb * MIB // BLOCK * 0.85
    return (3 + blocks / profile["closed_fill_iops"] + blocks *
            profile["closed_turnover_pct"] / 100.0 /
            profile["closed_expect_iops"] + window + 3)


def destage_id(workload_name, blocks, system_name):
    mib = blocks * BLOCK / MIB
    size = "%dm" % mib if mib == int(mib) else "%db" % blocks
    return "d-%s-%s-%s" % (workload_name, size, system_name)


def _takes_part(name, measurement):
    only = system(name).only
    return not only or only == measurement


def plan(profile, systems=None, workloads=None, measurements=None):
    """The runs of ``profile`` (a PROFILES entry), in order: destage runs
    first (per workload and dirty-set size, every system), then closed
    runs (uniform over the size sweep, then the other workloads, then the
    rewrites; raw once per workload), then the rate-limited runs."""
    systems = list(systems or SYSTEM_NAMES)
    workloads = list(workloads or ALL_WORKLOAD_NAMES)
    measurements = list(measurements or MEASUREMENTS)
    for name in systems:
        system(name)
    for name in workloads:
        workload(name)
    for name in measurements:
        if name not in MEASUREMENTS:
            raise KeyError(name)
    runs = []
    if "destage" in measurements:
        mb = profile["destage_cache_mb"]
        sweep = profile.get("destage_sweep_blocks") or \
            [profile["destage_blocks"]]
        for w in profile["destage_workloads"]:
            if w not in workloads:
                continue
            for n in sweep:
                for s in systems:
                    if not _takes_part(s, "destage"):
                        continue
                    runs.append(Run(destage_id(w, n, s), "destage", s, w, mb,
                                    timeout_s=900, blocks=n))
    if "closed" in measurements:
        window = profile["closed_window_s"]
        # (workload, cache MiB, the systems or None for all)
        cases = [(HEADLINE_WORKLOAD, mb, None)
                 for mb in profile["closed_cache_mb"]]
        cases += [(HEADLINE_WORKLOAD, mb, only) for mb, only in
                  profile.get("closed_more_cache_mb") or []]
        other = profile.get("closed_other_cache_mb")
        if other:
            cases += [(w, other, None) for w in WORKLOAD_NAMES
                      if w != HEADLINE_WORKLOAD]
        mb = profile.get("rewrite_cache_mb")
        if mb:
            cases += [(w, mb, profile["rewrite_systems"])
                      for w in REWRITE_NAMES]
        only = profile.get("closed_systems")
        raw_done = set()
        for w, mb, some in cases:
            if w not in workloads:
                continue
            for s in systems:
                if only and s not in only or some and s not in some or \
                        not _takes_part(s, "closed"):
                    continue
                if s == "raw":
                    if w in raw_done:
                        continue
                    raw_done.add(w)
                rt = closed_runtime_cap(mb, profile, s)
                runs.append(Run("c-%s-%dm-%s" % (w, mb, s), "closed", s, w,
                                mb, rt, window, timeout_s=rt + 240,
                                turnover_pct=profile["closed_turnover_pct"]))
    if "rate" in measurements and HEADLINE_WORKLOAD in workloads:
        rate = rate_iops(profile)
        for mb in profile.get("rate_cache_mb") or []:
            for s in systems:
                if s not in profile["rate_systems"] or \
                        not _takes_part(s, "rate"):
                    continue
                rt = closed_runtime_cap(mb, profile, s, rate)
                runs.append(Run("r-%s-%dm-%s" % (HEADLINE_WORKLOAD, mb, s),
                                "rate", s, HEADLINE_WORKLOAD, mb, rt,
                                profile["rate_window_s"], timeout_s=rt + 240,
                                turnover_pct=profile["closed_turnover_pct"],
                                rate_iops=rate))
    for r in runs:
        assert re.fullmatch(r"[A-Za-z0-9_.+-]+", r.id), r.id
    return runs
