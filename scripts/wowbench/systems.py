"""What the bench runs: systems, fio workloads, profiles and the run plan.

Systems are the caches compared over the same emulated disks (the guest side
is scripts/bench-guest/benchlib.sh, which knows each by name):

  wow, cscan, lrw  dm-wow with that destage policy
  writecache       dm-writecache, ssd mode, 4 KiB blocks
  dmcache          dm-cache writeback with smq, 32 KiB blocks (its minimum)
  bcache           bcache writeback, 4 KiB blocks
  raw              no cache: the origin itself (a reference)

Workloads are fio jobs, rendered by :func:`fio_job` for the two
measurements:

  destage  a fixed amount of I/O (``blocks`` 4 KiB writes in all) loads the
           dirty set, which is then destaged and traced (modelled HDD time)
  closed   time-based, iodepth 16 in all, on the live emulated HDD
           (sustained IOPS over the last window of the run, once the cache
           is full and has been written back once: see benchlib.sh's
           closed_watch and report.steady_state)

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
    cache: bool     # False for raw


SYSTEMS = [
    System("wow", "dm-wow (wow)", "dm-wow", True),
    System("cscan", "dm-wow (cscan)", "dm-wow", True),
    System("lrw", "dm-wow (lrw)", "dm-wow", True),
    System("writecache", "dm-writecache", "dm-writecache", True),
    System("dmcache", "dm-cache (smq)", "dm-cache", True),
    System("bcache", "bcache", "bcache", True),
    System("raw", "raw disk", "raw", False),
]
SYSTEM_NAMES = [s.name for s in SYSTEMS]
CACHE_SYSTEMS = [s.name for s in SYSTEMS if s.cache]
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


def workload(name):
    for w in WORKLOADS:
        if w.name == name:
            return w
    raise KeyError(name)


def _region(job, origin_bytes):
    """(offset, size) in bytes of a job's region, 1 MiB aligned."""
    start = int(origin_bytes * job.region[0]) // MIB * MIB
    end = int(origin_bytes * job.region[1]) // MIB * MIB
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


def fio_job(wl, mode, origin_bytes, blocks=0, seed=1):
    """fio job file text for workload ``wl`` in ``mode`` ("destage" or
    "closed").  The device comes from the environment (``DEV``); a closed
    run adds ``--runtime``/``--time_based`` on the command line."""
    if mode not in ("destage", "closed"):
        raise ValueError("mode must be destage or closed")
    if mode == "destage" and blocks <= 0:
        raise ValueError("destage needs blocks > 0")
    lines = ["# %s (%s), generated by scripts/bench.py" % (wl.name, mode),
             "[global]", "filename=${DEV}", "ioengine=libaio", "direct=1",
             "randrepeat=0", "randseed=%d" % seed, "group_reporting=1", ""]
    counts = job_blocks(wl, blocks) if mode == "destage" else {}
    for j in wl.jobs:
        off, size = _region(j, origin_bytes)
        lines += ["[%s]" % j.name, "rw=%s" % j.rw, "bs=%d" % j.bs,
                  "iodepth=%d" % j.iodepth, "offset=%d" % off,
                  "size=%d" % size]
        if j.dist:
            lines += ["random_distribution=%s" % j.dist, "norandommap=1"]
        elif mode == "closed" and j.rw.startswith("rand"):
            lines.append("norandommap=1")
        if mode == "destage":
            lines.append("io_size=%d" % (counts[j.name] * j.bs))
        lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Profiles and the run plan

PROFILES = {
    # make bench-quick (a few minutes): modelled destage of uniform random
    # writes for every system; closed loop at one cache size for dm-wow's
    # three policies, dm-writecache and the raw disk
    "quick": {
        "origin_bytes": 8 << 30,
        "destage_cache_mb": 128,
        "destage_blocks": 2048,            # the headline dirty set (8 MiB)
        "destage_sweep_blocks": [2048],    # dirty-set sizes (4 KiB writes)
        "destage_workloads": ["uniform"],
        "closed_cache_mb": [16],           # uniform random: the size sweep
        "closed_other_cache_mb": None,     # other workloads: not in quick
        "closed_systems": ["wow", "cscan", "lrw", "writecache", "raw"],
        "closed_window_s": 15,
        "closed_turnover_pct": 100,
        "closed_fill_iops": 1000,          # guess of the cache's fill rate
        "closed_min_fill_s": 8,
        "closed_floor_iops": 60,           # cap: turnover at this rate
        "closed_expect_iops": 80,          # for the time estimate only
        "timescale": 1.0,
    },
    # make bench (about an hour): every workload over a sweep of dirty-set
    # sizes (modelled destage); closed loop over a sweep of cache sizes for
    # uniform random writes and at one size for the other workloads
    "full": {
        "origin_bytes": 8 << 30,
        "destage_cache_mb": 128,
        "destage_blocks": 8192,
        "destage_sweep_blocks": [2048, 8192, 16384],
        "destage_workloads": WORKLOAD_NAMES,
        "closed_cache_mb": [8, 16, 32],
        "closed_other_cache_mb": 16,
        "closed_systems": None,            # all
        "closed_window_s": 20,
        "closed_turnover_pct": 100,
        "closed_fill_iops": 1000,
        "closed_min_fill_s": 8,
        "closed_floor_iops": 60,
        "closed_expect_iops": 80,
        "timescale": 1.0,
    },
}


