"""What the bench runs: systems, fio workloads, profiles and the run plan.

Systems are the caches compared over the same emulated disks (the guest side
is scripts/bench-guest/benchlib.sh, which knows each by name):

  wow, cscan, lrw  dm-wow with that destage policy
  writecache       dm-writecache, ssd mode, 4 KiB blocks
  dmcache          dm-cache writeback with smq, 32 KiB blocks (its minimum)
  bcache           bcache writeback, 4 KiB blocks
  raw              no cache: the origin itself (a reference)
  ssd              no origin: the cache disk alone, a dm-linear slice of
                   the cache size (a reference, rate-limited runs and the
                   flush cost only)
  linear           dm-linear over the origin (the reference of the CPU
                   cost only)

Workloads are fio jobs, rendered by :func:`fio_job` for the first three
measurements (:func:`cpu_job` and :func:`flush_job` for the others):

  destage  a fixed amount of I/O (``blocks`` 4 KiB writes in all) loads the
           dirty set, which is then destaged and traced (modelled HDD time)
  closed   time-based, iodepth 16 in all, on the live emulated HDD
           (sustained IOPS over the last window of the run, once the cache
           is full and has been written back once: see benchlib.sh's
           closed_watch and report.steady_state), with fio's completion
           latency histograms
  rate     the closed loop at a fixed rate (fio rate_iops), by the same
           rule: write latency below saturation; the rate is half each
           system's saturated rate, measured first (:func:`resolve_rate`)
  cpu      4 KiB random writes at iodepth 32 on RAM disks (brd), through
           dm-linear, dm-wow and dm-writecache, in alternated rounds; one
           fio job, or (the profile's cpu_jobs) two, each on its own CPU
           and its own half of the origin
  flush    4 KiB random writes at iodepth 32 on the file-backed disks,
           plain and every write FUA (fio sync=1)

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
    only: str = ""  # the measurements it takes part in, space-separated
                    # ("" = any)


SYSTEMS = [
    System("wow", "dm-wow (wow)", "dm-wow", True),
    System("cscan", "dm-wow (cscan)", "dm-wow", True),
    System("lrw", "dm-wow (lrw)", "dm-wow", True),
    System("writecache", "dm-writecache", "dm-writecache", True),
    System("dmcache", "dm-cache (smq)", "dm-cache", True),
    System("bcache", "bcache", "bcache", True),
    System("raw", "raw disk", "raw", False),
    System("ssd", "cache disk alone", "ssd", False, "rate flush"),
    System("linear", "dm-linear", "dm-linear", False, "cpu"),
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
    """One fio job section.  ``share`` is its part of all the I/O (reads
    and writes) in the destage measurement (normalised over the
    workload's jobs); ``iodepth`` its queue depth (the jobs of a workload
    add up to 16); ``read_pct`` the reads of a randrw job (fio
    rwmixread)."""
    name: str
    rw: str                   # randwrite, write, randread, read, randrw
    iodepth: int
    share: float = 1.0
    region: tuple = (0.0, 1.0)  # fraction of the origin: [start, end)
    dist: str = ""            # fio random_distribution, "" = uniform;
                              # "hot" = the workload's hot set
    bs: int = BLOCK
    read_pct: int = 0         # randrw: percent reads

    @property
    def write_frac(self):
        """The share of this job's I/Os that are writes."""
        if self.rw == "randrw":
            return (100 - self.read_pct) / 100.0
        return 1.0 if "write" in self.rw else 0.0


class Workload(NamedTuple):
    name: str
    label: str
    description: str
    jobs: tuple
    hot_mb: int = 0           # > 0: the hot set, the first hot_mb MiB of
                              # the origin, gets hot_pct% of the writes of
                              # a job with dist "hot" (the rest: uniform
                              # over the rest of its region)
    hot_pct: int = 0
    iolog: bool = False       # replayed from an iolog (spc1.py) that the
                              # host writes, not fio's own generators


def depths(shares, total=16):
    """Queue depths proportional to ``shares`` that add up to ``total``,
    each at least 1 (largest remainder)."""
    n = len(shares)
    if n > total:
        raise ValueError("more jobs than queue depth")
    s = float(sum(shares))
    want = [x / s * total for x in shares]
    out = [max(1, int(w)) for w in want]
    while sum(out) > total:
        i = max((i for i in range(n) if out[i] > 1),
                key=lambda i: out[i] - want[i])
        out[i] -= 1
    while sum(out) < total:
        i = max(range(n), key=lambda i: want[i] - out[i])
        out[i] += 1
    return out