class Run(NamedTuple):
    id: str             # scenario name: [A-Za-z0-9_.+-]
    measurement: str    # destage | closed
    system: str
    workload: str
    cache_mb: int
    runtime_s: int = 0  # closed: fio's runtime cap
    window_s: int = 0   # closed: the measured tail
    timeout_s: int = 0  # guest watchdog for the run
    blocks: int = 0     # destage: 4 KiB writes loaded (the dirty set)
    turnover_pct: int = 0   # closed: origin writes, % of the dirty data,
                            # before the window (scripts/bench-guest)


def fill_seconds(cache_mb, profile):
    """Seconds of closed-loop load to fill a cache of ``cache_mb`` MiB at
    the profile's fill rate."""
    blocks = cache_mb * MIB // BLOCK
    return max(profile["closed_min_fill_s"],
               -(-blocks // profile["closed_fill_iops"]))


def closed_runtime_cap(cache_mb, profile, system_name):
    """fio's runtime cap for a closed run: fill, then the turnover (the
    whole cache written back) at the profile's floor rate, then three
    windows to settle.  The guest stops a run sooner once it turned over
    and its last window looked steady (benchlib.sh closed_watch)."""
    window = profile["closed_window_s"]
    if system_name == "raw":
        return 3 * window + 20
    blocks = cache_mb * MIB // BLOCK
    turn = -(-blocks * profile["closed_turnover_pct"] //
             (100 * profile["closed_floor_iops"]))
    return fill_seconds(cache_mb, profile) + turn + 3 * window


def closed_expected_s(cache_mb, profile, system_name):
    """Rough seconds a closed run takes (for the time estimate): fio starts
    (3 s), the cache fills to ~85% dirty at the fill rate, turns over at
    the profile's expected rate, then the window, and fio stops (3 s)."""
    window = profile["closed_window_s"]
    if system_name in ("raw", "dmcache"):  # nothing stays dirty
        return 3 + 5 + window + 3
    blocks = cache_mb * MIB // BLOCK * 0.85
    return (3 + blocks / profile["closed_fill_iops"] + blocks *
            profile["closed_turnover_pct"] / 100.0 /
            profile["closed_expect_iops"] + window + 3)


def destage_id(workload_name, blocks, system_name):
    mib = blocks * BLOCK / MIB
    size = "%dm" % mib if mib == int(mib) else "%db" % blocks
    return "d-%s-%s-%s" % (workload_name, size, system_name)


def plan(profile, systems=None, workloads=None, measurements=None):
    """The runs of ``profile`` (a PROFILES entry), in order: destage runs
    first (per workload and dirty-set size, every system), then closed
    runs (uniform over the size sweep, then the other workloads; raw once
    per workload)."""
    systems = list(systems or SYSTEM_NAMES)
    workloads = list(workloads or WORKLOAD_NAMES)
    measurements = list(measurements or ["destage", "closed"])
    for name in systems:
        system(name)
    for name in workloads:
        workload(name)
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
                    runs.append(Run(destage_id(w, n, s), "destage", s, w, mb,
                                    timeout_s=900, blocks=n))
    if "closed" in measurements:
        window = profile["closed_window_s"]
        cases = [(HEADLINE_WORKLOAD, mb) for mb in profile["closed_cache_mb"]]
        other = profile.get("closed_other_cache_mb")
        if other:
            cases += [(w, other) for w in WORKLOAD_NAMES
                      if w != HEADLINE_WORKLOAD]
        only = profile.get("closed_systems")
        raw_done = set()
        for w, mb in cases:
            if w not in workloads:
                continue
            for s in systems:
                if only and s not in only:
                    continue
                if s == "raw":
                    if w in raw_done:
                        continue
                    raw_done.add(w)
                rt = closed_runtime_cap(mb, profile, s)
                runs.append(Run("c-%s-%dm-%s" % (w, mb, s), "closed", s, w,
                                mb, rt, window, timeout_s=rt + 240,
                                turnover_pct=profile["closed_turnover_pct"]))
    for r in runs:
        assert re.fullmatch(r"[A-Za-z0-9_.+-]+", r.id), r.id
    return runs