# An SPC-1-like mix, built from the structure of the public SPC-1
# specification (Storage Performance Council, "SPC Benchmark 1 (SPC-1)
# Official Specification", its workload chapter; the WOW paper, Gill and
# Modha, FAST 2005, section 5, used the same benchmark): three application
# storage units (ASU-1 "data store" 45% of the capacity, ASU-2 "user
# store" 45%, ASU-3 "log" 10%) and eight I/O streams, each with its share
# of all I/Os, its read fraction and its pattern:
#
#   stream   share  reads  pattern
#   ASU-1 a  0.035   50%   random, uniform over ASU-1
#   ASU-1 b  0.281   50%   random with hierarchical reuse (a hot spot)
#   ASU-1 c  0.070  100%   sequential
#   ASU-1 d  0.210   50%   random with hierarchical reuse
#   ASU-2 a  0.018   30%   random, uniform over ASU-2
#   ASU-2 b  0.070   30%   random with hierarchical reuse
#   ASU-2 c  0.035  100%   sequential
#   ASU-3    0.281    0%   sequential writes (the log)
#
# so about 40% of the I/Os are reads and 40% sequential.  Our rendering
# for fio, in our own terms: one fio job a stream, over its ASU's region of
# the origin; the spec's hierarchical-reuse random walk becomes fio's
# zipf(1.2) over the ASU (hot blocks reused at every scale); every
# transfer is 4 KiB (the spec draws the sequential streams' sizes from a
# distribution); and the streams' shares set their queue depths (16 in
# all, at least 1 each), since the closed loop keeps every job's queue
# full instead of issuing each stream at its rate: the mix fio measures
# follows the depths and each stream's latency, and fio's JSON reports it.
SPC1_STREAMS = (
    # name, share, rw, read %, region, dist
    ("asu1-rand", 0.035, "randrw", 50, (0.0, 0.45), ""),
    ("asu1-reuse1", 0.281, "randrw", 50, (0.0, 0.45), "zipf:1.2"),
    ("asu1-seqread", 0.070, "read", 100, (0.0, 0.45), ""),
    ("asu1-reuse2", 0.210, "randrw", 50, (0.0, 0.45), "zipf:1.2"),
    ("asu2-rand", 0.018, "randrw", 30, (0.45, 0.9), ""),
    ("asu2-reuse", 0.070, "randrw", 30, (0.45, 0.9), "zipf:1.2"),
    ("asu2-seqread", 0.035, "read", 100, (0.45, 0.9), ""),
    ("asu3-log", 0.281, "write", 0, (0.9, 1.0), ""),
)
SPC1_JOBS = tuple(
    Job(name, rw, d, share, region, dist, read_pct=rp if rw == "randrw"
        else 0)
    for (name, share, rw, rp, region, dist), d in zip(
        SPC1_STREAMS, depths([x[1] for x in SPC1_STREAMS])))

# the hot-set workload: its hot set is fixed, the cache size is swept, so
# one sweep spans hot sets from 8x to 0.5x the cache (6 to 96 MiB: dm-wow
# needs at least 6 MiB with 1 MiB erase blocks, the superblock's erase
# block, the checkpoint area's and 4 segments, so a 32 MiB hot set could
# not reach 8x)
HOT_MB = 48
HOT_PCT = 90

WORKLOADS = [
    Workload("uniform", "uniform random",
             "4 KiB random writes, uniform over the whole origin",
             (Job("uniform", "randwrite", 16),)),
    Workload("zipf", "zipf(1.2)",
             "4 KiB random writes, zipf(1.2) over the whole origin: a few "
             "blocks rewritten very often",
             (Job("zipf", "randwrite", 16, dist="zipf:1.2"),)),
    Workload("spc1", "SPC-1-like mix",
             "SPC-1-like: three ASUs (45%, 45% and 10% of the origin), "
             "eight streams of random (uniform and hot-spot) and "
             "sequential I/O, about 60% writes (systems.SPC1_STREAMS)",
             SPC1_JOBS),
    Workload("seq", "sequential stream",
             "4 KiB sequential writes, one stream from 1/8 of the origin on",
             (Job("seq", "write", 16, region=(0.125, 1.0)),)),
    Workload("hot", "hot set (%d%% to %d MiB)" % (HOT_PCT, HOT_MB),
             "4 KiB random writes, %d%% of them uniform over a hot set (the "
             "first %d MiB of the origin), the rest uniform over the rest "
             "of the origin: blocks are rewritten while cached when the "
             "hot set is near the cache size" % (HOT_PCT, HOT_MB),
             (Job("hot", "randwrite", 16, dist="hot"),),
             hot_mb=HOT_MB, hot_pct=HOT_PCT),
    Workload("spc1h", "SPC-1-like (hierarchical reuse)",
             "SPC-1-like with the specification's hierarchical reuse random "
             "walk on the hot streams and its sequential transfer lengths "
             "(scripts/wowbench/spc1.py): the same three ASUs and eight "
             "streams, replayed from a fio iolog at iodepth 16",
             (), iolog=True),
]
WORKLOAD_NAMES = [w.name for w in WORKLOADS]
# the workloads of the single-disk profiles' "every workload" runs (the
# iolog one runs where a profile names it: the RAID cases)
CLASSIC_WORKLOADS = [w.name for w in WORKLOADS if not w.iolog]
HEADLINE_WORKLOAD = "uniform"
# the flush-cost measurement: plain writes and every write FUA
FLUSH_MODES = ["plain", "fua"]
MEASUREMENTS = ["destage", "closed", "rate", "cpu", "flush"]


def workload(name):
    for w in WORKLOADS:
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
    """{job name: 4 KiB I/Os} for the destage measurement: ``blocks``
    writes in all, each job's I/Os (reads and writes) in proportion to its
    share; the writes are split exactly when every writing job writes
    only."""
    total_w = sum(j.share * j.write_frac for j in wl.jobs)
    out = {}
    for j in wl.jobs:
        out[j.name] = int(round(blocks * j.share / total_w))
    pure = [j for j in wl.jobs if j.write_frac == 1.0]
    if len(pure) == len([j for j in wl.jobs if j.write_frac > 0]):
        out[pure[-1].name] += blocks - sum(out[j.name] for j in pure)
    return out


def _dist_lines(wl, j, span):
    """fio lines of job ``j``'s distribution over ``span`` bytes."""
    if j.dist == "hot":
        hot = wl.hot_mb * MIB
        if hot >= span:
            raise ValueError("hot set of %s does not fit its region" %
                             wl.name)
        return ["random_distribution=zoned_abs:%d/%dM:%d/%dM" % (
            wl.hot_pct, wl.hot_mb, 100 - wl.hot_pct,
            (span - hot) // MIB), "norandommap=1"]
    if j.dist:
        return ["random_distribution=%s" % j.dist, "norandommap=1"]
    return []


def fio_job(wl, mode, origin_bytes, blocks=0, seed=1, cache_bytes=0,
            rate_iops=0):
    """fio job file text for workload ``wl`` in ``mode`` ("destage",
    "closed" or "rate") on a device of ``origin_bytes``.  The device comes
    from the environment (``DEV``); a closed or rate run adds
    ``--runtime``/``--time_based`` on the command line.  "rate" needs
    ``rate_iops`` and a one-job workload.  (``cache_bytes`` is unused: the
    hot set has a fixed size.)"""
    if mode not in ("destage", "closed", "rate"):
        raise ValueError("mode must be destage, closed or rate")
    if mode == "destage" and blocks <= 0:
        raise ValueError("destage needs blocks > 0")
    if mode == "rate" and (rate_iops <= 0 or len(wl.jobs) != 1):
        raise ValueError("rate needs rate_iops > 0 and a one-job workload")
    span = origin_bytes
    lines = ["# %s (%s), generated by scripts/bench.py" % (wl.name, mode),
             "[global]", "filename=${DEV}", "ioengine=libaio", "direct=1",
             "randrepeat=0", "randseed=%d" % seed, "group_reporting=1", ""]
    counts = job_blocks(wl, blocks) if mode == "destage" else {}
    for j in wl.jobs:
        off, size = _region(j, span)
        lines += ["[%s]" % j.name, "rw=%s" % j.rw, "bs=%d" % j.bs,
                  "iodepth=%d" % j.iodepth, "offset=%d" % off,
                  "size=%d" % size]
        if j.rw == "randrw":
            lines.append("rwmixread=%d" % j.read_pct)
        dist = _dist_lines(wl, j, size)
        lines += dist
        if not dist and mode != "destage" and j.rw.startswith("rand"):
            lines.append("norandommap=1")
        if mode == "destage":
            lines.append("io_size=%d" % (counts[j.name] * j.bs))
        if mode == "rate":
            lines.append("rate_iops=%d" % rate_iops)
        lines.append("")
    return "\n".join(lines)


def cpu_job(device_bytes, runtime_s, ramp_s=2, iodepth=32, jobs=1):
    """The CPU-cost job: 4 KiB random writes at ``iodepth`` over the whole
    device (RAM disks), time based, the first ``ramp_s`` seconds not
    counted.  With ``jobs`` > 1, that many writers (fio numjobs, reported
    as one group), each at ``iodepth``, each pinned to its own CPU (CPUs
    0 to jobs - 1: cpus_allowed_policy=split) and each over its own
    1 MiB-aligned share of the device (offset_increment), so no two
    write the same blocks."""
    if jobs < 1:
        raise ValueError("jobs must be >= 1")
    size = device_bytes if jobs == 1 else device_bytes // jobs // MIB * MIB
    if size <= 0:
        raise ValueError("device too small for %d jobs" % jobs)
    head = "# cpu cost, generated by scripts/bench.py"
    if jobs > 1:
        head = "# cpu cost, %d jobs on %d CPUs, generated by " \
            "scripts/bench.py" % (jobs, jobs)
    lines = [
        head, "[global]",
        "filename=${DEV}", "ioengine=libaio", "direct=1", "randrepeat=0",
        "randseed=1", "group_reporting=1", "", "[cpu]", "rw=randwrite",
        "bs=%d" % BLOCK, "iodepth=%d" % iodepth, "offset=0",
        "size=%d" % size]
    if jobs > 1:
        lines += ["numjobs=%d" % jobs, "offset_increment=%d" % size,
                  "cpus_allowed=0-%d" % (jobs - 1),
                  "cpus_allowed_policy=split"]
    lines += ["norandommap=1", "time_based=1", "runtime=%d" % runtime_s,
              "ramp_time=%d" % ramp_s, ""]
    return "\n".join(lines)


def cpu_id(k, system_name, jobs=1):
    """The id of a CPU-cost run: p-cpu-<round>-<system> with one fio job
    (as every bench run before the two-job variant named them),
    p-cpu<jobs>j-<round>-<system> with more."""
    if jobs == 1:
        return "p-cpu-%d-%s" % (k, system_name)
    return "p-cpu%dj-%d-%s" % (jobs, k, system_name)


def flush_job(mode, device_bytes, writes, runtime_s, iodepth=32):
    """The flush-cost job: ``writes`` 4 KiB random writes (at most
    ``runtime_s`` seconds) at ``iodepth`` over the device; mode "fua"
    opens it O_SYNC (fio sync=1: with direct I/O every write is FUA),
    "plain" does not."""
    if mode not in FLUSH_MODES:
        raise ValueError("flush mode must be one of %s" %
                         ", ".join(FLUSH_MODES))
    return "\n".join([
        "# flush cost (%s), generated by scripts/bench.py" % mode,
        "[global]", "filename=${DEV}", "ioengine=libaio", "direct=1",
        "randrepeat=0", "randseed=1", "group_reporting=1", "",
        "[%s]" % mode, "rw=randwrite", "bs=%d" % BLOCK,
        "iodepth=%d" % iodepth, "offset=0", "size=%d" % device_bytes,
        "norandommap=1", "number_ios=%d" % writes,
        "runtime=%d" % runtime_s, "sync=%d" % (mode == "fua"), ""])


def run_job(run, profile):
    """(name, text) of the fio job file of ``run`` (a :class:`Run`): runs
    that write the same share the file.  The cache disk alone (``ssd``)
    gets the workload over its cache-sized slice."""
    if run.measurement == "cpu":
        mb = profile["cpu_origin_mb"]
        jobs = run.jobs
        return ("cpu%s-%dm-%ds" % ("%dj" % jobs if jobs > 1 else "", mb,
                                   profile["cpu_runtime_s"]),
                cpu_job(mb * MIB, profile["cpu_runtime_s"], jobs=jobs))
    if run.measurement == "flush":
        device = profile["origin_bytes"]
        name = "flush-%s-%d" % (run.workload, profile["flush_writes"])
        if run.system == "ssd":
            device = run.cache_mb * MIB
            name += "-dev%dm" % run.cache_mb
        return name, flush_job(run.workload, device, profile["flush_writes"],
                               profile["flush_runtime_s"])
    wl = workload(run.workload)
    if wl.iolog:
        if run.measurement != "closed":
            raise ValueError("%s: an iolog workload runs closed only" %
                             run.id)
        name = iolog_spec(run, profile)[0]
        if run.bsus:
            name += "-open"
        return name, iolog_job(name, open_loop=bool(run.bsus))
    device = run_span(run, profile)
    if run.measurement == "destage":
        name = "%s-destage-%d" % (wl.name, run.blocks)
    elif run.measurement == "closed":
        name = "%s-closed" % wl.name
        if device != profile["origin_bytes"]:
            name += "-%dm" % (device // MIB)
    else:
        name = "%s-rate-%d" % (wl.name, run.rate_iops)
    if run.system == "ssd":
        device = run.cache_mb * MIB
        name += "-dev%dm" % run.cache_mb
    return name, fio_job(wl, run.measurement, device, run.blocks,
                         rate_iops=run.rate_iops)


# --------------------------------------------------------------------------
# Profiles and the run plan

# What the RAID cases share (the WOW paper's setting, scaled to the VM):
# members of 8 GiB (RAID-5 4+1: a 32 GiB array, RAID-10 2+2: 16 GiB),
# each a live 10K rpm disk; SPC-1-like iologs of 16 BSUs, enough I/Os for
# a run's cap at 2,500 a second
RAID_COMMON = {
    "raid_member_bytes": 8 << 30,
    # dm-wow's log segment on these 8 to 32 MiB caches: 1 MiB (the
    # default) leaves the 8 MiB cache 5 segments, 4 of them the free
    # segments cleaning starts at, so it held 5% dirty (benchmarks.md,
    # issue 35 notes); the cache is a real one scaled down a thousand
    # times, so its segments are scaled down with it
    "raid_wow_erase_block_bytes": 256 << 10,
    "raid_disk": "10k",
    "iolog_iops": 2500,
    "spc1_seed": 1,
    "spc1_bsus": 16,
    "closed_expect_iops": 150,
}

PROFILES = {
    # make bench-quick: one point of each measurement.  Modelled destage of
    # uniform random writes for every system; the closed loop at one cache
    # size for dm-wow's three policies, dm-writecache and the raw disk
    # (uniform), the hot set for the three policies and dm-writecache,
    # the SPC-1-like mix for wow and dm-writecache; the rate-limited closed
    # loop (half each system's saturated rate) for wow and dm-writecache
    # with the cache disk alone at each of their rates; one round of the
    # CPU and flush costs
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
        # [(workload, [cache MiB], [systems] or None for all)]: sweeps of
        # the cache size (the raw disk runs once per workload)
        "closed_sweeps": [("hot", [16], ["wow", "cscan", "lrw",
                                         "writecache"]),
                          ("spc1", [16], ["wow", "writecache"])],
        "closed_systems": ["wow", "cscan", "lrw", "writecache", "raw"],
        "closed_window_s": 15,
        "closed_turnover_pct": 100,
        "closed_fill_iops": 1000,          # guess of the cache's fill rate
        "closed_min_fill_s": 8,
        "closed_floor_iops": 60,           # cap: turnover at this rate
        "closed_expect_iops": 80,          # for the time estimate only
        "rate_cache_mb": [16],             # rate-limited closed loop
        "rate_systems": ["wow", "writecache"],
        # "half": each system at half its saturated (sustained) IOPS of the
        # closed loop at the same cache size (uniform), measured first in
        # the same bench run, and the cache disk alone at each of those
        # rates; "fixed": every system at rate_iops
        "rate_basis": "half",
        # the fixed rate (and the fallback when a system's closed run is
        # missing): uniform random writes at this rate at time scale 1,
        # divided by the time scale: 55 here is 550 at --timescale 0.1;
        # about 3/4 of what the raw disk does (rate_iops())
        "rate_iops": 55,
        "rate_window_s": 30,
        "timescale": 1.0,
        # CPU cost: RAM disks (brd), dm-linear, dm-wow and dm-writecache,
        # runs alternated cpu_rounds times
        "cpu_systems": ["linear", "wow", "writecache"],
        "cpu_rounds": 1,
        # fio jobs of the CPU-cost runs: one writer (p-cpu-<round>-<sys>);
        # the full profile adds two on the two vCPUs (p-cpu2j-...)
        "cpu_jobs": [1],
        "cpu_runtime_s": 10,
        "cpu_origin_mb": 512,
        "cpu_cache_mb": 128,
        # flush cost: plain and every write FUA on the file-backed disks,
        # flush_writes writes (at most flush_runtime_s seconds) into a
        # flush_cache_mb cache, which they fill to a quarter at most
        "flush_systems": ["wow", "writecache", "ssd"],
        "flush_rounds": 1,
        "flush_cache_mb": 512,
        "flush_writes": 32768,
        "flush_runtime_s": 30,
        # the RAID profile's quick subset: the cache-sensitive SPC-1-like
        # point on RAID-5 for wow and dm-writecache, once (RAID_COMMON)
        "raid_cases": [("raid5", "spc1h", 354, [16], ["wow", "writecache"],
                        1)],
        **{k: v for k, v in RAID_COMMON.items() if k != "closed_expect_iops"},
    },
    # make bench: every workload over a sweep of dirty-set sizes
    # (modelled destage); closed loop over a sweep of cache sizes for
    # uniform random writes (128 MiB for dm-wow and dm-writecache only),
    # the hot set (6 to 96 MiB: 8x to 0.5x the cache) and the SPC-1-like
    # mix (8 to 32 MiB) for dm-wow's policies and dm-writecache, every
    # workload at 16 MiB for every system; the rate-limited closed loop;
    # the CPU and flush costs, three and two alternated rounds
    "full": {
        "origin_bytes": 8 << 30,
        "destage_cache_mb": 128,
        "destage_blocks": 8192,
        "destage_sweep_blocks": [2048, 8192, 16384],
        "destage_workloads": ["uniform", "zipf", "spc1", "seq"],
        "closed_cache_mb": [8, 16, 32],
        "closed_more_cache_mb": [(128, ["wow", "writecache"])],
        "closed_other_cache_mb": 16,
        "closed_sweeps": [("hot", [6, 12, 24, 48, 96],
                           ["wow", "cscan", "lrw", "writecache", "raw"]),
                          ("spc1", [8, 16, 32],
                           ["wow", "cscan", "lrw", "writecache", "raw"])],
        "closed_systems": None,            # all
        "closed_window_s": 20,
        "closed_turnover_pct": 100,
        "closed_fill_iops": 1000,
        "closed_min_fill_s": 8,
        "closed_floor_iops": 60,
        "closed_expect_iops": 80,
        "rate_cache_mb": [16],
        "rate_systems": ["wow", "writecache"],
        "rate_basis": "half",
        "rate_iops": 55,
        "rate_window_s": 60,
        "timescale": 1.0,
        "cpu_systems": ["linear", "wow", "writecache"],
        "cpu_rounds": 3,
        "cpu_jobs": [1, 2],
        "cpu_runtime_s": 15,
        "cpu_origin_mb": 512,
        "cpu_cache_mb": 128,
        "flush_systems": ["wow", "writecache", "ssd"],
        "flush_rounds": 2,
        "flush_cache_mb": 512,
        "flush_writes": 32768,
        "flush_runtime_s": 30,
    },
    # make bench-raid: the WOW paper's experiments on md arrays of live
    # 10K rpm disks (about two hours): the SPC-1-like mix (hierarchical
    # reuse, spc1.py) cache-insensitive (the whole 32 GiB RAID-5, an 8 MiB
    # cache: 0.024% of the footprint; the paper's was 0.011%) and
    # cache-sensitive (a 354 MiB footprint, a 16 MiB cache: 4.52%); uniform
    # random writes over the whole RAID-5 and RAID-10 at caches of 8, 16
    # and 32 MiB; wow, cscan, lrw and dm-writecache (RAID-10: the three
    # policies); the cache-sensitive point open loop at two offered
    # loads; each point three times, the repeats interleaved
    "raid": {
        "origin_bytes": 8 << 30,
        "destage_cache_mb": 128,
        "destage_blocks": 2048,
        "destage_sweep_blocks": [],
        "destage_workloads": [],
        "closed_cache_mb": [],
        "closed_more_cache_mb": [],
        "closed_other_cache_mb": None,
        "closed_sweeps": [],
        "closed_systems": None,
        "closed_window_s": 20,
        "closed_turnover_pct": 100,
        "closed_fill_iops": 1000,
        "closed_min_fill_s": 8,
        "closed_floor_iops": 60,
        "rate_cache_mb": [],
        "rate_systems": [],
        "rate_basis": "half",
        "rate_iops": 55,
        "rate_window_s": 30,
        "timescale": 1.0,
        "cpu_systems": [],
        "cpu_rounds": 0,
        "cpu_jobs": [1],
        "cpu_runtime_s": 10,
        "cpu_origin_mb": 512,
        "cpu_cache_mb": 128,
        "flush_systems": [],
        "flush_rounds": 0,
        "flush_cache_mb": 512,
        "flush_writes": 32768,
        "flush_runtime_s": 30,
        "raid_cases": [
            ("raid5", "spc1h", 0, [8], ["wow", "cscan", "lrw", "writecache"],
             3),
            ("raid5", "spc1h", 354, [16],
             ["wow", "cscan", "lrw", "writecache"], 3),
            ("raid5", "uniform", 0, [8, 16, 32],
             ["wow", "cscan", "lrw", "writecache"], 3),
            ("raid10", "uniform", 0, [8, 16, 32], ["wow", "cscan", "lrw"], 3),
        ],
        # response time against offered load, cache-sensitive: open loop
        # at 4 and 8 BSUs (200 and 400 I/Os a second; the closed loop,
        # 16 BSUs' log as fast as it goes, is the saturated point)
        "raid_ladders": [
            ("raid5", "spc1h", 354, 16, ["wow", "cscan", "lrw", "writecache"],
             [4, 8], 3),
        ],
        **RAID_COMMON,
    },
}


class Raid(NamedTuple):
    """An md array the guest builds over live emulated disks (the WOW
    paper's origins: md RAID-5 4+1 and RAID-10 2+2 of 10K rpm disks,
    64 KiB chunks)."""
    name: str
    level: int
    members: int
    data_disks: int
    chunk_kib: int
    layout: str


RAIDS = {
    "raid5": Raid("raid5", 5, 5, 4, 64, "left-symmetric"),
    "raid10": Raid("raid10", 10, 4, 2, 64, "n2"),
}
ORIGINS = ["hdd"] + list(RAIDS)
# the member servers a bench run starts when any run wants an array: as
# many as the largest array has (RAID-10 uses the first four)
RAID_SERVERS = max(r.members for r in RAIDS.values())
# md's data offset (mdadm --data-offset): the array is data_disks x
# (member - offset), rounded down to the chunk
MD_DATA_OFFSET_MB = 1


def raid_bytes(origin, profile):
    """The usable size of array ``origin`` (a RAIDS key) over members of
    the profile's raid_member_bytes, less a MiB a member of slack (md
    rounds to its chunk)."""
    r = RAIDS[origin]
    member = profile["raid_member_bytes"] - (MD_DATA_OFFSET_MB + 1) * MIB
    return r.data_disks * (member // MIB * MIB)


def origin_bytes(run, profile):
    """Bytes of ``run``'s origin: the live disk, or its array."""
    if run.origin in RAIDS:
        return raid_bytes(run.origin, profile)
    return profile["origin_bytes"]


def run_span(run, profile):
    """Bytes the workload of ``run`` addresses: its footprint (span_mb)
    or the whole origin."""
    full = origin_bytes(run, profile)
    if run.span_mb:
        if run.span_mb * MIB > full:
            raise ValueError("%s: footprint over the origin" % run.id)
        return run.span_mb * MIB
    return full


def iolog_spec(run, profile):
    """(name, footprint bytes, I/Os, seed, BSUs) of the iolog an iolog
    workload's closed run replays: enough I/Os for its runtime cap at the
    profile's iolog_iops (fio stops at the log's end)."""
    from .spc1 import IOPS_PER_BSU
    span = run_span(run, profile)
    seed = profile.get("spc1_seed", 1)
    if run.bsus:
        # open loop: the log's own rate, and a fifth more
        bsus = run.bsus
        count = int(run.runtime_s * IOPS_PER_BSU * bsus * 1.2)
    else:
        bsus = profile.get("spc1_bsus", 16)
        count = run.runtime_s * profile.get("iolog_iops", 2500)
    name = "%s-%dm-%dk-s%d-b%d" % (run.workload, span // MIB, count // 1000,
                                   seed, bsus)
    return name, span, count, seed, bsus


OPEN_IODEPTH = 64


def iolog_job(name, iodepth=16, open_loop=False):
    """fio job text that replays /tmp/NAME.iolog (the guest unpacks
    /wow/bench/jobs/NAME.iolog.gz there) closed loop: as fast as
    ``iodepth`` I/Os in flight allow, in the log's order; or open loop
    (``open_loop``): each I/O at its arrival time in the log, with up to
    OPEN_IODEPTH in flight (fio waits for a free slot past that)."""
    return "\n".join([
        "# %s (%s, iolog), generated by scripts/bench.py" % (
            name, "open loop" if open_loop else "closed"),
        "[global]", "ioengine=libaio", "direct=1", "group_reporting=1", "",
        "[%s]" % name.split("-")[0], "read_iolog=/tmp/%s.iolog" % name,
        "read_iolog_chunked=1"] +
        ([] if open_loop else ["replay_no_stall=1"]) +
        ["iodepth=%d" % (OPEN_IODEPTH if open_loop else iodepth), ""])


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
    rate_iops: int = 0  # rate: fio's rate_iops (0 until rate_of's run
                        # is measured)
    rate_of: str = ""   # rate: the closed run whose sustained IOPS, halved,
                        # is the rate (resolve_rate)
    round: int = 0      # cpu, flush: which of the alternated rounds;
                        # a RAID case's closed run: which of its repeats
    origin: str = "hdd"  # closed: "hdd" (the live disk), or an md array
                         # over live disks: "raid5", "raid10" (RAIDS)
    span_mb: int = 0    # the footprint the workload addresses from the
                        # origin's start (0: the whole origin)
    bsus: int = 0       # an iolog workload's BSUs: 0, the profile's, closed
                        # loop; > 0, open loop at 50 I/Os a second each
                        # (the log's arrival times honoured: the ladder)
    jobs: int = 1       # cpu: fio jobs, each pinned to its own CPU (an
                        # older run dir's runs have none: one)


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


def run_expected_s(r, profile):
    """Rough seconds a closed, rate, cpu or flush run takes (the time
    estimate; measured as described with each).  A rate-limited run whose
    rate is not known yet is estimated at half the expected closed-loop
    rate."""
    if r.measurement == "cpu":
        # brd loaded, the device made, fio (2 s ramp), removed
        return 10 + r.runtime_s + 2
    if r.measurement == "flush":
        # the device made (dm-writecache writes its metadata), fio until
        # its writes are done or its runtime is up: guessed at 3,000
        # writes/s with every write FUA, 10,000 without
        rate = 3000.0 if r.workload == "fua" else 10000.0
        return 10 + min(r.runtime_s, profile["flush_writes"] / rate)
    rate = r.rate_iops
    if r.measurement == "rate" and not rate:
        rate = profile["closed_expect_iops"] / 2.0
    return 8 + closed_expected_s(r.cache_mb, profile, r.system,
                                 rate if r.measurement == "rate" else 0)


def destage_id(workload_name, blocks, system_name):
    mib = blocks * BLOCK / MIB
    size = "%dm" % mib if mib == int(mib) else "%db" % blocks
    return "d-%s-%s-%s" % (workload_name, size, system_name)


def _takes_part(name, measurement):
    only = system(name).only
    return not only or measurement in only.split()


def closed_id(workload_name, cache_mb, system_name):
    return "c-%s-%dm-%s" % (workload_name, cache_mb, system_name)


def plan(profile, systems=None, workloads=None, measurements=None):
    """The runs of ``profile`` (a PROFILES entry), in order: destage runs
    first (per workload and dirty-set size, every system), then closed
    runs (uniform over the size sweep, then the other workloads, then the
    profile's other sweeps; raw once per workload), the CPU and flush
    costs (rounds of every system in turn), then the rate-limited runs
    (which need the closed runs' figures: :func:`resolve_rate`)."""
    systems = list(systems or SYSTEM_NAMES)
    workloads = list(workloads or WORKLOAD_NAMES)
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
            cases += [(w, other, None) for w in CLASSIC_WORKLOADS
                      if w != HEADLINE_WORKLOAD]
        for w, sizes, some in profile.get("closed_sweeps") or []:
            cases += [(w, mb, some) for mb in sizes]
        only = profile.get("closed_systems")
        raw_done, seen = set(), set()
        for w, mb, some in cases:
            if w not in workloads:
                continue
            for s in systems:
                if only and s not in only and not some or \
                        some and s not in some or \
                        not _takes_part(s, "closed"):
                    continue
                if s == "raw":
                    if w in raw_done:
                        continue
                    raw_done.add(w)
                rid = closed_id(w, mb, s)
                if rid in seen:
                    continue
                seen.add(rid)
                rt = closed_runtime_cap(mb, profile, s)
                runs.append(Run(rid, "closed", s, w, mb, rt, window,
                                timeout_s=rt + 240,
                                turnover_pct=profile["closed_turnover_pct"]))
    if "closed" in measurements:
        runs += raid_runs(profile, systems, workloads)
    if "cpu" in measurements and HEADLINE_WORKLOAD in workloads:
        sel = [s for s in profile.get("cpu_systems") or []
               if s in systems and _takes_part(s, "cpu")]
        # each round: the one-job runs of every system, then the two-job
        # ones (the profile's cpu_jobs), so a slow spell of the machine
        # falls on all of them
        for k in range(1, profile.get("cpu_rounds", 0) + 1):
            for j in profile.get("cpu_jobs") or [1]:
                for s in sel:
                    runs.append(Run(cpu_id(k, s, j), "cpu", s,
                                    HEADLINE_WORKLOAD,
                                    profile["cpu_cache_mb"],
                                    profile["cpu_runtime_s"],
                                    timeout_s=profile["cpu_runtime_s"] + 300,
                                    round=k, jobs=j))
    if "flush" in measurements and HEADLINE_WORKLOAD in workloads:
        sel = [s for s in profile.get("flush_systems") or []
               if s in systems and _takes_part(s, "flush")]
        for k in range(1, profile.get("flush_rounds", 0) + 1):
            for s in sel:
                for m in FLUSH_MODES:
                    runs.append(Run("f-%s-%d-%s" % (m, k, s), "flush", s, m,
                                    profile["flush_cache_mb"],
                                    profile["flush_runtime_s"],
                                    timeout_s=profile["flush_runtime_s"] +
                                    300, round=k))
    if "rate" in measurements and HEADLINE_WORKLOAD in workloads:
        runs += rate_runs(profile, systems)
    for r in runs:
        assert re.fullmatch(r"[A-Za-z0-9_.+-]+", r.id), r.id
    return runs


def raid_id(workload_name, origin, span_mb, cache_mb, system_name, k):
    """c-<workload>-<r5|r10><f|pN>-<cache>m-<system>-<repeat>: f the whole
    array (full backend), pN a footprint of N MiB (partial backend)."""
    return "c-%s-%s%s-%dm-%s-%d" % (
        workload_name, origin.replace("raid", "r"),
        "p%d" % span_mb if span_mb else "f", cache_mb, system_name, k)


def raid_runs(profile, systems, workloads):
    """The closed runs of the profile's raid_cases, [(origin, workload,
    footprint MiB or 0, [cache MiB], [systems], repeats)]: repeat k of
    every case before repeat k + 1, so a slow spell of the machine falls
    on all of them."""
    cases = profile.get("raid_cases") or []
    ladders = profile.get("raid_ladders") or []
    window = profile["closed_window_s"]
    out = []
    for k in range(1, max([c[5] for c in cases] + [c[6] for c in ladders] +
                          [0]) + 1):
        for origin, w, span_mb, sizes, some, reps in cases:
            if k > reps or w not in workloads:
                continue
            if origin not in RAIDS:
                raise KeyError(origin)
            for mb in sizes:
                for s in systems:
                    if s not in some or not _takes_part(s, "closed"):
                        continue
                    rt = closed_runtime_cap(mb, profile, s)
                    out.append(Run(
                        raid_id(w, origin, span_mb, mb, s, k), "closed", s,
                        w, mb, rt, window, timeout_s=rt + 300,
                        turnover_pct=profile["closed_turnover_pct"],
                        round=k, origin=origin, span_mb=span_mb))
        # the open-loop ladders: [(origin, workload, footprint MiB, cache
        # MiB, [systems], [BSUs], repeats)]
        for origin, w, span_mb, mb, some, rungs, reps in ladders:
            if k > reps or w not in workloads:
                continue
            if origin not in RAIDS or not workload(w).iolog:
                raise KeyError("ladder %s %s" % (origin, w))
            for b in rungs:
                for s in systems:
                    if s not in some or not _takes_part(s, "closed"):
                        continue
                    rt = closed_runtime_cap(mb, profile, s)
                    out.append(Run(
                        "o" + raid_id(w, origin, span_mb, mb, s, k)[1:]
                        .replace("-%s-%d" % (s, k), "-%s-b%d-%d" % (s, b, k)),
                        "closed", s, w, mb, rt, window, timeout_s=rt + 300,
                        turnover_pct=profile["closed_turnover_pct"],
                        round=k, origin=origin, span_mb=span_mb, bsus=b))
    return out


def rate_runs(profile, systems):
    """The rate-limited runs.  With rate_basis "half" each system of
    rate_systems runs at half the sustained IOPS of its closed run at the
    same cache size (``rate_of``; the rate is set once that run is
    measured, :func:`resolve_rate`), and the cache disk alone (``ssd``)
    at each of those rates; with "fixed" all run at rate_iops()."""
    half = profile.get("rate_basis", "fixed") == "half"
    fixed = 0 if half else rate_iops(profile)
    out = []
    w = HEADLINE_WORKLOAD
    for mb in profile.get("rate_cache_mb") or []:
        peers = [s for s in profile["rate_systems"] if s in systems and
                 _takes_part(s, "rate")]
        for s in peers:
            out.append(_rate_run("r-%s-%dm-%s" % (w, mb, s), s, mb, profile,
                                 fixed, closed_id(w, mb, s) if half else ""))
        if "ssd" in systems:
            if half:
                for s in peers:
                    out.append(_rate_run("r-%s-%dm-ssd-%s" % (w, mb, s),
                                         "ssd", mb, profile, 0,
                                         closed_id(w, mb, s)))
            else:
                out.append(_rate_run("r-%s-%dm-ssd" % (w, mb), "ssd", mb,
                                     profile, fixed, ""))
    return out


def _rate_run(rid, s, mb, profile, rate, rate_of):
    # an unresolved rate is planned (runtime cap, timeout) at the
    # fallback rate; resolve_rate plans it again at its own
    rt = closed_runtime_cap(mb, profile, s, rate or rate_iops(profile))
    return Run(rid, "rate", s, HEADLINE_WORKLOAD, mb, rt,
               profile["rate_window_s"], timeout_s=rt + 240,
               turnover_pct=profile["closed_turnover_pct"], rate_iops=rate,
               rate_of=rate_of)


def resolve_rate(run, saturated_iops, profile):
    """``run`` (rate-limited, ``rate_of`` set) at half ``saturated_iops``
    (the sustained IOPS of its ``rate_of`` run), or at the profile's fixed
    rate when that is None: (run, basis) with its runtime cap and timeout
    planned for the rate; basis says which."""
    if saturated_iops:
        rate, basis = max(1, int(round(saturated_iops / 2.0))), "half"
    else:
        rate, basis = rate_iops(profile), "fixed (no saturated figure)"
    rt = closed_runtime_cap(run.cache_mb, profile, run.system, rate)
    return run._replace(rate_iops=rate, runtime_s=rt,
                        timeout_s=rt + 240), basis
